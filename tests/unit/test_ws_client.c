/* test_ws_client.c - fb_ws_client against a real fabricbusd (started and
 * killed by pid from tests/lib/fb_test_broker.h), with events published by
 * the real `fabricbus publish`. The owner's loop is this thread's libevent
 * base; each test checks the exact EventIds it got, in order, and that every
 * callback ran on this thread. */
#include "fb_event_scan.h"
#include "fb_http.h"
#include "fb_log.h"
#include "fb_redfish.h"
#include "fb_test.h"
#include "fb_test_broker.h"
#include "fb_ws_client.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IDS 100000

struct sink {
	struct event_base *base;
	pthread_t owner;
	int wrong_thread, bad_doc;
	uint64_t *ids;           /* EventIds in delivery order */
	size_t n, notices, no_id;
	int ups, downs;
	char why[256];           /* the last on_state text */
	int slow_us;
	size_t stop_at;          /* fb_wsc_stop(c) from on_message after this many */
	struct fb_wsc *c;
};

static void on_message(void *arg, const char *json, size_t len, uint64_t id)
{
	struct sink *s = arg;
	char key[40];
	if (!pthread_equal(pthread_self(), s->owner))
		s->wrong_thread++;
	if (len < 2 || json[0] != '{' || json[len - 1] != '}')
		s->bad_doc++;
	if (!id) {
		if (memmem(json, len, "Fabricbus.1.0.SubscriberEventsMissed", 36))
			s->notices++;
		else
			s->no_id++;
	} else {
		snprintf(key, sizeof(key), "\"%llu\"", (unsigned long long)id);
		if (!memmem(json, len, "\"Id\"", 4) || !memmem(json, len, key, strlen(key)))
			s->bad_doc++;
		if (s->n < MAX_IDS)
			s->ids[s->n] = id;
		s->n++;
	}
	if (s->slow_us)
		usleep((useconds_t)s->slow_us);
	if (s->stop_at && s->n == s->stop_at) {
		fb_wsc_stop(s->c);
		s->c = NULL;
	}
}

static void on_state(void *arg, int connected, const char *why)
{
	struct sink *s = arg;
	if (!pthread_equal(pthread_self(), s->owner))
		s->wrong_thread++;
	if (connected)
		s->ups++;
	else
		s->downs++;
	snprintf(s->why, sizeof(s->why), "%s", why);
}

static void sink_init(struct sink *s)
{
	memset(s, 0, sizeof(*s));
	s->base = event_base_new();
	s->owner = pthread_self();
	s->ids = calloc(MAX_IDS, sizeof(*s->ids));
}

static void sink_free(struct sink *s)
{
	fb_wsc_stop(s->c);
	s->c = NULL;
	if (s->base)
		event_base_free(s->base);
	free(s->ids);
}

static struct fb_wsc_opts opts_for(struct sink *s, const struct fbt_broker *b)
{
	struct fb_wsc_opts o = { .host = "127.0.0.1", .port = b->http_port, .base = s->base,
				 .on_message = on_message, .on_state = on_state, .arg = s,
				 .reconnect_min_ms = 50, .reconnect_max_ms = 500 };
	return o;
}

static int got(const struct sink *s, size_t n) { return s->n >= n; }
static int connected(const struct sink *s, size_t n) { return s->ups >= (int)n; }
static int disconnected(const struct sink *s, size_t n) { return s->downs >= (int)n; }

/* Run the owner's loop until pred(s, arg) holds or timeout_ms passes. */
static int run_until(struct sink *s, int (*pred)(const struct sink *, size_t), size_t arg,
		     int timeout_ms)
{
	const struct timeval tick = { 0, 10000 };
	for (int64_t end = fb_time_ms() + timeout_ms; !pred(s, arg);) {
		if (fb_time_ms() >= end)
			return 0;
		event_base_loopexit(s->base, &tick);
		event_base_dispatch(s->base);
	}
	return 1;
}

/* Let the loop run a while longer: nothing extra may arrive. */
static void settle(struct sink *s, int ms)
{
	run_until(s, got, (size_t)-1, ms);
}

/* Exactly first..last, each once, in order. */
static int ids_exactly(const struct sink *s, uint64_t first, uint64_t last)
{
	if (s->n != last - first + 1 || s->n > MAX_IDS) {
		fprintf(stderr, "  got %zu events, want %llu (%llu..%llu)\n", s->n,
			(unsigned long long)(last - first + 1), (unsigned long long)first,
			(unsigned long long)last);
		return 0;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->ids[i] != first + i) {
			fprintf(stderr, "  event %zu has EventId %llu, want %llu\n", i,
				(unsigned long long)s->ids[i], (unsigned long long)(first + i));
			return 0;
		}
	return 1;
}

/* Without running the owner's loop: wait until the client has stopped
 * reading at max_queued. */
static int wait_paused(struct sink *s, int timeout_ms)
{
	struct fb_wsc_stats st;
	for (int64_t end = fb_time_ms() + timeout_ms; fb_time_ms() < end; usleep(10000)) {
		fb_wsc_get_stats(s->c, &st);
		if (st.rx_pauses)
			return 1;
	}
	return 0;
}

/* websocket.dropped_slow from the broker's /status (-1 if unreadable). */
static long long dropped_slow(const struct fbt_broker *b)
{
	struct fb_http_resp r;
	char err[256];
	long long v = -1;
	if (fb_http_request("127.0.0.1", b->http_port, "GET", "/status", NULL, NULL, 0, 5000, 1u << 22,
			    &r, err, sizeof(err)) == 0) {
		const char *k = strstr((const char *)r.body.data, "\"dropped_slow\":");
		if (r.status == 200 && k)
			v = strtoll(k + 15, NULL, 10);
		fb_http_resp_free(&r);
	}
	return v;
}

static int broker_up(struct fbt_broker *b, const char *const *extra)
{
	if (fbt_broker_init(b))
		return 0;
	for (int i = 0; extra && extra[i] && i < 7; i++)
		b->extra[i] = extra[i];
	return fbt_broker_start(b) == 0;
}

/* Stop cleanly and remove its directory; a non-zero exit (a sanitizer
 * report) keeps the directory for the log. */
static int broker_down(struct fbt_broker *b)
{
	int st = fbt_broker_stop(b);
	if (st)
		fprintf(stderr, "  fabricbusd exited %d; see %s/fabricbusd.log\n", st, b->dir);
	else
		fbt_broker_cleanup(b);
	return st;
}

/* Each test's start: an empty sink and a broker started with extra settings. */
static int case_up(struct sink *s, struct fbt_broker *b, const char *const *extra)
{
	sink_init(s);
	return broker_up(b, extra);
}

/* Each test's end: the client stopped, the broker stopped clean. */
static void case_down(struct sink *s, struct fbt_broker *b)
{
	sink_free(s);
	CHECK_EQ(broker_down(b), 0);
}

/* ---- tests -------------------------------------------------------------- */

/* Start the client with o, as s's, and wait until it is connected. */
static int start_connected(struct sink *s, const struct fb_wsc_opts *o)
{
	char err[256];
	s->c = fb_wsc_start(o, err, sizeof(err));
	if (!s->c) {
		fprintf(stderr, "  fb_wsc_start: %s\n", err);
		return 0;
	}
	return run_until(s, connected, 1, 10000);
}

/* A broker with extra settings, and a connected client that stops reading
 * past max_queued undelivered messages: the back-pressure tests' start. */
static int case_up_bounded(struct sink *s, struct fbt_broker *b, const char *const *extra,
			   size_t max_queued)
{
	if (!case_up(s, b, extra))
		return 0;
	struct fb_wsc_opts o = opts_for(s, b);
	o.max_queued = max_queued;
	return start_connected(s, &o);
}

static void wsc_delivers_all_events_in_order_on_the_loop_thread(void)
{
	struct fbt_broker b;
	struct sink s;
	struct fb_wsc_stats st;
	CHECK(case_up(&s, &b, NULL));
	CHECK_EQ(fbt_publish(&b, "wsc-order", 1000), 0); /* before: replayed from the journal */
	struct fb_wsc_opts o = opts_for(&s, &b);
	CHECK(start_connected(&s, &o));
	CHECK_EQ(fbt_publish(&b, "wsc-order", 1000), 0); /* after: live */
	CHECK(run_until(&s, got, 2000, 30000));
	settle(&s, 300);
	CHECK(ids_exactly(&s, 1, 2000));
	CHECK_EQ(s.wrong_thread, 0);
	CHECK_EQ(s.bad_doc, 0);
	CHECK_EQ(s.no_id, 0);
	CHECK_EQ(fb_wsc_last_id(s.c), 2000);
	fb_wsc_get_stats(s.c, &st);
	CHECK_EQ(st.delivered, 2000);
	CHECK_EQ(st.duplicates, 0);
	CHECK_EQ(st.connects, 1);
	CHECK_EQ(st.queued, 0);
	CHECK_EQ(st.connected, 1);
	CHECK_EQ(s.ups, 1);
	CHECK(strstr(s.why, "connected with since=0"));
	case_down(&s, &b);
}

static void wsc_from_now_gets_only_events_published_after_start(void)
{
	struct fbt_broker b;
	struct sink s;
	CHECK(case_up(&s, &b, NULL));
	CHECK_EQ(fbt_publish(&b, "wsc-now", 300), 0);
	struct fb_wsc_opts o = opts_for(&s, &b);
	o.from_now = 1;
	CHECK(start_connected(&s, &o));
	CHECK(strstr(s.why, "since=300")); /* the head, read from /status */
	CHECK_EQ(fbt_publish(&b, "wsc-now", 200), 0);
	CHECK(run_until(&s, got, 200, 30000));
	settle(&s, 300);
	CHECK(ids_exactly(&s, 301, 500));
	CHECK_EQ(s.wrong_thread, 0);
	case_down(&s, &b);
}

static void wsc_since_k_gets_exactly_k_plus_1_to_n(void)
{
	struct fbt_broker b;
	struct sink s;
	char err[256];
	CHECK(case_up(&s, &b, NULL));
	CHECK_EQ(fbt_publish(&b, "wsc-since", 500), 0);
	struct fb_wsc_opts o = opts_for(&s, &b);
	o.since = 123;
	s.c = fb_wsc_start(&o, err, sizeof(err));
	CHECK(s.c);
	CHECK_EQ(fb_wsc_last_id(s.c), 123);
	CHECK(run_until(&s, got, 377, 30000));
	settle(&s, 300);
	CHECK(ids_exactly(&s, 124, 500));
	CHECK_EQ(fb_wsc_last_id(s.c), 500);
	case_down(&s, &b);
}

static void wsc_resumes_exactly_after_broker_sigkill_and_restart(void)
{
	struct fbt_broker b;
	struct sink s;
	struct fb_wsc_stats st;
	CHECK(case_up(&s, &b, NULL));
	struct fb_wsc_opts o = opts_for(&s, &b);
	CHECK(start_connected(&s, &o));
	/* acked means journaled; kill -9 while the stream may still be flowing */
	CHECK_EQ(fbt_publish(&b, "wsc-crash", 3000), 0);
	fbt_broker_kill9(&b);
	CHECK(run_until(&s, disconnected, 1, 10000));
	CHECK(strstr(s.why, "connection lost"));
	CHECK(fbt_broker_start(&b) == 0); /* same ports, same journal */
	CHECK(run_until(&s, connected, 2, 10000));
	CHECK_EQ(fbt_publish(&b, "wsc-crash", 2000), 0);
	CHECK(run_until(&s, got, 5000, 30000));
	settle(&s, 300);
	CHECK(ids_exactly(&s, 1, 5000));
	fb_wsc_get_stats(s.c, &st);
	CHECK_EQ(st.duplicates, 0);
	CHECK(st.reconnects >= 1);
	CHECK_EQ(s.wrong_thread, 0);
	case_down(&s, &b);
}

static void wsc_slow_consumer_is_flow_controlled_and_loses_nothing(void)
{
	/* a broker patient enough never to drop us: this is our own back-pressure */
	static const char *const extra[] = { "WsQueueEvents=100000", "WsRingEvents=100000", NULL };
	struct fbt_broker b;
	struct sink s;
	struct fb_wsc_stats st;
	CHECK(case_up_bounded(&s, &b, extra, 64));
	/* the owner's loop does not run while this publishes: the queue fills
	 * and the lws thread stops reading; lws stops at the message that
	 * reached the limit, so the queue never grows past it */
	CHECK_EQ(fbt_publish(&b, "wsc-slow", 20000), 0);
	CHECK(wait_paused(&s, 10000));
	usleep(300000);
	fb_wsc_get_stats(s.c, &st);
	CHECK_EQ(st.queued, 64);
	CHECK_EQ(st.queued_max, 64);
	s.slow_us = 20;
	CHECK(run_until(&s, got, 20000, 120000));
	settle(&s, 300);
	CHECK(ids_exactly(&s, 1, 20000));
	CHECK_EQ(s.notices, 0);
	fb_wsc_get_stats(s.c, &st);
	CHECK(st.rx_pauses >= 2);
	CHECK(st.queued_max <= 64);
	CHECK_EQ(st.duplicates, 0);
	CHECK_EQ(st.reconnects, 0);
	case_down(&s, &b);
}

static void wsc_missed_notice_is_delivered_then_resume_loses_nothing(void)
{
	/* a broker that drops a subscriber 16 events behind */
	static const char *const extra[] = { "WsQueueEvents=16", "WsRingEvents=1024", NULL };
	struct fbt_broker b;
	struct sink s;
	struct fb_wsc_stats st;
	CHECK(case_up_bounded(&s, &b, extra, 64));
	/* The owner's loop does not run, so we stop reading at 64 and the
	 * broker's socket to us fills (a burst can outrun us even before
	 * that). The broker checks a live subscriber's lag as new events
	 * arrive: publish in rounds small enough for its WebSocket thread to
	 * keep up (a bigger burst makes it replay everyone from the journal
	 * instead) until it gives up on us. It does once our socket took
	 * nothing for 2 s (STALL_NS) and events still come: so the rounds go
	 * on for up to 20 s of wall time, not a count of rounds (50 rounds
	 * took under 2 s in an unsanitized build, and the cut never came). */
	unsigned total = 0;
	for (int64_t end = fb_time_ms() + 20000; fb_time_ms() < end && dropped_slow(&b) < 1;) {
		CHECK_EQ(fbt_publish(&b, "wsc-missed", 1000), 0);
		total += 1000;
		usleep(100000);
	}
	CHECK(dropped_slow(&b) >= 1);
	CHECK(run_until(&s, got, total, 120000));
	settle(&s, 300);
	CHECK(s.notices >= 1);
	CHECK(ids_exactly(&s, 1, total));
	fb_wsc_get_stats(s.c, &st);
	CHECK_EQ(st.notices, s.notices);
	CHECK(st.reconnects >= 1);
	CHECK_EQ(st.delivered, total + s.notices);
	case_down(&s, &b);
}

static void wsc_query_filters_at_the_broker_across_reconnects(void)
{
	struct fbt_broker b;
	struct sink s;
	CHECK(case_up(&s, &b, NULL));
	struct fb_wsc_opts o = opts_for(&s, &b);
	o.query = "severity=Critical";
	CHECK(start_connected(&s, &o));
	CHECK_EQ(fbt_publish_tmpl(&b, "wsc-q", 30, "{\"kind\":\"test\",\"switch\":\"sw1\",\"severity\":\"OK\"}"), 0);
	CHECK_EQ(fbt_publish_tmpl(&b, "wsc-q", 20, "{\"kind\":\"test\",\"switch\":\"sw1\",\"severity\":\"Critical\"}"), 0);
	CHECK(run_until(&s, got, 20, 30000));
	/* the reconnect asks since=50&severity=Critical */
	fbt_broker_kill9(&b);
	CHECK(fbt_broker_start(&b) == 0);
	CHECK(run_until(&s, connected, 2, 10000));
	CHECK_EQ(fbt_publish_tmpl(&b, "wsc-q", 5, "{\"kind\":\"test\",\"switch\":\"sw1\",\"severity\":\"Critical\"}"), 0);
	CHECK(run_until(&s, got, 25, 30000));
	settle(&s, 300);
	CHECK(ids_exactly(&s, 31, 55));
	case_down(&s, &b);
}

static void wsc_bad_query_is_reported_with_the_broker_answer(void)
{
	struct fbt_broker b;
	struct sink s;
	char err[256];
	CHECK(case_up(&s, &b, NULL));
	struct fb_wsc_opts o = opts_for(&s, &b);
	o.query = "severity=Bogus";
	s.c = fb_wsc_start(&o, err, sizeof(err));
	CHECK(s.c);
	CHECK(run_until(&s, disconnected, 1, 10000));
	CHECK(strstr(s.why, "cannot connect"));
	CHECK(strstr(s.why, "HTTP 400"));
	CHECK_EQ(s.ups, 0);
	case_down(&s, &b);
}

static void wsc_connects_once_a_late_broker_starts(void)
{
	struct fbt_broker b;
	struct sink s;
	char err[256];
	sink_init(&s);
	CHECK(fbt_broker_init(&b) == 0);
	struct fb_wsc_opts o = opts_for(&s, &b);
	s.c = fb_wsc_start(&o, err, sizeof(err));
	CHECK(s.c);
	CHECK(run_until(&s, disconnected, 1, 10000));
	CHECK(strstr(s.why, "cannot connect"));
	settle(&s, 300); /* failures repeat; the state is reported once */
	CHECK_EQ(s.downs, 1);
	CHECK(fbt_broker_start(&b) == 0);
	CHECK(run_until(&s, connected, 1, 10000));
	CHECK_EQ(fbt_publish(&b, "wsc-late", 10), 0);
	CHECK(run_until(&s, got, 10, 30000));
	CHECK(ids_exactly(&s, 1, 10));
	case_down(&s, &b);
}

/* ---- direct delivery ---------------------------------------------------- */

/* The sink of a direct client: on_message and on_drained run on the
 * client's thread, so what the owner reads is under mu. */
struct dsink {
	struct sink s;           /* first: run_until's predicates get &d->s */
	pthread_mutex_t mu;
	pthread_t reader;
	int have_reader, on_owner, other_thread, drained, drained_wrong;
	size_t n_at_drain;       /* messages delivered before the last on_drained */
};

static void on_message_direct(void *arg, const char *json, size_t len, uint64_t id)
{
	struct dsink *d = arg;
	pthread_mutex_lock(&d->mu);
	if (pthread_equal(pthread_self(), d->s.owner))
		d->on_owner++;
	if (!d->have_reader) {
		d->reader = pthread_self();
		d->have_reader = 1;
	} else if (!pthread_equal(pthread_self(), d->reader)) {
		d->other_thread++;
	}
	if (len < 2 || json[0] != '{' || json[len - 1] != '}' || !id)
		d->s.bad_doc++;
	else if (d->s.n < MAX_IDS)
		d->s.ids[d->s.n] = id;
	d->s.n++;
	pthread_mutex_unlock(&d->mu);
}

static void on_drained_direct(void *arg)
{
	struct dsink *d = arg;
	pthread_mutex_lock(&d->mu);
	if (!d->have_reader || !pthread_equal(pthread_self(), d->reader))
		d->drained_wrong++;
	d->drained++;
	d->n_at_drain = d->s.n;
	pthread_mutex_unlock(&d->mu);
}

static void on_state_direct(void *arg, int connected, const char *why)
{
	struct dsink *d = arg;
	on_state(&d->s, connected, why); /* on the owner's loop, as without direct */
}

static int dgot(const struct sink *s, size_t n)
{
	struct dsink *d = (struct dsink *)(void *)s;
	pthread_mutex_lock(&d->mu);
	int ok = d->s.n >= n;
	pthread_mutex_unlock(&d->mu);
	return ok;
}

static void wsc_direct_delivers_on_the_client_thread_and_resumes_after_sigkill(void)
{
	struct fbt_broker b;
	struct dsink d;
	struct fb_wsc_stats st;
	char err[256];
	memset(&d, 0, sizeof(d));
	CHECK(case_up(&d.s, &b, NULL));
	pthread_mutex_init(&d.mu, NULL);
	CHECK_EQ(fbt_publish(&b, "wsc-direct", 1000), 0); /* replayed from the journal */
	struct fb_wsc_opts o = opts_for(&d.s, &b);
	o.direct = 1;
	o.max_queued = 16; /* does not apply: nothing queues, reads never pause */
	o.on_message = on_message_direct;
	o.on_drained = on_drained_direct;
	o.on_state = on_state_direct;
	o.arg = &d;
	d.s.c = fb_wsc_start(&o, err, sizeof(err));
	CHECK(d.s.c);
	CHECK(run_until(&d.s, connected, 1, 10000));
	CHECK_EQ(fbt_publish(&b, "wsc-direct", 1000), 0); /* live */
	CHECK(run_until(&d.s, dgot, 2000, 30000));
	fbt_broker_kill9(&b);
	CHECK(run_until(&d.s, disconnected, 1, 10000));
	CHECK(fbt_broker_start(&b) == 0); /* the reconnect asks since=2000 */
	CHECK(run_until(&d.s, connected, 2, 10000));
	CHECK_EQ(fbt_publish(&b, "wsc-direct", 500), 0);
	CHECK(run_until(&d.s, dgot, 2500, 30000));
	run_until(&d.s, dgot, (size_t)-1, 300); /* nothing more may come */
	fb_wsc_get_stats(d.s.c, &st);
	fb_wsc_stop(d.s.c); /* joins the thread: no callback follows */
	d.s.c = NULL;
	CHECK(ids_exactly(&d.s, 1, 2500));
	CHECK_EQ(d.s.bad_doc, 0);
	CHECK_EQ(d.on_owner, 0);     /* every message on the client's thread */
	CHECK_EQ(d.other_thread, 0); /* and always the same one */
	CHECK_EQ(d.s.wrong_thread, 0); /* on_state on the owner's loop */
	CHECK(d.drained >= 1);
	CHECK_EQ(d.drained_wrong, 0);
	CHECK_EQ(d.n_at_drain, 2500); /* the last read was followed by on_drained */
	CHECK_EQ(st.delivered, 2500);
	CHECK_EQ(st.queued_max, 0);
	CHECK_EQ(st.rx_pauses, 0);
	CHECK_EQ(st.duplicates, 0);
	CHECK(st.reconnects >= 1);
	pthread_mutex_destroy(&d.mu);
	case_down(&d.s, &b);
}

static void wsc_stop_inside_on_message_ends_delivery(void)
{
	struct fbt_broker b;
	struct sink s;
	char err[256];
	CHECK(case_up(&s, &b, NULL));
	CHECK_EQ(fbt_publish(&b, "wsc-stop", 100), 0);
	struct fb_wsc_opts o = opts_for(&s, &b);
	s.stop_at = 10;
	s.c = fb_wsc_start(&o, err, sizeof(err));
	CHECK(s.c);
	CHECK(run_until(&s, got, 10, 30000));
	settle(&s, 300);
	CHECK(s.c == NULL);
	CHECK_EQ(s.n, 10); /* nothing after the stop, and no use after free (ASan) */
	case_down(&s, &b);
}

/* ---- a scripted WebSocket server, for what a real broker never sends ---- */

/* SHA-1 (FIPS 180-4), only for the handshake's Sec-WebSocket-Accept. */
static void sha1(const uint8_t *msg, size_t len, uint8_t out[20])
{
	uint32_t h[5] = { 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0 };
	size_t total = ((len + 8) / 64 + 1) * 64;
	uint8_t *m = calloc(1, total);
	if (!m)
		return;
	memcpy(m, msg, len);
	m[len] = 0x80;
	for (int i = 0; i < 8; i++)
		m[total - 1 - i] = (uint8_t)((uint64_t)len * 8 >> (8 * i));
	for (size_t off = 0; off < total; off += 64) {
		uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
		for (int i = 0; i < 16; i++)
			w[i] = (uint32_t)m[off + 4 * i] << 24 | (uint32_t)m[off + 4 * i + 1] << 16 |
			       (uint32_t)m[off + 4 * i + 2] << 8 | m[off + 4 * i + 3];
		for (int i = 16; i < 80; i++) {
			uint32_t x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
			w[i] = x << 1 | x >> 31;
		}
		for (int i = 0; i < 80; i++) {
			uint32_t f = i < 20 ? ((b & c) | (~b & d)) + 0x5A827999
				     : i < 40 ? (b ^ c ^ d) + 0x6ED9EBA1
				     : i < 60 ? ((b & c) | (b & d) | (c & d)) + 0x8F1BBCDC
					      : (b ^ c ^ d) + 0xCA62C1D6;
			uint32_t t = (a << 5 | a >> 27) + f + e + w[i];
			e = d;
			d = c;
			c = b << 30 | b >> 2;
			b = a;
			a = t;
		}
		h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
	}
	free(m);
	for (int i = 0; i < 20; i++)
		out[i] = (uint8_t)(h[i / 4] >> (24 - 8 * (i % 4)));
}

static void base64(const uint8_t *in, size_t n, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
}

struct fakews {
	int lfd;
	uint16_t port;
	pthread_t th;
	char path[2][256];       /* the request path of each connection */
};

static void ws_frame(int fd, int fin, int opcode, const char *p, size_t n)
{
	uint8_t h[10];
	size_t hl = 2;
	h[0] = (uint8_t)((fin ? 0x80 : 0) | opcode);
	if (n < 126) {
		h[1] = (uint8_t)n;
	} else if (n < 65536) {
		h[1] = 126;
		h[2] = (uint8_t)(n >> 8);
		h[3] = (uint8_t)n;
		hl = 4;
	} else {
		h[1] = 127;
		for (int i = 0; i < 8; i++)
			h[2 + i] = (uint8_t)((uint64_t)n >> (56 - 8 * i));
		hl = 10;
	}
	if (send(fd, h, hl, MSG_NOSIGNAL) < 0 || (n && send(fd, p, n, MSG_NOSIGNAL) < 0))
		return; /* the client may close first: that is what one case tests */
}

static void ws_text(int fd, int fin, int opcode, const char *text)
{
	ws_frame(fd, fin, opcode, text, strlen(text));
}

static int ws_accept(struct fakews *f, int conn)
{
	char req[4096] = "", key[64] = "", acc[64], reply[256];
	size_t len = 0;
	struct pollfd p = { .fd = f->lfd, .events = POLLIN };
	if (poll(&p, 1, 10000) != 1)
		return -1;
	int fd = accept(f->lfd, NULL, NULL);
	while (fd >= 0 && len < sizeof(req) - 1 && !strstr(req, "\r\n\r\n")) {
		ssize_t n = recv(fd, req + len, sizeof(req) - 1 - len, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		req[len] = '\0';
	}
	const char *k = fd >= 0 ? strcasestr(req, "Sec-WebSocket-Key: ") : NULL;
	if (!k) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	sscanf(req, "GET %255s", f->path[conn]);
	sscanf(k + 19, "%63s", key);
	char cat[128];
	uint8_t md[20];
	snprintf(cat, sizeof(cat), "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
	sha1((const uint8_t *)cat, strlen(cat), md);
	base64(md, 20, acc);
	int n = snprintf(reply, sizeof(reply), "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
			 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", acc);
	if (send(fd, reply, (size_t)n, MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void drain_until_closed(int fd, int ms)
{
	char buf[4096];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	for (int64_t end = fb_time_ms() + ms; fb_time_ms() < end;)
		if (poll(&p, 1, 50) == 1 && recv(fd, buf, sizeof(buf), 0) <= 0)
			break;
	close(fd);
}

static void *fakews_main(void *arg)
{
	struct fakews *f = arg;
	int fd = ws_accept(f, 0);
	if (fd < 0)
		return NULL;
	/* already had (since=5): dropped */
	ws_text(fd, 1, 1, "{\"Id\":\"3\"}");
	/* one message in three frames, split inside the "Id" key, with spaces */
	ws_text(fd, 0, 1, "{\"@odata.type\":\"#Event\",\"I");
	ws_text(fd, 0, 0, "d\" : \"7\",\"Events\":[");
	ws_text(fd, 1, 0, "]}");
	/* the same EventId again: dropped */
	ws_text(fd, 1, 1, "{\"Id\":\"7\"}");
	/* over 1 MiB: the client must give up on this connection */
	size_t big = (1u << 20) + 100;
	char *x = malloc(big);
	if (x) {
		memset(x, ' ', big);
		x[0] = '{';
		x[big - 1] = '}';
		ws_frame(fd, 1, 1, x, big);
		free(x);
	}
	drain_until_closed(fd, 10000);
	fd = ws_accept(f, 1);
	if (fd < 0)
		return NULL;
	ws_text(fd, 1, 1, "{\"Id\":\"8\"}");
	drain_until_closed(fd, 10000);
	return NULL;
}

static void wsc_reassembles_fragments_drops_duplicates_and_refuses_over_1mib(void)
{
	struct fakews f;
	struct sink s;
	struct fb_wsc_stats st;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	char err[256];
	memset(&f, 0, sizeof(f));
	f.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(f.lfd >= 0 && bind(f.lfd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	      getsockname(f.lfd, (struct sockaddr *)&a, &l) == 0 && listen(f.lfd, 4) == 0);
	f.port = ntohs(a.sin_port);
	CHECK(pthread_create(&f.th, NULL, fakews_main, &f) == 0);
	sink_init(&s);
	struct fb_wsc_opts o = { .host = "127.0.0.1", .port = f.port, .base = s.base, .since = 5,
				 .on_message = on_message, .on_state = on_state, .arg = &s,
				 .reconnect_min_ms = 50, .reconnect_max_ms = 200 };
	s.c = fb_wsc_start(&o, err, sizeof(err));
	CHECK(s.c);
	int ok = run_until(&s, got, 2, 20000) && ids_exactly(&s, 7, 8) && !s.bad_doc;
	fb_wsc_get_stats(s.c, &st);
	sink_free(&s);
	pthread_join(f.th, NULL);
	close(f.lfd);
	CHECK(ok);
	CHECK_EQ(s.no_id, 0);
	CHECK_EQ(st.duplicates, 2);
	CHECK_EQ(st.oversized, 1);
	CHECK_STR(f.path[0], "/ws/events?since=5");
	CHECK_STR(f.path[1], "/ws/events?since=7");
}

static void scan_reads_event_id_and_missed_notice_without_parsing(void)
{
	static const struct { const char *doc; int ok; uint64_t id; } ids[] = {
		{ "{\"@odata.type\":\"#Event.v1_13_0.Event\",\"Id\":\"4711\",\"Events\":[]}", 1, 4711 },
		{ "{\"Id\" :\n \"17\"}", 1, 17 },
		{ "{\"Id\":17}", 1, 17 },
		{ "{\"Id\":\"18446744073709551615\"}", 1, UINT64_MAX },
		{ "{\"Id\":\"18446744073709551616\"}", 0, 0 },
		{ "{\"Id\":\"missed-5\"}", 0, 0 },
		{ "{\"Id\":\"", 0, 0 },
		{ "{\"Id\"", 0, 0 },
		/* an escaped quote inside a string is not a key */
		{ "{\"Name\":\"a \\\"Id\\\":\\\"5\\\"\",\"Id\":\"6\"}", 1, 6 },
		{ "{\"EventId\":\"9\"}", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		uint64_t id = 0;
		int ok = fb_event_scan_id(ids[i].doc, strlen(ids[i].doc), &id);
		if (ok != ids[i].ok || (ok && id != ids[i].id))
			fprintf(stderr, "  %s: %d %llu\n", ids[i].doc, ok, (unsigned long long)id);
		CHECK_EQ(ok, ids[i].ok);
		CHECK(!ok || id == ids[i].id);
	}
	/* the broker's own notice */
	struct fb_buf b = FB_BUF_INIT;
	struct fb_event_missed m;
	uint64_t id = 0;
	CHECK_EQ(fb_redfish_render_missed(&b, 12, 34), 0);
	CHECK_EQ(fb_event_scan_missed((const char *)b.data, b.len, &m), 1);
	CHECK_EQ(m.missed, 12);
	CHECK_EQ(m.resume_since, 34);
	CHECK_EQ(m.have_resume, 1);
	CHECK_EQ(fb_event_scan_id((const char *)b.data, b.len, &id), 0);
	fb_buf_free(&b);
	/* the MessageId named in a text is not a notice */
	const char *text = "{\"Id\":\"3\",\"Events\":[{\"MessageId\":\"Fabric.1.0.Other\","
			   "\"Message\":\"Fabricbus.1.0.SubscriberEventsMissed\"}]}";
	CHECK_EQ(fb_event_scan_missed(text, strlen(text), &m), 0);
}

static void wsc_start_refuses_bad_options(void)
{
	struct sink s;
	char err[256];
	sink_init(&s);
	struct fb_wsc_opts o = { .host = "127.0.0.1", .port = 1, .base = s.base, .on_message = on_message };
	struct fb_wsc_opts bad = o;
	bad.base = NULL;
	CHECK(fb_wsc_start(&bad, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "bad options"));
	bad = o;
	bad.port = 0;
	CHECK(fb_wsc_start(&bad, err, sizeof(err)) == NULL);
	bad = o;
	bad.query = "severity=Critical Warning";
	CHECK(fb_wsc_start(&bad, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "percent-encoded"));
	bad = o;
	bad.query = "prefix=Fabric.&since=5";
	CHECK(fb_wsc_start(&bad, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "since is set by the client"));
	fb_wsc_stop(NULL);
	sink_free(&s);
}

int main(void)
{
	fb_log_init("test_ws_client", 0, getenv("FB_TEST_DEBUG") ? FB_LOG_DEBUG : FB_LOG_WARN);
	if (evthread_use_pthreads() != 0) {
		fprintf(stderr, "evthread_use_pthreads failed\n");
		return 1;
	}
	RUN(scan_reads_event_id_and_missed_notice_without_parsing);
	RUN(wsc_start_refuses_bad_options);
	RUN(wsc_delivers_all_events_in_order_on_the_loop_thread);
	RUN(wsc_from_now_gets_only_events_published_after_start);
	RUN(wsc_since_k_gets_exactly_k_plus_1_to_n);
	RUN(wsc_resumes_exactly_after_broker_sigkill_and_restart);
	RUN(wsc_slow_consumer_is_flow_controlled_and_loses_nothing);
	RUN(wsc_missed_notice_is_delivered_then_resume_loses_nothing);
	RUN(wsc_query_filters_at_the_broker_across_reconnects);
	RUN(wsc_bad_query_is_reported_with_the_broker_answer);
	RUN(wsc_connects_once_a_late_broker_starts);
	RUN(wsc_stop_inside_on_message_ends_delivery);
	RUN(wsc_direct_delivers_on_the_client_thread_and_resumes_after_sigkill);
	RUN(wsc_reassembles_fragments_drops_duplicates_and_refuses_over_1mib);
	return TEST_DONE();
}

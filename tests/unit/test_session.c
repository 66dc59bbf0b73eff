/* test_session.c - fb_session against an in-process broker peer that speaks
 * the real protocol through proto's fb_wire functions. The peer can hold a
 * chosen last_seq, stop acking, go silent, drop the connection or send an
 * ERROR, which is what the session has to survive. */
#include "fb_err.h"
#include "fb_log.h"
#include "fb_session.h"
#include "fb_test.h"
#include "fb_time.h"
#include "fb_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#define MAX_SEQS 20000

struct peer {
	struct event_base *base;
	struct evconnlistener *lis;
	struct bufferevent *bev;
	int port;
	int conns;
	uint64_t held;        /* highest seq "journaled"; HELLO_ACK reports it */
	uint32_t hb_ms;       /* advertised in HELLO_ACK */
	int auto_ack;         /* ACK every EVENTS frame */
	int silent;           /* after HELLO_ACK, send nothing at all */
	int frames, heartbeats, dups, gaps;
	uint64_t first_seq_this_conn;
	uint64_t hello_last_acked;
	char hello_agent[FB_AGENT_ID_MAX];
	uint64_t seqs[MAX_SEQS];
	size_t nseq;
};

static void peer_send(struct peer *p, struct fb_buf *b)
{
	evbuffer_add(bufferevent_get_output(p->bev), b->data, b->len);
	fb_buf_free(b);
}

static void peer_drop(struct peer *p)
{
	if (p->bev)
		bufferevent_free(p->bev);
	p->bev = NULL;
}

static int peer_frame(struct peer *p, const struct fb_frame_hdr *h, const uint8_t *body)
{
	struct fb_buf out = FB_BUF_INIT;
	if (h->type == FB_FRAME_HELLO) {
		struct fb_hello hello;
		if (fb_wire_parse_hello(body, h->body_len, &hello))
			return -1;
		p->hello_last_acked = hello.last_acked;
		memcpy(p->hello_agent, hello.agent_id, sizeof(p->hello_agent));
		struct fb_hello_ack a = { p->held, FB_FRAME_MAX_DEFAULT, p->hb_ms, 7 };
		fb_wire_put_hello_ack(&out, &a);
		peer_send(p, &out);
		p->first_seq_this_conn = 0;
	} else if (h->type == FB_FRAME_EVENTS) {
		struct fb_events_reader r;
		struct fb_event ev;
		int rc;
		if (fb_events_open(&r, body, h->body_len))
			return -1;
		while ((rc = fb_events_next(&r, &ev, NULL, NULL)) == 1) {
			if (!p->first_seq_this_conn)
				p->first_seq_this_conn = ev.seq;
			if (ev.seq <= p->held)
				p->dups++;
			else if (ev.seq != p->held + 1)
				p->gaps++;
			if (ev.seq > p->held)
				p->held = ev.seq;
			if (p->nseq < MAX_SEQS)
				p->seqs[p->nseq++] = ev.seq;
		}
		if (rc < 0)
			return -1;
		p->frames++;
		if (p->auto_ack && !p->silent) {
			fb_wire_put_ack(&out, p->held);
			peer_send(p, &out);
		}
	} else if (h->type == FB_FRAME_HEARTBEAT) {
		p->heartbeats++;
		if (!p->silent) {
			fb_wire_put_heartbeat(&out, 1);
			peer_send(p, &out);
		}
	}
	return 0;
}

static void peer_read(struct bufferevent *bev, void *arg)
{
	struct peer *p = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	for (;;) {
		size_t len = evbuffer_get_length(in);
		struct fb_frame_hdr h;
		if (len < FB_FRAME_HDR_LEN)
			return;
		const uint8_t *b = evbuffer_pullup(in, (ev_ssize_t)len);
		int rc = fb_frame_peek(b, len, FB_FRAME_MAX_LIMIT, &h);
		if (rc == FB_EAGAIN)
			return;
		if (rc || peer_frame(p, &h, b + FB_FRAME_HDR_LEN)) {
			fprintf(stderr, "  peer: bad frame from session\n");
			peer_drop(p);
			return;
		}
		evbuffer_drain(in, FB_FRAME_HDR_LEN + h.body_len);
	}
}

static void peer_event(struct bufferevent *bev, short what, void *arg)
{
	struct peer *p = arg;
	(void)what;
	if (p->bev == bev)
		peer_drop(p);
}

static void peer_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
			int salen, void *arg)
{
	struct peer *p = arg;
	(void)l;
	(void)sa;
	(void)salen;
	peer_drop(p); /* one session at a time, like the broker's "replaced" */
	p->bev = bufferevent_socket_new(p->base, fd, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(p->bev, peer_read, NULL, peer_event, p);
	bufferevent_enable(p->bev, EV_READ | EV_WRITE);
	p->conns++;
}

static struct peer *peer_new(struct event_base *base)
{
	struct peer *p = calloc(1, sizeof(*p));
	struct sockaddr_in sin = { .sin_family = AF_INET };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->base = base;
	p->hb_ms = 5000;
	p->auto_ack = 1;
	p->lis = evconnlistener_new_bind(base, peer_accept, p,
					 LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
					 (struct sockaddr *)&sin, sizeof(sin));
	socklen_t sl = sizeof(sin);
	getsockname(evconnlistener_get_fd(p->lis), (struct sockaddr *)&sin, &sl);
	p->port = ntohs(sin.sin_port);
	return p;
}

static void peer_free(struct peer *p)
{
	peer_drop(p);
	evconnlistener_free(p->lis);
	free(p);
}

/* A test world: one base, one peer, one session, a tick so loops wake up. */
struct world {
	struct event_base *base;
	struct event *tick;
	struct peer *p;
	struct fb_session *s;
	uint64_t last_ack_cb;
	int errs;
	int last_err;
};

static void tick_cb(evutil_socket_t fd, short w, void *arg) { (void)fd; (void)w; (void)arg; }
static void on_ack(void *arg, uint64_t seq) { ((struct world *)arg)->last_ack_cb = seq; }
static void on_err(void *arg, int code, const char *text)
{
	struct world *w = arg;
	(void)text;
	w->errs++;
	w->last_err = code;
}

static void world_init(struct world *w, size_t max_unacked, size_t batch, int hb_ms)
{
	memset(w, 0, sizeof(*w));
	w->base = event_base_new();
	w->tick = event_new(w->base, -1, EV_PERSIST, tick_cb, NULL);
	struct timeval tv = { 0, 5000 };
	event_add(w->tick, &tv);
	w->p = peer_new(w->base);
	struct fb_session_opts o = { "127.0.0.1", w->p->port, "test-agent@h1", max_unacked,
				     batch, hb_ms, NULL, NULL, NULL };
	if (fb_session_new(w->base, &o, &w->s) == 0)
		fb_session_set_callbacks(w->s, on_ack, on_err, w);
}

static void world_free(struct world *w)
{
	fb_session_free(w->s);
	peer_free(w->p);
	event_free(w->tick);
	event_base_free(w->base);
}

/* Run the loop until cond holds or ms pass; returns cond. */
#define RUN_UNTIL(w, cond, ms)                                                  \
	({                                                                      \
		int64_t dl_ = fb_time_ms() + (int64_t)(ms);                     \
		while (!(cond) && fb_time_ms() < dl_)                           \
			event_base_loop((w)->base, EVLOOP_ONCE);                \
		(cond);                                                         \
	})

static void mkev(struct fb_event *ev, uint16_t port)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = FB_KIND_TEST;
	ev->tech = FB_TECH_IB;
	ev->subj.port = port;
	snprintf(ev->subj.switch_name, sizeof(ev->subj.switch_name), "sw1");
}

static int submit_n(struct fb_session *s, int n)
{
	struct fb_event ev;
	for (int i = 0; i < n; i++) {
		mkev(&ev, (uint16_t)(i % 36 + 1));
		int rc = fb_session_submit(s, &ev);
		if (rc)
			return rc;
	}
	return 0;
}

static struct fb_session_stats stats(struct fb_session *s)
{
	struct fb_session_stats st;
	fb_session_get_stats(s, &st);
	return st;
}

static void numbering_continues_from_hello_ack_last_seq(void)
{
	struct world w;
	world_init(&w, 1000, 512, 5000);
	CHECK(w.s);
	w.p->held = 41;
	CHECK_EQ(submit_n(w.s, 3), 0); /* held un-numbered until HELLO_ACK */
	CHECK_EQ(fb_session_start(w.s), 0);
	CHECK(RUN_UNTIL(&w, w.p->nseq == 3 && stats(w.s).unacked == 0, 3000));
	CHECK_STR(w.p->hello_agent, "test-agent@h1");
	CHECK_EQ(w.p->hello_last_acked, 0);
	CHECK_EQ(w.p->seqs[0], 42);
	CHECK_EQ(w.p->seqs[2], 44);
	CHECK_EQ(submit_n(w.s, 1), 0); /* after HELLO_ACK: numbered at once */
	CHECK(RUN_UNTIL(&w, w.p->nseq == 4 && w.last_ack_cb == 45, 3000));
	CHECK_EQ(w.p->seqs[3], 45);
	CHECK_EQ(stats(w.s).last_acked_seq, 45);
	CHECK_EQ(w.p->dups + w.p->gaps, 0);
	world_free(&w);
}

static void burst_of_submits_coalesces_into_few_frames(void)
{
	struct world w;
	world_init(&w, 10000, 512, 5000);
	CHECK_EQ(fb_session_start(w.s), 0);
	CHECK(RUN_UNTIL(&w, stats(w.s).connected, 3000));
	CHECK_EQ(submit_n(w.s, 2000), 0);
	CHECK(RUN_UNTIL(&w, w.p->nseq == 2000 && stats(w.s).unacked == 0, 5000));
	CHECK(w.p->frames <= 4); /* ceil(2000 / 512), not 2000 frames */
	CHECK_EQ(stats(w.s).sent_frames, w.p->frames);
	for (size_t i = 0; i < 2000; i++)
		CHECK_EQ(w.p->seqs[i], i + 1);
	/* A small burst inside one loop iteration still becomes one frame. */
	int before = w.p->frames;
	CHECK_EQ(submit_n(w.s, 10), 0);
	CHECK(RUN_UNTIL(&w, w.p->nseq == 2010, 3000));
	CHECK_EQ(w.p->frames, before + 1);
	world_free(&w);
}

static void reconnect_resends_only_what_broker_lacks(void)
{
	struct world w;
	world_init(&w, 1000, 16, 5000);
	w.p->auto_ack = 0;
	CHECK_EQ(fb_session_start(w.s), 0);
	CHECK_EQ(submit_n(w.s, 100), 0);
	CHECK(RUN_UNTIL(&w, w.p->nseq == 100, 3000));
	CHECK_EQ(stats(w.s).unacked, 100);
	/* The broker journaled only up to 60, then the connection broke. */
	peer_drop(w.p);
	w.p->held = 60;
	w.p->auto_ack = 1;
	size_t first_run = w.p->nseq;
	CHECK(RUN_UNTIL(&w, stats(w.s).unacked == 0, 5000));
	CHECK_EQ(w.p->conns, 2);
	CHECK_EQ(w.p->first_seq_this_conn, 61);
	CHECK_EQ(w.p->nseq - first_run, 40);
	for (size_t i = first_run; i < w.p->nseq; i++)
		CHECK_EQ(w.p->seqs[i], 61 + (i - first_run));
	CHECK_EQ(w.p->dups + w.p->gaps, 0);
	CHECK_EQ(w.p->held, 100);
	CHECK_EQ(stats(w.s).last_acked_seq, 100);
	CHECK_EQ(stats(w.s).resent, 40);
	CHECK_EQ(stats(w.s).reconnects, 1);
	world_free(&w);
}

static void submit_returns_efull_at_max_unacked(void)
{
	struct world w;
	world_init(&w, 10, 4, 5000);
	w.p->auto_ack = 0;
	CHECK_EQ(fb_session_start(w.s), 0);
	CHECK_EQ(submit_n(w.s, 10), 0);
	CHECK_EQ(submit_n(w.s, 1), FB_EFULL);
	CHECK(RUN_UNTIL(&w, w.p->nseq == 10, 3000));
	/* A cumulative ACK of 5 frees five slots, not more. */
	struct fb_buf b = FB_BUF_INIT;
	fb_wire_put_ack(&b, 5);
	peer_send(w.p, &b);
	CHECK(RUN_UNTIL(&w, stats(w.s).unacked == 5, 3000));
	CHECK_EQ(w.last_ack_cb, 5);
	CHECK_EQ(submit_n(w.s, 5), 0);
	CHECK_EQ(submit_n(w.s, 1), FB_EFULL);
	world_free(&w);
}

static void silent_broker_triggers_reconnect(void)
{
	struct world w;
	world_init(&w, 100, 16, 50);
	w.p->hb_ms = 100; /* dead after 300 ms of silence */
	w.p->silent = 1;
	CHECK_EQ(fb_session_start(w.s), 0);
	CHECK(RUN_UNTIL(&w, w.p->conns >= 2, 3000));
	CHECK(w.p->heartbeats >= 2); /* the session kept sending HEARTBEAT */
	CHECK(w.last_err == -ETIMEDOUT);
	/* A live broker answering heartbeats keeps the connection. */
	w.p->silent = 0;
	CHECK(RUN_UNTIL(&w, stats(w.s).connected, 3000));
	int conns = w.p->conns;
	RUN_UNTIL(&w, 0, 700);
	CHECK_EQ(w.p->conns, conns);
	CHECK(stats(w.s).connected);
	world_free(&w);
}

static void broker_error_frame_is_reported(void)
{
	struct world w;
	world_init(&w, 100, 16, 5000);
	CHECK_EQ(fb_session_start(w.s), 0);
	CHECK(RUN_UNTIL(&w, stats(w.s).connected, 3000));
	struct fb_buf b = FB_BUF_INIT;
	fb_wire_put_error(&b, FB_WERR_MALFORMED, "bad event 3");
	peer_send(w.p, &b);
	CHECK(RUN_UNTIL(&w, w.last_err == FB_WERR_MALFORMED, 3000));
	CHECK(RUN_UNTIL(&w, w.p->conns == 2 && stats(w.s).connected, 3000));
	world_free(&w);
}

static void malformed_broker_frame_drops_connection(void)
{
	struct world w;
	world_init(&w, 100, 16, 5000);
	CHECK_EQ(fb_session_start(w.s), 0);
	CHECK(RUN_UNTIL(&w, stats(w.s).connected, 3000));
	evbuffer_add(bufferevent_get_output(w.p->bev), "XB\x01\x04\0\0\0\x08", 8);
	CHECK(RUN_UNTIL(&w, w.p->conns == 2 && stats(w.s).connected, 3000));
	CHECK_EQ(w.last_err, FB_EMALFORMED);
	/* An ACK for a seq never sent is a protocol error too. */
	struct fb_buf b = FB_BUF_INIT;
	fb_wire_put_ack(&b, 999);
	peer_send(w.p, &b);
	CHECK(RUN_UNTIL(&w, w.p->conns == 3 && stats(w.s).connected, 3000));
	CHECK_EQ(w.last_err, FB_EPROTO);
	world_free(&w);
}

static void broker_ahead_of_agent_renumbers_unsent(void)
{
	struct world w;
	world_init(&w, 100, 16, 5000);
	w.p->held = 10;
	CHECK_EQ(fb_session_start(w.s), 0);
	CHECK_EQ(submit_n(w.s, 5), 0);
	CHECK(RUN_UNTIL(&w, stats(w.s).last_acked_seq == 15, 3000));
	/* Someone else wrote seqs up to 500 under our id while we were away. */
	peer_drop(w.p);
	w.p->held = 500;
	CHECK(RUN_UNTIL(&w, !stats(w.s).connected, 3000));
	CHECK_EQ(submit_n(w.s, 3), 0);
	size_t before = w.p->nseq;
	CHECK(RUN_UNTIL(&w, w.p->nseq == before + 3 && stats(w.s).unacked == 0, 5000));
	CHECK_EQ(w.p->seqs[before], 501);
	CHECK_EQ(stats(w.s).last_acked_seq, 503);
	world_free(&w);
}

/* The broker lost what it had acked (journal removed): it does not adopt
 * our HELLO's last_acked, so the session numbers its unacked events again
 * from the broker's last_seq + 1 instead of leaving a gap it would refuse. */
static void broker_behind_agent_renumbers_unacked(void)
{
	struct world w;
	world_init(&w, 100, 16, 5000);
	w.p->held = 200;
	CHECK_EQ(fb_session_start(w.s), 0);
	CHECK_EQ(submit_n(w.s, 5), 0);
	CHECK(RUN_UNTIL(&w, stats(w.s).last_acked_seq == 205, 3000));
	w.p->auto_ack = 0;
	CHECK_EQ(submit_n(w.s, 3), 0); /* 206..208, unacked */
	CHECK(RUN_UNTIL(&w, w.p->held == 208, 3000));
	peer_drop(w.p);
	w.p->held = 10;  /* a new journal that holds only 1..10 */
	w.p->auto_ack = 1;
	size_t before = w.p->nseq;
	CHECK(RUN_UNTIL(&w, w.p->conns == 2 && stats(w.s).unacked == 0, 5000));
	CHECK_EQ(w.p->hello_last_acked, 205);
	CHECK_EQ(w.p->nseq - before, 3);
	CHECK_EQ(w.p->seqs[before], 11);
	CHECK_EQ(w.p->seqs[before + 2], 13);
	CHECK_EQ(w.p->gaps, 0);
	CHECK_EQ(stats(w.s).last_acked_seq, 13);
	CHECK_EQ(submit_n(w.s, 1), 0); /* and the next one goes on from there */
	CHECK(RUN_UNTIL(&w, stats(w.s).last_acked_seq == 14, 3000));
	world_free(&w);
}

int main(void)
{
	fb_log_init("test_session", 0, FB_LOG_ERR);
	signal(SIGPIPE, SIG_IGN); /* the peer drops connections on purpose */
	RUN(numbering_continues_from_hello_ack_last_seq);
	RUN(burst_of_submits_coalesces_into_few_frames);
	RUN(reconnect_resends_only_what_broker_lacks);
	RUN(submit_returns_efull_at_max_unacked);
	RUN(silent_broker_triggers_reconnect);
	RUN(broker_error_frame_is_reported);
	RUN(malformed_broker_frame_drops_connection);
	RUN(broker_ahead_of_agent_renumbers_unsent);
	RUN(broker_behind_agent_renumbers_unacked);
	return TEST_DONE();
}

/* fb_source.c - one resuming event source (fb_source.h): the WebSocket half
 * wraps fb_ws_client; the Kafka half polls fb_kc from the owner's loop (a
 * short timer, a non-blocking fb_kc_poll), so every callback runs on the
 * loop thread, and commits only after the owner's sync().
 */
#include "fb_source.h"

#include "fb_err.h"
#include "fb_log.h"

#include <errno.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_MS 50             /* idle poll period: the latency Kafka adds */
#define REMAKE_MAX_MS 60000    /* backoff cap for making the consumer again */
#define PROPS_MAX 64

struct fb_source {
	struct fb_source_opts o;   /* strings below are our copies */
	struct fb_wsc *wsc;        /* websocket */
	struct fb_kc *kc;          /* kafka; NULL while waiting to be made again */
	struct event *poll_ev;
	uint64_t backoff_ms;
	char *strings;             /* brokers, group, client_id, topics, props: one block */
	const char **topics;
	struct fb_kc_prop props[PROPS_MAX];
	size_t n_props;
	uint64_t handled, old, redelivered;
};

static void arm(struct event *ev, uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	event_add(ev, &tv);
}

/* ---- pure parts ---- */

/* Ours, before the user's properties (which win): librdkafka's 500 ms fetch
 * wait adds up to half a second to every drain; 100 ms costs the broker ten
 * idle fetches a second. */
static const struct fb_kc_prop defaults[] = { { "fetch.wait.max.ms", "100" } };
#define N_DEFAULTS (sizeof(defaults) / sizeof(defaults[0]))

size_t fb_source_kafka_props(const struct fb_kc_prop *user, size_t n, struct fb_kc_prop *out,
			     size_t outn)
{
	size_t k = 0;
	for (size_t i = 0; i < N_DEFAULTS && k < outn; i++)
		out[k++] = defaults[i];
	for (size_t i = 0; i < n && k < outn; i++)
		out[k++] = user[i];
	return k;
}

enum fb_source_verdict fb_source_kafka_judge(const struct fb_source_kpos *pos,
					     const struct fb_kc_msg *m, uint64_t since,
					     int *recreated)
{
	/* A newer event of the same broker at an offset we think we passed: the
	 * topic was deleted and made again (offsets restarted), not a redelivery. */
	*recreated = m->offset <= *pos->offset && m->broker[0] &&
		     strcmp(m->broker, pos->broker) == 0 && m->event_id > *pos->event_id;
	if (m->offset <= *pos->offset && !*recreated)
		return FB_SOURCE_REDELIVERED;
	*pos->offset = m->offset;
	*pos->event_id = m->event_id;
	snprintf(pos->broker, pos->broker_size, "%s", m->broker);
	if (m->event_id && m->event_id <= since)
		return FB_SOURCE_OLD;
	return m->value ? FB_SOURCE_HANDLE : FB_SOURCE_EMPTY;
}

/* ---- websocket ---- */

static void on_ws_state(void *arg, int connected, const char *why)
{
	struct fb_source *s = arg;
	if (s->o.on_state)
		s->o.on_state(s->o.arg, connected, why);
	else if (connected)
		fb_log_info("events: subscribed to %s://%s:%d/ws/events",
			    fb_http_auth_scheme(s->o.auth, 1), s->o.host, s->o.port);
	else
		fb_log_warn("events: connection lost: %s (resuming after EventId %" PRIu64 ")",
			    why ? why : "?", fb_wsc_last_id(s->wsc));
}

static void on_ws_message(void *arg, const char *json, size_t len, uint64_t event_id)
{
	struct fb_source *s = arg;
	s->o.on_event(s->o.arg, json, len, event_id);
}

static void on_ws_drained(void *arg)
{
	struct fb_source *s = arg;
	s->o.on_drained(s->o.arg);
}

static int ws_start(struct fb_source *s, char *err, size_t errsz)
{
	struct fb_wsc_opts w;
	memset(&w, 0, sizeof(w));
	w.host = s->o.host;
	w.port = s->o.port;
	w.auth = s->o.auth;
	w.query = s->o.query;
	w.base = s->o.base;
	w.on_message = on_ws_message;
	w.on_state = on_ws_state;
	w.arg = s;
	w.since = s->o.since;
	w.from_now = s->o.since == 0 && !s->o.since_zero; /* a first start that knows no EventId */
	w.reconnect_min_ms = s->o.reconnect_min_ms;
	w.reconnect_max_ms = s->o.reconnect_max_ms;
	w.direct = s->o.direct;
	w.on_drained = s->o.on_drained ? on_ws_drained : NULL;
	char why[256];
	if (!(s->wsc = fb_wsc_start(&w, why, sizeof(why))))
		return fb_err_set(err, errsz, -EIO, "cannot start the WebSocket client: %s", why);
	if (w.from_now)
		fb_log_info("events: first start, reading from the broker's newest event on");
	else
		fb_log_info("events: reading from EventId %" PRIu64 " on", w.since + 1);
	return 0;
}

/* ---- kafka ---- */

static int on_msg(const struct fb_kc_msg *m, void *arg)
{
	struct fb_source *s = arg;
	if (s->o.ready && !s->o.ready(s->o.arg))
		return -EAGAIN; /* not handled: it comes again */
	struct fb_source_kpos pos;
	if (s->o.kafka_pos(s->o.arg, m->topic, m->partition, &pos) < 0) {
		fb_log_err("kafka: out of memory tracking %s[%" PRId32 "]; its messages come again",
			   m->topic, m->partition);
		return -ENOMEM;
	}
	int64_t was_offset = *pos.offset;
	uint64_t was_id = *pos.event_id;
	int recreated;
	enum fb_source_verdict v = fb_source_kafka_judge(&pos, m, s->o.since, &recreated);
	if (recreated)
		fb_log_warn("kafka: %s[%" PRId32 "] offset %" PRId64 " holds EventId %" PRIu64 " of "
			    "broker %s, newer than EventId %" PRIu64 " saved at offset %" PRId64
			    ": the topic was made again? reading it as new", m->topic, m->partition,
			    m->offset, m->event_id, m->broker, was_id, was_offset);
	switch (v) {
	case FB_SOURCE_REDELIVERED:
		s->redelivered++;
		fb_log_debug("kafka: %s[%" PRId32 "] offset %" PRId64 " EventId %" PRIu64 ": handled "
			     "before (redelivered), skipped", m->topic, m->partition, m->offset,
			     m->event_id);
		return 0;
	case FB_SOURCE_OLD:
		s->old++;
		fb_log_debug("kafka: %s[%" PRId32 "] offset %" PRId64 " EventId %" PRIu64 ": at or "
			     "below LastEventId %" PRIu64 ", skipped", m->topic, m->partition,
			     m->offset, m->event_id, s->o.since);
		break;
	case FB_SOURCE_EMPTY:
		fb_log_debug("kafka: %s[%" PRId32 "] offset %" PRId64 ": no value, skipped", m->topic,
			     m->partition, m->offset);
		break;
	case FB_SOURCE_HANDLE: {
		s->o.on_event(s->o.arg, m->value, m->value_len, m->event_id);
		s->handled++;
		/* The age says what Kafka adds to the owner's reaction time; Kafka
		 * timestamps are wall-clock, so is this. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		fb_log_debug("kafka: %s[%" PRId32 "] offset %" PRId64 " EventId %" PRIu64 ": handled "
			     "(produced %" PRId64 " ms before)", m->topic, m->partition, m->offset,
			     m->event_id, m->timestamp_ms >= 0 ? now - m->timestamp_ms : -1);
		break;
	}
	}
	return 0;
}

static int before_commit(void *arg)
{
	struct fb_source *s = arg;
	return s->o.sync ? s->o.sync(s->o.arg) : 0;
}

static int make(struct fb_source *s, char *err, size_t errsz)
{
	struct fb_kc_opts o;
	memset(&o, 0, sizeof(o));
	o.brokers = s->o.brokers;
	o.group_id = s->o.group;
	o.topics = s->topics;
	o.n_topics = s->o.n_topics;
	/* Where the group has no offset yet: from the oldest message, skipping
	 * up to since; with no since at all, from now, as the WebSocket does. */
	o.from_beginning = s->o.since != 0;
	o.props = s->props;
	o.n_props = s->n_props;
	o.client_id = s->o.client_id;
	o.before_commit = before_commit;
	o.before_commit_arg = s;
	char why[512];
	int rc = fb_kc_new(&o, &s->kc, why, sizeof(why));
	if (rc)
		fb_err_set(err, errsz, rc, "kafka: cannot start consumer group %s on %s: %s",
			   s->o.group, s->o.brokers, why);
	return rc;
}

/* The handle commits no more (a failed sync) or cannot go on (fatal). */
static void remake_later(struct fb_source *s, int why)
{
	uint64_t ms = s->backoff_ms ? s->backoff_ms * 2 : s->o.retry_ms;
	s->backoff_ms = ms < REMAKE_MAX_MS ? ms : REMAKE_MAX_MS;
	fb_log_warn("kafka: consumer group %s %s; closing it and joining again in %" PRIu64 " ms "
		    "(what it did not commit comes again)", s->o.group,
		    why == FB_KC_ECOMMIT ? "stopped committing: the state file could not be saved"
					 : "hit a fatal error (see above)", s->backoff_ms);
	fb_kc_close(s->kc);
	s->kc = NULL;
	arm(s->poll_ev, s->backoff_ms);
}

static void on_poll(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_source *s = arg;
	if (s->o.ready && !s->o.ready(s->o.arg))
		return;
	char err[768];
	if (!s->kc && make(s, err, sizeof(err))) {
		fb_log_err("%s", err);
		s->backoff_ms = s->backoff_ms ? s->backoff_ms : s->o.retry_ms;
		arm(s->poll_ev, s->backoff_ms);
		return;
	}
	int n = fb_kc_poll(s->kc, 0, on_msg, s);
	if (n > 0) {
		s->backoff_ms = 0;
		arm(s->poll_ev, 0); /* more may be waiting; the loop runs in between */
	} else if (n == 0) {
		arm(s->poll_ev, POLL_MS);
	} else if (n == FB_KC_ECOMMIT || n == FB_KC_EFATAL) {
		remake_later(s, n);
	} else {
		/* on_msg said not now: that message comes again */
		arm(s->poll_ev, s->o.retry_ms);
	}
}

/* One block for every string the Kafka half keeps (fb_kc_new borrows them
 * again at each remake): the topic pointers first, then the texts. */
static int copy_strings(struct fb_source *s, const struct fb_source_opts *o)
{
	const char *one[] = { o->brokers, o->group, o->client_id ? o->client_id : "fabricbus" };
	size_t n_props = o->n_props < PROPS_MAX - N_DEFAULTS ? o->n_props : PROPS_MAX - N_DEFAULTS;
	size_t len = o->n_topics * sizeof(char *);
	for (size_t i = 0; i < 3; i++)
		len += strlen(one[i] ? one[i] : "") + 1;
	for (size_t i = 0; i < o->n_topics; i++)
		len += strlen(o->topics[i]) + 1;
	for (size_t i = 0; i < n_props; i++)
		len += strlen(o->props[i].name) + strlen(o->props[i].value) + 2;
	if (!(s->strings = malloc(len ? len : 1)))
		return -ENOMEM;
	s->topics = (const char **)(void *)s->strings;
	char *p = s->strings + o->n_topics * sizeof(char *);
#define KEEP(dst, src) do { size_t l_ = strlen(src) + 1; memcpy(p, src, l_); dst = p; p += l_; } while (0)
	KEEP(s->o.brokers, one[0] ? one[0] : "");
	KEEP(s->o.group, one[1] ? one[1] : "");
	KEEP(s->o.client_id, one[2]);
	for (size_t i = 0; i < o->n_topics; i++)
		KEEP(s->topics[i], o->topics[i]);
	struct fb_kc_prop user[PROPS_MAX];
	for (size_t i = 0; i < n_props; i++) {
		KEEP(user[i].name, o->props[i].name);
		KEEP(user[i].value, o->props[i].value);
	}
#undef KEEP
	s->o.topics = NULL;
	s->o.props = NULL;
	s->n_props = fb_source_kafka_props(user, n_props, s->props, PROPS_MAX);
	return 0;
}

static int kafka_start(struct fb_source *s, const struct fb_source_opts *o, char *err,
		       size_t errsz)
{
	if (!o->kafka_pos || copy_strings(s, o) < 0 ||
	    !(s->poll_ev = event_new(o->base, -1, 0, on_poll, s)))
		return fb_err_set(err, errsz, -ENOMEM, "out of memory starting the Kafka consumer");
	int rc = make(s, err, errsz);
	if (rc)
		return rc;
	char topics[512] = "";
	for (size_t i = 0, at = 0; i < o->n_topics && at < sizeof(topics); i++)
		at += (size_t)snprintf(topics + at, sizeof(topics) - at, "%s%s", i ? "," : "",
				       s->topics[i]);
	if (o->since)
		fb_log_info("events: Kafka consumer group %s on %s, topics %s: from the group's "
			    "committed offsets (the oldest where it has none); events at or below "
			    "LastEventId %" PRIu64 " are skipped", s->o.group, s->o.brokers, topics,
			    o->since);
	else
		fb_log_info("events: Kafka consumer group %s on %s, topics %s: from the group's "
			    "committed offsets (the newest where it has none: first start)",
			    s->o.group, s->o.brokers, topics);
	arm(s->poll_ev, 0);
	return 0;
}

/* ---- the source ---- */

static void source_free(struct fb_source *s)
{
	if (s->poll_ev)
		event_free(s->poll_ev);
	free(s->strings);
	free(s);
}

struct fb_source *fb_source_start(const struct fb_source_opts *o, char *err, size_t errsz)
{
	if (!o->on_event || !o->base) {
		fb_err_set(err, errsz, -EINVAL, "event source: no on_event or no event base");
		return NULL;
	}
	struct fb_source *s = calloc(1, sizeof(*s));
	if (!s) {
		fb_err_set(err, errsz, -ENOMEM, "out of memory starting the event source");
		return NULL;
	}
	s->o = *o;
	int rc = o->kind == FB_SOURCE_KAFKA ? kafka_start(s, o, err, errsz) : ws_start(s, err, errsz);
	if (rc) {
		source_free(s);
		return NULL;
	}
	return s;
}

void fb_source_stop(struct fb_source *s)
{
	if (!s)
		return;
	fb_wsc_stop(s->wsc);
	if (s->poll_ev)
		event_del(s->poll_ev);
	/* Commits what is handled, after sync saved it, and leaves the group so
	 * that another member takes the partitions at once. */
	if (s->kc && fb_kc_close(s->kc) == 0)
		fb_log_info("kafka: left consumer group %s: %" PRIu64 " events handled, %" PRIu64
			    " skipped at or below LastEventId, %" PRIu64 " redelivered and skipped",
			    s->o.group, s->handled, s->old, s->redelivered);
	source_free(s);
}

const char *fb_source_name(const struct fb_source *s)
{
	return s->o.kind == FB_SOURCE_KAFKA ? "kafka" : "websocket";
}

int fb_source_ordered(const struct fb_source *s)
{
	return s->o.kind != FB_SOURCE_KAFKA;
}

int fb_source_ws_stats(const struct fb_source *s, struct fb_wsc_stats *st)
{
	if (!s->wsc)
		return -ENOTSUP;
	fb_wsc_get_stats(s->wsc, st);
	return 0;
}

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	(void)level;
	(void)fac;
	(void)buf; /* "no bootstrap.servers": on purpose, this client never connects */
}

int fb_source_kafka_check(const char *group, const struct fb_kc_prop *props, size_t n_props,
			  char *err, size_t errsz)
{
	char why[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	if (!conf)
		return fb_err_set(err, errsz, -ENOMEM, "out of memory");
	rd_kafka_conf_set_log_cb(conf, quiet_log);
	int rc = 0;
	if (rd_kafka_conf_set(conf, "group.id", group, why, sizeof(why)))
		rc = fb_err_set(err, errsz, FB_ECONFIG, "KafkaGroup=%s: %s", group, why);
	for (size_t i = 0; !rc && i < n_props; i++)
		if (rd_kafka_conf_set(conf, props[i].name, props[i].value, why, sizeof(why)))
			rc = fb_err_set(err, errsz, FB_ECONFIG, "kafka.%s: %s", props[i].name, why);
	if (rc) {
		rd_kafka_conf_destroy(conf);
		return rc;
	}
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof(why));
	if (!rk) {
		rd_kafka_conf_destroy(conf);
		return fb_err_set(err, errsz, FB_ECONFIG, "the Kafka configuration (kafka.* lines) "
				  "does not hold together: %s", why);
	}
	rd_kafka_destroy(rk);
	return 0;
}

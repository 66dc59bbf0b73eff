/* slurm_source_kafka.c - Source=kafka: a member of consumer group KafkaGroup
 * reading KafkaTopics (see slurm_source.h for what is skipped and why).
 *
 * fb_kc is single-threaded, so it is polled from the adapter's loop: a short
 * timer, a non-blocking fb_kc_poll(), and every callback runs on the loop
 * thread. A message is applied in memory; fb_kc commits at the end of a poll
 * batch (and on a revocation or close) only after before_commit, which is
 * fbs_adapter_sync(): decide, save the state file, then hand actions to
 * Slurm. So a committed offset never covers an event whose effects are not
 * on disk. A save that fails makes the handle refuse every later commit:
 * the consumer is then closed and made again (from the committed offsets),
 * and the events it redelivers are skipped by the offsets kept in memory
 * while their effects wait for the save to succeed.
 */
#include "slurm_adapter.h"
#include "slurm_source.h"

#include "fb_err.h"
#include "fb_kafka_consumer.h"
#include "fb_log.h"

#include <errno.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_MS 50             /* idle poll period: the latency Kafka adds */
#define REMAKE_MAX_MS 60000    /* backoff cap for making the consumer again */

struct kafka_source {
	struct fbs_source base;    /* first: the adapter holds a pointer to it */
	struct fbs_adapter *a;
	struct fb_kc *kc;          /* NULL while waiting to be made again */
	struct event *poll_ev;
	uint64_t backoff_ms;
	char topic_buf[sizeof(((struct fbs_config *)0)->kafka_topics)];
	const char *topics[FBS_KAFKA_TOPICS_MAX];
	size_t n_topics;
	uint64_t handled, old, redelivered;
};

/* A newer event of the same broker at an offset we think we passed: the
 * topic was deleted and made again (offsets restarted), not a redelivery. */
static int recreated(const struct fbs_koff *o, const struct fb_kc_msg *m)
{
	return m->broker[0] && strcmp(m->broker, o->broker) == 0 && m->event_id > o->event_id;
}

static void note(struct fbs_koff *o, const struct fb_kc_msg *m)
{
	o->offset = m->offset;
	o->event_id = m->event_id;
	snprintf(o->broker, sizeof(o->broker), "%s", m->broker);
}

static int on_msg(const struct fb_kc_msg *m, void *arg)
{
	struct kafka_source *k = arg;
	struct fbs_adapter *a = k->a;
	if (a->phase != FBS_P_RUNNING)
		return -EAGAIN; /* not handled: it comes again */
	struct fbs_koff *o = fbs_state_koff(&a->st, m->topic, m->partition, 1);
	if (!o) {
		fb_log_err("kafka: out of memory tracking %s[%" PRId32 "]; its messages come again",
			   m->topic, m->partition);
		return -ENOMEM;
	}
	if (m->offset <= o->offset && !recreated(o, m)) {
		k->redelivered++;
		fb_log_debug("kafka: %s[%" PRId32 "] offset %" PRId64 " EventId %" PRIu64 ": handled "
			     "before (redelivered), skipped", m->topic, m->partition, m->offset,
			     m->event_id);
		return 0;
	}
	if (m->offset <= o->offset)
		fb_log_warn("kafka: %s[%" PRId32 "] offset %" PRId64 " holds EventId %" PRIu64 " of "
			    "broker %s, newer than EventId %" PRIu64 " saved at offset %" PRId64
			    ": the topic was made again? reading it as new", m->topic, m->partition,
			    m->offset, m->event_id, m->broker, o->event_id, o->offset);
	note(o, m);
	if (m->event_id && m->event_id <= a->seen_id) {
		k->old++;
		fb_log_debug("kafka: %s[%" PRId32 "] offset %" PRId64 " EventId %" PRIu64 ": at or "
			     "below LastEventId %" PRIu64 ", skipped", m->topic, m->partition,
			     m->offset, m->event_id, a->seen_id);
		return 0;
	}
	if (!m->value) {
		fb_log_debug("kafka: %s[%" PRId32 "] offset %" PRId64 ": no value, skipped", m->topic,
			     m->partition, m->offset);
		return 0;
	}
	fbs_adapter_on_message(a, m->value, m->value_len, m->event_id);
	k->handled++;
	/* The age says what Kafka adds to the adapter's reaction time. */
	int64_t age = m->timestamp_ms >= 0 ? (int64_t)fbs_now_ms() - m->timestamp_ms : -1;
	fb_log_debug("kafka: %s[%" PRId32 "] offset %" PRId64 " EventId %" PRIu64 ": handled "
		     "(produced %" PRId64 " ms before)", m->topic, m->partition, m->offset,
		     m->event_id, age);
	return 0;
}

static int before_commit(void *arg)
{
	struct kafka_source *k = arg;
	return fbs_adapter_sync(k->a);
}

/* Ours, before the kafka.* lines (which win): librdkafka's 500 ms fetch
 * wait adds up to half a second to every drain; 100 ms costs the broker ten
 * idle fetches a second. */
static const struct fb_kc_prop defaults[] = { { "fetch.wait.max.ms", "100" } };
#define N_DEFAULTS (sizeof(defaults) / sizeof(defaults[0]))

static int make(struct kafka_source *k)
{
	const struct fbs_config *c = k->a->cfg;
	struct fb_kc_prop props[N_DEFAULTS + FBS_KAFKA_PROPS_MAX];
	size_t n = 0;
	for (size_t i = 0; i < N_DEFAULTS; i++)
		props[n++] = defaults[i];
	for (unsigned i = 0; i < c->n_kafka_props; i++) {
		props[n].name = c->kafka_props[i].name;
		props[n++].value = c->kafka_props[i].value;
	}
	struct fb_kc_opts o;
	memset(&o, 0, sizeof(o));
	o.brokers = c->kafka_brokers;
	o.group_id = c->kafka_group;
	o.topics = k->topics;
	o.n_topics = k->n_topics;
	/* Where the group has no offset yet: from the oldest message, skipping
	 * up to LastEventId; with no LastEventId at all, from now, as the
	 * WebSocket does. */
	o.from_beginning = k->a->seen_id != 0;
	o.props = props;
	o.n_props = n;
	o.client_id = "fabricbus-slurm";
	o.before_commit = before_commit;
	o.before_commit_arg = k;
	char err[512];
	int rc = fb_kc_new(&o, &k->kc, err, sizeof(err));
	if (rc)
		fb_log_err("kafka: cannot start consumer group %s on %s: %s", c->kafka_group,
			   c->kafka_brokers, err);
	return rc;
}

/* The handle commits no more (a failed save) or cannot go on (fatal). */
static void remake_later(struct kafka_source *k, int why)
{
	uint64_t ms = k->backoff_ms ? k->backoff_ms * 2 : k->a->cfg->retry_ms;
	k->backoff_ms = ms < REMAKE_MAX_MS ? ms : REMAKE_MAX_MS;
	fb_log_warn("kafka: consumer group %s %s; closing it and joining again in %" PRIu64 " ms "
		    "(what it did not commit comes again)", k->a->cfg->kafka_group,
		    why == FB_KC_ECOMMIT ? "stopped committing: the state file could not be saved"
					 : "hit a fatal error (see above)", k->backoff_ms);
	fb_kc_close(k->kc);
	k->kc = NULL;
	fbs_arm(k->poll_ev, k->backoff_ms);
}

static void on_poll(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct kafka_source *k = arg;
	if (k->a->phase != FBS_P_RUNNING)
		return;
	if (!k->kc && make(k)) {
		k->backoff_ms = k->backoff_ms ? k->backoff_ms : k->a->cfg->retry_ms;
		fbs_arm(k->poll_ev, k->backoff_ms);
		return;
	}
	int n = fb_kc_poll(k->kc, 0, on_msg, k);
	if (n > 0) {
		k->backoff_ms = 0;
		fbs_arm(k->poll_ev, 0); /* more may be waiting; the loop runs in between */
	} else if (n == 0) {
		fbs_arm(k->poll_ev, POLL_MS);
	} else if (n == FB_KC_ECOMMIT || n == FB_KC_EFATAL) {
		remake_later(k, n);
	} else {
		/* on_msg said not now: that message comes again */
		fbs_arm(k->poll_ev, k->a->cfg->retry_ms);
	}
}

static void kafka_stop(struct fbs_source *s)
{
	struct kafka_source *k = (struct kafka_source *)s;
	if (k->poll_ev)
		event_free(k->poll_ev);
	/* Commits what is handled, after before_commit saved it, and leaves the
	 * group so that another member takes the partitions at once. */
	if (k->kc && fb_kc_close(k->kc) == 0)
		fb_log_info("kafka: left consumer group %s: %" PRIu64 " events handled, %" PRIu64
			    " skipped at or below LastEventId, %" PRIu64 " redelivered and skipped",
			    k->a->cfg->kafka_group, k->handled, k->old, k->redelivered);
	free(k);
}

struct fbs_source *fbs_source_kafka_start(struct fbs_adapter *a)
{
	const struct fbs_config *c = a->cfg;
	struct kafka_source *k = calloc(1, sizeof(*k));
	if (!k || !(k->poll_ev = event_new(a->base, -1, 0, on_poll, k))) {
		fb_log_err("out of memory starting the Kafka consumer");
		free(k);
		return NULL;
	}
	k->base.name = "kafka";
	k->base.ordered = 0;
	k->base.stop = kafka_stop;
	k->a = a;
	k->n_topics = fbs_kafka_topics_split(c->kafka_topics, k->topic_buf, sizeof(k->topic_buf),
					     k->topics, FBS_KAFKA_TOPICS_MAX);
	if (make(k)) {
		event_free(k->poll_ev);
		free(k);
		return NULL;
	}
	if (a->seen_id)
		fb_log_info("events: Kafka consumer group %s on %s, topics %s: from the group's "
			    "committed offsets (the oldest where it has none); events at or below "
			    "LastEventId %" PRIu64 " are skipped", c->kafka_group, c->kafka_brokers,
			    c->kafka_topics, a->seen_id);
	else
		fb_log_info("events: Kafka consumer group %s on %s, topics %s: from the group's "
			    "committed offsets (the newest where it has none: first start)",
			    c->kafka_group, c->kafka_brokers, c->kafka_topics);
	fbs_arm(k->poll_ev, 0);
	return &k->base;
}

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	(void)level;
	(void)fac;
	(void)buf; /* "no bootstrap.servers": on purpose, this client never connects */
}

int fbs_source_kafka_check(const struct fbs_config *c, char *err, size_t errsz)
{
	char why[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	if (!conf) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	rd_kafka_conf_set_log_cb(conf, quiet_log);
	if (rd_kafka_conf_set(conf, "group.id", c->kafka_group, why, sizeof(why))) {
		snprintf(err, errsz, "KafkaGroup=%s: %s", c->kafka_group, why);
		rd_kafka_conf_destroy(conf);
		return FB_ECONFIG;
	}
	for (unsigned i = 0; i < c->n_kafka_props; i++) {
		const struct fbs_kafka_prop *p = &c->kafka_props[i];
		if (rd_kafka_conf_set(conf, p->name, p->value, why, sizeof(why))) {
			snprintf(err, errsz, "kafka.%s: %s", p->name, why);
			rd_kafka_conf_destroy(conf);
			return FB_ECONFIG;
		}
	}
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof(why));
	if (!rk) {
		rd_kafka_conf_destroy(conf);
		snprintf(err, errsz, "the Kafka configuration (kafka.* lines) does not hold together: "
			 "%s", why);
		return FB_ECONFIG;
	}
	rd_kafka_destroy(rk);
	return 0;
}

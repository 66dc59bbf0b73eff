/* kafka_sink.c - the Kafka thread: follow the journal, produce, and create,
 * pause and re-create the producer (see kafka_sink.h and docs/kafka.md).
 *
 * One event becomes one message per distinct destination topic (the mapped
 * topic plus matching KafkaSubscriptions). This file owns the thread, the
 * producer's life cycle and the journal following; the in-flight ring,
 * delivery reports and the cursor are kafka_delivery.c. A permanent delivery
 * error stops the cursor at the event before it and pauses production; the
 * producer is re-created after a back-off and the resume scan
 * (kafka_resume.h) decides what to resend.
 */
#include "kafka_sink.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_redfish.h"
#include "journal.h"
#include "kafka_conf.h"
#include "kafka_delivery.h"
#include "kafka_resume.h"
#include "rf_sub_store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTOPICS (FB_KAFKA_MAP_MAX + FB_KAFKA_SUBS_MAX + FB_KAFKA_RSUBS_MAX)
#define METADATA_TIMEOUT_MS 5000
#define RETRY_MIN_MS 500
#define RETRY_MAX_MS 30000
#define BACKLOG_LOG_MS 30000
#define UNREACHABLE_DEBOUNCE_MS 3000
#define READ_BURST 4096 /* events per pass before serving delivery reports */

struct topic {
	const char *name; /* in the config, or own */
	char own[FB_KAFKA_TOPIC_MAX]; /* a Redfish subscription's topic */
	rd_kafka_topic_t *rkt;
	int32_t partitions;
	uint64_t *in_kafka; /* [partitions]: highest EventId of ours found by the resume scan */
};

/* The event being produced: kept across QUEUE_FULL so it resumes at dest. */
struct current {
	int active;
	uint64_t id, seq;
	struct fb_event ev;
	struct fb_redfish_class cls;
	char origin[FB_REDFISH_ORIGIN_MAX];
	size_t olen;
	unsigned dest[NTOPICS], n_dest, next;
	char id_s[24];
};

struct fb_kafka {
	const struct fb_config *cfg;
	char epoch_hex[17];
	pthread_t thread;
	int thread_started;
	int wake_r, wake_w;
	atomic_int stop;
	int flush_ms;
	atomic_uint_fast64_t committed;

	/* Kafka thread only */
	rd_kafka_t *rk;
	struct topic topics[NTOPICS];
	unsigned n_topics;
	unsigned route_topic[FB_KAFKA_MAP_MAX];
	unsigned sub_topic[FB_KAFKA_SUBS_MAX];
	uint64_t in_kafka_max; /* max over every topic's in_kafka */
	struct fb_journal_reader *rd;
	struct fb_kafka_delivery dl; /* the ring, the cursor and most of the status */
	struct current cur;
	struct fb_buf json;
	uint64_t saved_at_ms, backlog_logged_ms, backlog_logged;
	int was_connected, told_down;
	uint64_t changed_at_ms;
	int topic_wait_logged;
	uint64_t resent, skipped_run; /* since the last resume, for the "caught up" line */
	uint64_t resume_cursor, resume_target;

	/* written by the Kafka thread, read by status on the loop */
	atomic_uint_fast64_t produced, skipped;

	/* Redfish Kafka subscriptions: the loop hands a snapshot over (rs_mu);
	 * the thread owns rs and rsub_topic. */
	pthread_mutex_t rs_mu;
	struct rsubs *rs_next;
	atomic_int rs_new;
	struct rsubs *rs;
	unsigned rsub_topic[FB_KAFKA_RSUBS_MAX];
};

struct rsubs {
	size_t n;
	struct {
		char topic[FB_KAFKA_TOPIC_MAX];
		struct fb_rf_sub sub; /* a private copy */
	} v[FB_KAFKA_RSUBS_MAX];
};

static void rsubs_free(struct rsubs *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		fb_rf_sub_free(&r->v[i].sub);
	free(r);
}

static void wake(struct fb_kafka *k)
{
	char c = 1;
	ssize_t w = write(k->wake_w, &c, 1);
	(void)w; /* EAGAIN: a wake is already pending, which is all we need */
}

void fb_kafka_committed(struct fb_kafka *k, uint64_t id)
{
	atomic_store_explicit(&k->committed, id, memory_order_release);
	wake(k);
}

/* ---- producer and topics ---- */

static void drop_producer(struct fb_kafka *k)
{
	for (unsigned i = 0; i < k->n_topics; i++) {
		if (k->topics[i].rkt)
			rd_kafka_topic_destroy(k->topics[i].rkt);
		k->topics[i].rkt = NULL;
		free(k->topics[i].in_kafka);
		k->topics[i].in_kafka = NULL;
		k->topics[i].partitions = 0;
	}
	if (k->rk)
		rd_kafka_destroy(k->rk);
	k->rk = NULL;
	if (k->rd)
		fb_journal_reader_close(k->rd);
	k->rd = NULL;
	fb_kafka_delivery_reset(&k->dl);
	k->cur.active = 0;
}

static int make_producer(struct fb_kafka *k, char *err, size_t errsz)
{
	char why[512];
	rd_kafka_conf_t *c = fb_kafka_conf_new(k->cfg, why, sizeof(why));
	static const char *const fixed[][2] = {
		{ "enable.idempotence", "true" },   { "acks", "all" },
		{ "message.timeout.ms", "0" },      { "linger.ms", "5" },
		{ "batch.num.messages", "10000" },  { "queue.buffering.max.messages", "1000000" },
		{ "queue.buffering.max.kbytes", "1048576" }, { "compression.codec", "none" },
		{ "client.id", "fabricbusd" },
	};
	for (size_t i = 0; c && i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		/* compression and linger may be tuned with kafka.*: only default them */
		int user = 0;
		for (unsigned j = 0; j < k->cfg->n_kafka_props; j++)
			user |= strcmp(k->cfg->kafka_props[j].name, fixed[i][0]) == 0;
		if (!user && fb_kafka_conf_set(c, fixed[i][0], fixed[i][1], why, sizeof(why))) {
			rd_kafka_conf_destroy(c);
			c = NULL;
		}
	}
	if (!c)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s", why);
	fb_kafka_delivery_conf(&k->dl, c);
	k->rk = fb_kafka_new(RD_KAFKA_PRODUCER, c, err, errsz);
	if (!k->rk)
		return FB_ECONFIG;
	/* Delivery reports and errors wake our poll() through the same pipe. */
	rd_kafka_queue_t *q = rd_kafka_queue_get_main(k->rk);
	rd_kafka_queue_io_event_enable(q, k->wake_w, "k", 1);
	rd_kafka_queue_destroy(q);
	return 0;
}

/* Partition counts from metadata; every topic must exist (or be created by
 * the broker's auto.create.topics.enable on this request). Returns 0, 1 when
 * Kafka answered but a topic is not usable yet (every topic is asked, so
 * auto-creation of all of them starts at once), -1 when Kafka did not answer. */
static int load_topics(struct fb_kafka *k, char *err, size_t errsz)
{
	int rc = 0;
	for (unsigned i = 0; i < k->n_topics; i++) {
		struct topic *t = &k->topics[i];
		if (!t->rkt)
			t->rkt = rd_kafka_topic_new(k->rk, t->name, NULL);
		if (!t->rkt)
			return fb_err_set(err, errsz, -1,
					  "%s: %s", t->name, rd_kafka_err2str(rd_kafka_last_error()));
		const struct rd_kafka_metadata *md = NULL;
		rd_kafka_resp_err_t e = rd_kafka_metadata(k->rk, 0, t->rkt, &md, METADATA_TIMEOUT_MS);
		if (e)
			return fb_err_set(err, errsz, -1, "%s", rd_kafka_err2str(e));
		rd_kafka_resp_err_t te = md->topic_cnt != 1 ? RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART
				       : md->topics[0].err;
		if (!te && md->topics[0].partition_cnt <= 0)
			te = RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE;
		if (te) {
			if (!rc)
				fb_err_set(err, errsz, 1,
					   "topic %s: %s (create it, or allow auto.create.topics.enable)",
					   t->name, rd_kafka_err2str(te));
			rc = 1;
			rd_kafka_metadata_destroy(md);
			continue;
		}
		t->partitions = md->topics[0].partition_cnt;
		rd_kafka_metadata_destroy(md);
		free(t->in_kafka);
		t->in_kafka = calloc((size_t)t->partitions, sizeof(uint64_t));
		if (!t->in_kafka)
			return fb_err_set(err, errsz, -1, "out of memory");
	}
	return rc;
}

/* Learn what Kafka holds, then position the reader after the cursor. */
static int resume(struct fb_kafka *k, char *err, size_t errsz)
{
	int rc = load_topics(k, err, errsz);
	if (rc)
		return rc;
	atomic_store(&k->dl.connected, 1);
	k->topic_wait_logged = 0;
	struct fb_kafka_resume_topic rt[NTOPICS];
	for (unsigned i = 0; i < k->n_topics; i++)
		rt[i] = (struct fb_kafka_resume_topic){ k->topics[i].name, k->topics[i].partitions,
							k->topics[i].in_kafka };
	uint64_t looked = 0, t0 = fb_kafka_now_ms();
	rc = fb_kafka_resume_scan(k->cfg, k->epoch_hex, rt, k->n_topics, &k->stop, &looked, err, errsz);
	if (rc)
		return rc;
	k->in_kafka_max = 0;
	for (unsigned i = 0; i < k->n_topics; i++)
		for (int32_t p = 0; p < k->topics[i].partitions; p++)
			if (k->topics[i].in_kafka[p] > k->in_kafka_max)
				k->in_kafka_max = k->topics[i].in_kafka[p];
	uint64_t cursor = atomic_load(&k->dl.cursor);
	rc = fb_journal_reader_open(k->cfg->journal_dir, cursor, &k->rd);
	if (rc)
		return fb_err_set(err, errsz, rc,
				  "journal reader on %.200s: %s", k->cfg->journal_dir, fb_strerror(rc));
	k->resent = k->skipped_run = 0;
	k->resume_cursor = cursor;
	k->cur.id = cursor; /* the last EventId read */
	k->resume_target = k->in_kafka_max > cursor ? k->in_kafka_max : 0;
	fb_log_info("kafka: connected to %s; resuming after EventId %" PRIu64 " (cursor); Kafka holds "
		    "ours up to EventId %" PRIu64 " (%" PRIu64 " messages read back in %.1f s)",
		    k->cfg->kafka_brokers, cursor, k->in_kafka_max, looked,
		    (double)(fb_kafka_now_ms() - t0) / 1e3);
	return 0;
}

/* ---- producing ---- */

static void plan(struct fb_kafka *k, struct current *c)
{
	const struct fb_config *cfg = k->cfg;
	fb_redfish_classify(&c->ev, &c->cls);
	int olen = fb_redfish_origin(&c->ev, cfg->fabric_name, c->origin, sizeof(c->origin));
	c->olen = olen > 0 && (size_t)olen < sizeof(c->origin) ? (size_t)olen : 0;
	c->origin[c->olen] = '\0';
	c->n_dest = 0;
	c->next = 0;
	c->dest[c->n_dest++] = k->route_topic[fb_kafka_topic_map_route(&cfg->kafka_map, c->cls.message_id)];
	for (unsigned i = 0; i < cfg->n_kafka_subs; i++) {
		if (!fb_filter_match(&cfg->kafka_subs[i].filter, c->cls.message_id, c->cls.severity,
					c->origin))
			continue;
		unsigned t = k->sub_topic[i], j;
		for (j = 0; j < c->n_dest && c->dest[j] != t; j++)
			;
		if (j == c->n_dest)
			c->dest[c->n_dest++] = t;
	}
	if (k->rs && k->rs->n) {
		struct fb_rf_facts f;
		fb_rf_facts_init(&f, c->cls.message_id, c->cls.severity, c->cls.event_type, c->origin);
		for (size_t i = 0; i < k->rs->n; i++) {
			if (!fb_rf_match(&k->rs->v[i].sub.match, &f))
				continue;
			unsigned t = k->rsub_topic[i], j;
			for (j = 0; j < c->n_dest && c->dest[j] != t; j++)
				;
			if (j == c->n_dest)
				c->dest[c->n_dest++] = t;
		}
	}
	snprintf(c->id_s, sizeof(c->id_s), "%" PRIu64, c->id);
}

/* Produce what is left of the current event. 0 when done, FB_EFULL when
 * librdkafka's queue is full (call again after polling), <0 on failure. */
static int produce_current(struct fb_kafka *k)
{
	struct current *c = &k->cur;
	const char *sev = fb_severity_name(c->cls.severity);
	if (!sev)
		sev = "OK";
	for (; c->next < c->n_dest; c->next++) {
		struct topic *t = &k->topics[c->dest[c->next]];
		int32_t p = fb_kafka_partition(c->origin, c->olen, t->partitions);
		if (c->id <= t->in_kafka[p]) {
			atomic_fetch_add(&k->skipped, 1);
			k->skipped_run++;
			continue;
		}
		rd_kafka_resp_err_t e = rd_kafka_producev(
			k->rk, RD_KAFKA_V_RKT(t->rkt), RD_KAFKA_V_PARTITION(p),
			RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
			RD_KAFKA_V_VALUE(k->json.data, k->json.len),
			RD_KAFKA_V_KEY(c->olen ? c->origin : NULL, c->olen),
			RD_KAFKA_V_HEADER("fabricbus-event-id", c->id_s, -1),
			RD_KAFKA_V_HEADER("fabricbus-severity", sev, -1),
			RD_KAFKA_V_HEADER("fabricbus-agent-id", c->ev.agent_id, -1),
			RD_KAFKA_V_HEADER("fabricbus-broker", k->epoch_hex, 16),
			RD_KAFKA_V_OPAQUE((void *)(uintptr_t)c->seq), RD_KAFKA_V_END);
		if (e) {
			if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL)
				return FB_EFULL;
			/* Not retriable here (e.g. message too large, fatal state). */
			fb_kafka_delivery_fail(&k->dl, c->seq);
			atomic_fetch_add(&k->dl.errors, 1);
			fb_kafka_delivery_set_error(&k->dl, "%s [%" PRId32 "] EventId %" PRIu64 ": %s", t->name,
						    p, c->id, rd_kafka_err2str(e));
			fb_log_err("kafka: cannot produce EventId %" PRIu64 " to %s [%" PRId32 "]: %s; "
				   "production pauses at the cursor",
				   c->id, t->name, p, rd_kafka_err2str(e));
			return -1;
		}
		/* Counted after the hand-over: its report can only come from
		 * rd_kafka_poll, on this thread. */
		fb_kafka_delivery_sent(&k->dl, c->seq);
		atomic_fetch_add(&k->produced, 1);
		if (c->id <= k->resume_target)
			k->resent++;
	}
	c->active = 0;
	return 0;
}

/* Read and produce until caught up, the queue is full, or READ_BURST. */
static void pump(struct fb_kafka *k)
{
	uint64_t limit = atomic_load_explicit(&k->committed, memory_order_acquire);
	for (unsigned n = 0; n < READ_BURST && !k->dl.failing; n++) {
		if (!k->cur.active) {
			if (fb_kafka_delivery_full(&k->dl))
				return; /* too much in flight: wait for delivery reports */
			int rc = fb_journal_reader_next(k->rd, limit, &k->cur.id, &k->cur.ev);
			if (rc == FB_EGONE) {
				uint64_t gap = fb_journal_reader_gap(k->rd);
				fb_log_err("kafka: EventIds %" PRIu64 "..%" PRIu64 " were removed by journal "
					   "retention before they reached Kafka (raise JournalRetainSize/Age "
					   "or fix Kafka sooner)",
					   atomic_load(&k->dl.cursor) + 1, gap - 1);
				fb_kafka_delivery_set_error(&k->dl, "events before %" PRIu64 " lost to journal "
							    "retention", gap);
				atomic_fetch_add(&k->dl.errors, 1);
				continue;
			}
			if (rc < 0) {
				fb_log_err("kafka: reading the journal in %s: %s", k->cfg->journal_dir,
					   fb_strerror(rc));
				fb_kafka_delivery_set_error(&k->dl, "journal read: %s", fb_strerror(rc));
				k->dl.failing = 1;
				return;
			}
			if (rc == 0)
				return;
			k->cur.seq = fb_kafka_delivery_add(&k->dl, k->cur.id);
			k->cur.active = 1;
			plan(k, &k->cur);
			fb_buf_reset(&k->json);
			if (fb_redfish_render(&k->json, &k->cur.ev, k->cur.id, k->cfg->fabric_name)) {
				fb_log_err("kafka: cannot render EventId %" PRIu64 " (out of memory)", k->cur.id);
				fb_kafka_delivery_fail(&k->dl, k->cur.seq);
				return;
			}
		}
		if (produce_current(k))
			return;
	}
}

/* ---- the thread ---- */

static void drain_wake(struct fb_kafka *k)
{
	char buf[256];
	while (read(k->wake_r, buf, sizeof(buf)) > 0)
		;
}

/* Sleep up to ms, or less if woken by stop. */
static void nap(struct fb_kafka *k, uint64_t ms)
{
	uint64_t end = fb_kafka_now_ms() + ms;
	while (!atomic_load(&k->stop) && fb_kafka_now_ms() < end) {
		struct pollfd pfd = { k->wake_r, POLLIN, 0 };
		poll(&pfd, 1, (int)(end - fb_kafka_now_ms() > 200 ? 200 : end - fb_kafka_now_ms()));
		drain_wake(k);
	}
}

static uint64_t backlog(struct fb_kafka *k)
{
	uint64_t c = atomic_load(&k->committed), cur = atomic_load(&k->dl.cursor);
	return c > cur ? c - cur : 0;
}

static void housekeeping(struct fb_kafka *k, uint64_t now)
{
	/* librdkafka reports "all brokers down" late and sometimes stale: only
	 * a state that lasts UNREACHABLE_DEBOUNCE_MS is worth a log line. */
	int conn = atomic_load(&k->dl.connected);
	if (conn != k->was_connected) {
		if (!k->changed_at_ms)
			k->changed_at_ms = now;
		if (now - k->changed_at_ms >= UNREACHABLE_DEBOUNCE_MS) {
			if (conn && k->told_down) {
				fb_log_info("kafka: %s is reachable again; backlog %" PRIu64 " events",
					    k->cfg->kafka_brokers, backlog(k));
				/* The outage's error no longer describes the present. */
				fb_kafka_delivery_clear_error(&k->dl);
			}
			else if (!conn)
				fb_log_warn("kafka: %s unreachable: %s; events are kept in the journal and "
					    "sent when it is back (backlog %" PRIu64 ")",
					    k->cfg->kafka_brokers, k->dl.last_error, backlog(k));
			k->told_down = !conn;
			k->was_connected = conn;
			k->changed_at_ms = 0;
		}
	} else {
		k->changed_at_ms = 0;
	}
	if (now - k->saved_at_ms >= k->cfg->kafka_cursor_sync_ms) {
		fb_kafka_delivery_save(&k->dl);
		k->saved_at_ms = now;
	}
	uint64_t b = backlog(k);
	if (now - k->backlog_logged_ms >= BACKLOG_LOG_MS) {
		if (b > k->backlog_logged && b > 1000)
			fb_log_warn("kafka: backlog %" PRIu64 " events (cursor %" PRIu64 ", committed %" PRIu64
				    ")%s",
				    b, atomic_load(&k->dl.cursor), atomic_load(&k->committed),
				    conn ? "" : "; Kafka is unreachable");
		k->backlog_logged = b;
		k->backlog_logged_ms = now;
	}
	if (k->resume_target && atomic_load(&k->dl.cursor) >= k->resume_target) {
		fb_log_info("kafka: caught up with what Kafka held after resuming at EventId %" PRIu64
			    ": %" PRIu64 " messages resent, %" PRIu64 " skipped (already in Kafka)",
			    k->resume_cursor, k->resent, k->skipped_run);
		k->resume_target = 0;
	}
}

/* Wait (bounded) for every message in flight, then drop the producer. */
static void pause_producer(struct fb_kafka *k)
{
	rd_kafka_purge(k->rk, RD_KAFKA_PURGE_F_QUEUE);
	uint64_t end = fb_kafka_now_ms() + 30000;
	while (fb_kafka_delivery_in_flight(&k->dl) && fb_kafka_now_ms() < end) {
		rd_kafka_poll(k->rk, 100);
		fb_kafka_delivery_advance(&k->dl);
		if (fb_kafka_delivery_stuck(&k->dl))
			break;
	}
	fb_kafka_delivery_advance(&k->dl);
	fb_kafka_delivery_save(&k->dl);
	drop_producer(k);
}

static int serve(struct fb_kafka *k)
{
	int n = 0;
	while (rd_kafka_poll(k->rk, 0) > 0 && n < 1000)
		n++;
	return n;
}

static unsigned topic_index(struct fb_kafka *k, const char *name);

/* Take the newest snapshot of the Redfish Kafka subscriptions. Returns 1 if
 * it names a topic the producer does not know yet. */
static int take_rsubs(struct fb_kafka *k)
{
	pthread_mutex_lock(&k->rs_mu);
	struct rsubs *r = k->rs_next;
	k->rs_next = NULL;
	pthread_mutex_unlock(&k->rs_mu);
	if (!r)
		return 0;
	int fresh = 0;
	size_t keep = 0;
	for (size_t i = 0; i < r->n; i++) {
		unsigned t;
		for (t = 0; t < k->n_topics && strcmp(k->topics[t].name, r->v[i].topic) != 0; t++)
			;
		if (t == k->n_topics) {
			if (k->n_topics == NTOPICS) {
				fb_log_err("kafka: too many topics (%d); subscription %s (topic %s) gets "
					   "nothing", NTOPICS, r->v[i].sub.id, r->v[i].topic);
				continue;
			}
			snprintf(k->topics[t].own, sizeof(k->topics[t].own), "%s", r->v[i].topic);
			topic_index(k, k->topics[t].own);
			fresh = 1;
		}
		k->rsub_topic[keep] = t;
		if (keep != i) {
			r->v[keep] = r->v[i];
			memset(&r->v[i].sub, 0, sizeof(r->v[i].sub));
		}
		keep++;
	}
	for (size_t i = keep; i < r->n; i++)
		fb_rf_sub_free(&r->v[i].sub);
	r->n = keep;
	rsubs_free(k->rs);
	k->rs = r;
	return fresh;
}

static void *thread_main(void *arg)
{
	struct fb_kafka *k = arg;
	uint64_t retry_ms = RETRY_MIN_MS;
	int told_unreachable = 0;
	char err[512];
	while (!atomic_load(&k->stop)) {
		if (atomic_exchange(&k->rs_new, 0) && take_rsubs(k) && k->rk) {
			fb_log_info("kafka: a Redfish subscription names a new topic; re-creating the "
				    "producer to resume with it");
			pause_producer(k);
		}
		if (!k->rk && make_producer(k, err, sizeof(err))) {
			fb_log_err("kafka: cannot create the producer: %s", err);
			nap(k, RETRY_MAX_MS);
			continue;
		}
		if (!k->rd) {
			int rc = resume(k, err, sizeof(err));
			if (rc == 1) { /* Kafka answers; a topic is being created or has no leader */
				atomic_store(&k->dl.connected, 1);
				fb_kafka_delivery_set_error(&k->dl, "%s", err);
				if (k->topic_wait_logged++ == 20)
					fb_log_warn("kafka: waiting for %s", err);
				nap(k, RETRY_MIN_MS);
				continue;
			}
			if (rc) {
				atomic_store(&k->dl.connected, 0);
				fb_kafka_delivery_set_error(&k->dl, "%s", err);
				if (!told_unreachable)
					fb_log_warn("kafka: cannot reach %s: %s; events are kept in the journal "
						    "and sent when it is back (backlog %" PRIu64 ")",
						    k->cfg->kafka_brokers, err, backlog(k));
				told_unreachable = 1;
				k->was_connected = 0;
				if (k->rd)
					fb_journal_reader_close(k->rd);
				k->rd = NULL;
				nap(k, retry_ms);
				retry_ms = retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : retry_ms * 2;
				continue;
			}
			if (told_unreachable)
				fb_log_info("kafka: %s is back; %" PRIu64 " events wait in the journal",
					    k->cfg->kafka_brokers, backlog(k));
			told_unreachable = 0;
			k->was_connected = 1;
			retry_ms = RETRY_MIN_MS;
		}
		pump(k);
		struct pollfd pfd = { k->wake_r, POLLIN, 0 };
		uint64_t limit = atomic_load(&k->committed);
		int busy = !k->dl.failing && !k->cur.active && limit > k->cur.id && !fb_kafka_delivery_full(&k->dl);
		poll(&pfd, 1, busy ? 0 : (int)(k->cfg->kafka_cursor_sync_ms < 100 ? k->cfg->kafka_cursor_sync_ms : 100));
		drain_wake(k);
		serve(k);
		fb_kafka_delivery_advance(&k->dl);
		housekeeping(k, fb_kafka_now_ms());
		if (k->dl.failing) {
			pause_producer(k);
			nap(k, FB_KAFKA_PAUSE_BACKOFF_MS);
		}
	}
	/* Clean stop: bounded flush, then the cursor. */
	if (k->rk) {
		uint64_t end = fb_kafka_now_ms() + (uint64_t)k->flush_ms;
		while (fb_kafka_delivery_in_flight(&k->dl) && fb_kafka_now_ms() < end) {
			rd_kafka_poll(k->rk, 50);
			fb_kafka_delivery_advance(&k->dl);
			if (k->dl.failing)
				break;
		}
		fb_kafka_delivery_advance(&k->dl);
		if (fb_kafka_delivery_in_flight(&k->dl))
			fb_log_warn("kafka: stopping with %" PRIu64 " events not yet acknowledged by Kafka; "
				    "they are resent (or found in Kafka) at the next start",
				    fb_kafka_delivery_in_flight(&k->dl));
		rd_kafka_purge(k->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
		serve(k);
	}
	fb_kafka_delivery_save(&k->dl);
	fb_log_info("kafka: stopped at cursor %" PRIu64 " (%" PRIu64 " produced, %" PRIu64 " delivered)",
		    atomic_load(&k->dl.cursor), atomic_load(&k->produced), atomic_load(&k->dl.delivered));
	drop_producer(k);
	return NULL;
}

/* ---- the loop side ---- */

static unsigned topic_index(struct fb_kafka *k, const char *name)
{
	for (unsigned i = 0; i < k->n_topics; i++)
		if (strcmp(k->topics[i].name, name) == 0)
			return i;
	k->topics[k->n_topics].name = name;
	return k->n_topics++;
}

int fb_kafka_start(const struct fb_config *cfg, uint64_t epoch, uint64_t committed_id,
		   struct fb_kafka **out)
{
	struct fb_kafka *k = calloc(1, sizeof(*k));
	int fds[2] = { -1, -1 };
	if (!k || pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
		free(k);
		fb_log_err("kafka: cannot start: %s", strerror(errno));
		return -ENOMEM;
	}
	k->cfg = cfg;
	pthread_mutex_init(&k->rs_mu, NULL);
	snprintf(k->epoch_hex, sizeof(k->epoch_hex), "%016" PRIx64, epoch);
	k->wake_r = fds[0];
	k->wake_w = fds[1];
	atomic_store(&k->committed, committed_id);
	for (unsigned i = 0; i < cfg->kafka_map.n; i++)
		k->route_topic[i] = topic_index(k, cfg->kafka_map.route[i].topic);
	for (unsigned i = 0; i < cfg->n_kafka_subs; i++)
		k->sub_topic[i] = topic_index(k, cfg->kafka_subs[i].topic);
	int rc = fb_kafka_delivery_init(&k->dl, cfg->journal_dir, epoch, committed_id) ? ENOMEM : 0;
	uint64_t c = atomic_load(&k->dl.cursor);
	k->cur.id = c;
	if (!rc)
		rc = pthread_create(&k->thread, NULL, thread_main, k);
	if (rc) {
		fb_log_err("kafka: cannot start its thread: %s", strerror(rc));
		k->thread_started = 0;
		fb_kafka_stop(k, 0);
		return -rc;
	}
	k->thread_started = 1;
	fb_log_info("kafka: producing to %s from EventId %" PRIu64 " (backlog %" PRIu64 " events, "
		    "%u topics)",
		    cfg->kafka_brokers, c + 1, committed_id - c, k->n_topics);
	*out = k;
	return 0;
}

void fb_kafka_stop(struct fb_kafka *k, int flush_ms)
{
	if (!k)
		return;
	k->flush_ms = flush_ms;
	atomic_store(&k->stop, 1);
	if (k->thread_started) {
		wake(k);
		pthread_join(k->thread, NULL);
	}
	fb_buf_free(&k->json);
	close(k->wake_r);
	close(k->wake_w);
	fb_kafka_delivery_free(&k->dl);
	rsubs_free(k->rs);
	rsubs_free(k->rs_next);
	pthread_mutex_destroy(&k->rs_mu);
	free(k);
}

void fb_kafka_get_stats(struct fb_kafka *k, struct fb_kafka_stats *st)
{
	fb_kafka_delivery_stats(&k->dl, st);
	st->committed = atomic_load(&k->committed);
	st->produced = atomic_load(&k->produced);
	st->skipped = atomic_load(&k->skipped);
}

const char *fb_kafka_brokers(const struct fb_kafka *k) { return k->cfg->kafka_brokers; }

int fb_kafka_set_rsubs(struct fb_kafka *k, const struct fb_rf_store *st)
{
	struct rsubs *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < st->n; i++) {
		const struct fb_rf_sub *s = st->v[i];
		if (s->protocol != FB_RF_PROTO_KAFKA || !s->enabled)
			continue;
		if (r->n == FB_KAFKA_RSUBS_MAX) {
			fb_log_err("kafka: more than %d Kafka subscriptions; %s and later ones get nothing",
				   FB_KAFKA_RSUBS_MAX, s->id);
			break;
		}
		/* A deep copy: jansson's references are not the Kafka thread's. */
		json_t *copy = json_deep_copy(s->doc);
		struct fb_rf_error e;
		int rc = copy ? fb_rf_sub_build(copy, FB_RF_SUB_LOAD, NULL, &r->v[r->n].sub, &e) : -ENOMEM;
		json_decref(copy);
		if (rc) {
			rsubs_free(r);
			return -ENOMEM;
		}
		snprintf(r->v[r->n].topic, sizeof(r->v[0].topic), "%s", s->context);
		r->n++;
	}
	pthread_mutex_lock(&k->rs_mu);
	rsubs_free(k->rs_next);
	k->rs_next = r;
	pthread_mutex_unlock(&k->rs_mu);
	atomic_store(&k->rs_new, 1);
	wake(k);
	return 0;
}

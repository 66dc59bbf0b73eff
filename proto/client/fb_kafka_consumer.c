/* fb_kafka_consumer.c - see fb_kafka_consumer.h.
 *
 * librdkafka runs with enable.auto.commit=false and
 * enable.auto.offset.store=false: an offset is stored (rd_kafka_offset_store,
 * which stores offset + 1) only once the callback said the message is done,
 * and stored offsets are committed by us, after before_commit. The main queue
 * is redirected to the consumer queue (rd_kafka_poll_set_consumer) so the
 * error, commit and rebalance callbacks all run inside rd_kafka_consumer_poll
 * on the caller's thread. librdkafka's own log lines come from its threads;
 * fb_log is thread-safe.
 */
#include "fb_kafka_consumer.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_log.h"

#include <librdkafka/rdkafka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KC_BATCH 1024
#define KC_SEEK_TIMEOUT_MS 5000

struct kc_seen {
	char broker[24];
	char *topic;
	int32_t partition;
	uint64_t event_id;
};

struct fb_kc {
	rd_kafka_t *rk;
	char *brokers, *group; /* for messages */
	int skip_seen;
	int (*before_commit)(void *arg);
	void *before_commit_arg;
	int no_commit;         /* before_commit failed once: never commit again */
	int fatal;             /* 0 or FB_KC_EFATAL */
	int eager;             /* rebalance protocol is not COOPERATIVE */
	struct kc_seen *seen;
	size_t n_seen, cap_seen;
	uint64_t bad_event_id; /* malformed fabricbus-event-id headers */
	struct fb_kc_counters c;
};

/* ---- logging ------------------------------------------------------------ */

/* librdkafka levels are syslog's: 0..3 error, 4 warning, 5..6 info, 7 debug. */
static void kc_rd_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	int l = level <= 3 ? FB_LOG_ERR : level == 4 ? FB_LOG_WARN : level <= 6 ? FB_LOG_INFO
									   : FB_LOG_DEBUG;

	/* FAIL lines come again, better worded, through kc_on_error. */
	if (l > fb_log_level() || (!strcmp(fac, "FAIL") && fb_log_level() < FB_LOG_DEBUG))
		return;
	fb_log(l, "kafka %s: %s: %s", rd_kafka_name(rk), fac, buf);
}

/* "t[0,1,2] u[3]" into b, NUL-terminated; on allocation failure b is left
 * empty (data NULL) and callers print "?". The list is sorted. */
static void kc_format_parts(struct fb_buf *b, const rd_kafka_topic_partition_list_t *l)
{
	const char *prev = NULL;
	int r = 0;

	for (int i = 0; i < l->cnt && !r; i++) {
		const rd_kafka_topic_partition_t *p = &l->elems[i];

		if (!prev || strcmp(prev, p->topic)) {
			r = fb_buf_printf(b, "%s%s[%" PRId32, prev ? "] " : "", p->topic,
					  p->partition);
			prev = p->topic;
		} else {
			r = fb_buf_printf(b, ",%" PRId32, p->partition);
		}
	}
	if (r || fb_buf_puts(b, prev ? "]" : "(none)") || fb_buf_put_u8(b, 0))
		fb_buf_free(b);
}

/* ---- commits ------------------------------------------------------------ */

/* The offsets handled so far, as an explicit list: the position of every
 * assigned partition (the next offset poll would return). Every message poll
 * returned before this point has been through the callback, so this is what
 * was handled. Only partitions with a position are listed; NULL if none. */
static rd_kafka_topic_partition_list_t *kc_handled_offsets(struct fb_kc *kc, rd_kafka_resp_err_t *e)
{
	rd_kafka_topic_partition_list_t *asg = NULL, *out = NULL;

	*e = rd_kafka_assignment(kc->rk, &asg);
	if (!*e)
		*e = rd_kafka_position(kc->rk, asg);
	for (int i = 0; !*e && i < asg->cnt; i++) {
		if (asg->elems[i].offset < 0)
			continue;
		if (!out)
			out = rd_kafka_topic_partition_list_new(asg->cnt);
		rd_kafka_topic_partition_list_add(out, asg->elems[i].topic, asg->elems[i].partition)
			->offset = asg->elems[i].offset;
	}
	if (asg)
		rd_kafka_topic_partition_list_destroy(asg);
	return out;
}

/* Commit what was handled. Callers log the context; we log the failure. */
static int kc_commit(struct fb_kc *kc, int async, const char *why)
{
	rd_kafka_resp_err_t e;
	rd_kafka_topic_partition_list_t *offs;

	if (kc->no_commit || kc->fatal)
		return kc->fatal ? kc->fatal : FB_KC_ECOMMIT;
	if (kc->before_commit && kc->before_commit(kc->before_commit_arg)) {
		kc->no_commit = 1;
		fb_log_err("kafka consumer group %s: not committing offsets (%s): the output of "
			   "the events they cover could not be written; those events will be "
			   "delivered again", kc->group, why);
		return FB_KC_ECOMMIT;
	}
	/* An explicit snapshot, taken now, right after before_commit: with NULL,
	 * librdkafka reads the stored offsets later on its own thread, and an
	 * async commit could then cover events handled (and not yet written)
	 * after this flush — a member killed at that moment loses them. */
	offs = kc_handled_offsets(kc, &e);
	if (!e && offs)
		e = rd_kafka_commit(kc->rk, offs, async);
	if (offs)
		rd_kafka_topic_partition_list_destroy(offs);
	if (e == RD_KAFKA_RESP_ERR_NO_ERROR || e == RD_KAFKA_RESP_ERR__NO_OFFSET)
		return 0;
	kc->c.commit_failures++;
	fb_log_warn("kafka consumer group %s on %s: offset commit (%s) failed: %s; the "
		    "uncommitted events will be delivered again", kc->group, kc->brokers, why,
		    rd_kafka_err2str(e));
	return e == RD_KAFKA_RESP_ERR__FATAL ? FB_KC_EFATAL : -EIO;
}

/* Async commit results (sync ones are reported by kc_commit too, but only
 * here do we see per-partition errors). */
static void kc_on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
			 rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
	struct fb_kc *kc = opaque;

	(void)rk;
	if (err == RD_KAFKA_RESP_ERR__NO_OFFSET)
		return;
	if (err) {
		kc->c.commit_failures++;
		fb_log_warn("kafka consumer group %s on %s: offset commit failed: %s; the "
			    "uncommitted events will be delivered again", kc->group, kc->brokers,
			    rd_kafka_err2str(err));
		return;
	}
	for (int i = 0; offsets && i < offsets->cnt; i++) {
		const rd_kafka_topic_partition_t *p = &offsets->elems[i];

		if (p->err) {
			kc->c.commit_failures++;
			fb_log_warn("kafka consumer group %s on %s: commit of %s[%" PRId32 "] offset "
				    "%" PRId64 " failed: %s", kc->group, kc->brokers, p->topic,
				    p->partition, p->offset, rd_kafka_err2str(p->err));
		}
	}
}

/* ---- rebalances and errors ---------------------------------------------- */

static void kc_on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
			    rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	struct fb_kc *kc = opaque;
	struct fb_buf b = FB_BUF_INIT;
	rd_kafka_error_t *e = NULL;
	rd_kafka_resp_err_t ae = RD_KAFKA_RESP_ERR_NO_ERROR;

	kc->eager = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") != 0;
	rd_kafka_topic_partition_list_sort(parts, NULL, NULL);
	kc_format_parts(&b, parts);
	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		kc->c.assignments++;
		/* Cooperative rebalances often hand out nothing new: not news. */
		fb_log(parts->cnt || kc->eager ? FB_LOG_INFO : FB_LOG_DEBUG,
		       "kafka consumer group %s on %s: assigned %s", kc->group, kc->brokers,
		       b.data ? (char *)b.data : "?");
		if (kc->eager)
			ae = rd_kafka_assign(rk, parts);
		else
			e = rd_kafka_incremental_assign(rk, parts);
		if (!e && !ae)
			kc->c.assigned = kc->eager ? parts->cnt : kc->c.assigned + parts->cnt;
	} else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
		int lost = rd_kafka_assignment_lost(rk);

		kc->c.revocations++;
		fb_log_info("kafka consumer group %s on %s: %s %s", kc->group, kc->brokers,
			    lost ? "lost (session timed out; their uncommitted events go to the "
				   "new owner)" : "revoked", b.data ? (char *)b.data : "?");
		/* Hand over exactly what we finished: the next owner starts there. */
		if (!lost)
			kc_commit(kc, 0, "partitions revoked");
		if (kc->eager)
			ae = rd_kafka_assign(rk, NULL);
		else
			e = rd_kafka_incremental_unassign(rk, parts);
		kc->c.assigned = kc->eager ? 0 : kc->c.assigned - parts->cnt;
	} else {
		kc->c.errors++;
		fb_log_err("kafka consumer group %s on %s: rebalance failed: %s; dropping the "
			   "assignment", kc->group, kc->brokers, rd_kafka_err2str(err));
		ae = rd_kafka_assign(rk, NULL);
		kc->c.assigned = 0;
	}
	if (e || ae) {
		kc->c.errors++;
		fb_log_err("kafka consumer group %s on %s: applying the assignment %s failed: %s",
			   kc->group, kc->brokers, b.data ? (char *)b.data : "?",
			   e ? rd_kafka_error_string(e) : rd_kafka_err2str(ae));
		if (e)
			rd_kafka_error_destroy(e);
	}
	fb_buf_free(&b);
}

static void kc_set_fatal(struct fb_kc *kc, const char *where)
{
	char why[512];
	rd_kafka_resp_err_t e = rd_kafka_fatal_error(kc->rk, why, sizeof(why));

	if (kc->fatal)
		return;
	kc->fatal = FB_KC_EFATAL;
	fb_log_err("kafka consumer group %s on %s: fatal error%s%s: %s (%s); the consumer "
		   "cannot continue", kc->group, kc->brokers, where ? " on " : "",
		   where ? where : "", e ? why : "unknown", rd_kafka_err2name(e));
}

/* Client-wide errors (brokers down, authentication): librdkafka retries
 * them itself, so only __FATAL ends the consumer. */
static void kc_on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	struct fb_kc *kc = opaque;

	(void)rk;
	if (err == RD_KAFKA_RESP_ERR__FATAL) {
		kc_set_fatal(kc, NULL);
		return;
	}
	kc->c.errors++;
	fb_log_warn("kafka consumer group %s on %s: %s (%s)%s", kc->group, kc->brokers, reason,
		    rd_kafka_err2name((rd_kafka_resp_err_t)err),
		    err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ? "; retrying, check that the "
		    "brokers are up and reachable" : "");
}

/* A message that carries an error instead of data. Returns FB_KC_EFATAL for
 * errors that need an operator (authorization), else 0 after logging. */
static int kc_msg_error(struct fb_kc *kc, const rd_kafka_message_t *m)
{
	const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : NULL;
	char where[300];

	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
		return 0;
	if (topic && m->offset >= 0)
		snprintf(where, sizeof(where), "%s[%" PRId32 "] offset %" PRId64, topic,
			 m->partition, m->offset);
	else if (topic)
		snprintf(where, sizeof(where), "%s[%" PRId32 "]", topic, m->partition);
	else
		snprintf(where, sizeof(where), "the consumer");
	if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
		kc_set_fatal(kc, where);
		return FB_KC_EFATAL;
	}
	kc->c.errors++;
	if (m->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
	    m->err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
		fb_log_err("kafka consumer group %s on %s: %s: %s; grant this principal read on "
			   "the topic and the group", kc->group, kc->brokers, where,
			   rd_kafka_message_errstr(m));
		kc->fatal = FB_KC_EFATAL;
		return FB_KC_EFATAL;
	}
	fb_log_warn("kafka consumer group %s on %s: %s: %s (%s)%s", kc->group, kc->brokers, where,
		    rd_kafka_message_errstr(m), rd_kafka_err2name(m->err),
		    m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ? "; waiting for the topic "
		    "to be created" : "");
	return 0;
}

/* ---- messages ------------------------------------------------------------- */

/* Header value as a NUL-terminated string in buf ("" if absent; truncated). */
static void kc_header(rd_kafka_headers_t *h, const char *name, char *buf, size_t bufsz)
{
	const void *v;
	size_t n;

	buf[0] = '\0';
	if (!h || rd_kafka_header_get_last(h, name, &v, &n) || !v)
		return;
	if (n >= bufsz)
		n = bufsz - 1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	buf[strnlen(buf, n)] = '\0'; /* an embedded NUL ends it */
}

static uint64_t kc_parse_id(struct fb_kc *kc, const char *s, const struct fb_kc_msg *m)
{
	uint64_t v = 0;
	const char *p = s;

	if (!*s)
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			break;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (!*p)
		return v;
	if (!kc->bad_event_id++)
		fb_log_warn("kafka consumer group %s: %s[%" PRId32 "] offset %" PRId64 ": header "
			    "fabricbus-event-id '%.32s' is not a decimal EventId; treating it as "
			    "absent (logged once)", kc->group, m->topic, m->partition, m->offset, s);
	return 0;
}

/* skip_seen: 1 if (broker, topic, partition) already did an EventId >= id. */
static int kc_seen(struct fb_kc *kc, const struct fb_kc_msg *m, int update)
{
	struct kc_seen *s = NULL;

	if (!m->event_id || !m->broker[0])
		return 0;
	for (size_t i = 0; i < kc->n_seen && !s; i++)
		if (kc->seen[i].partition == m->partition && !strcmp(kc->seen[i].broker, m->broker) &&
		    !strcmp(kc->seen[i].topic, m->topic))
			s = &kc->seen[i];
	if (!update)
		return s && m->event_id <= s->event_id;
	if (!s) {
		if (kc->n_seen == kc->cap_seen) {
			size_t cap = kc->cap_seen ? kc->cap_seen * 2 : 16;
			struct kc_seen *ns = realloc(kc->seen, cap * sizeof(*ns));

			if (!ns)
				return 0; /* best effort: just no high-water for it */
			kc->seen = ns;
			kc->cap_seen = cap;
		}
		s = &kc->seen[kc->n_seen];
		if (!(s->topic = strdup(m->topic)))
			return 0;
		snprintf(s->broker, sizeof(s->broker), "%s", m->broker);
		s->partition = m->partition;
		s->event_id = 0;
		kc->n_seen++;
	}
	if (m->event_id > s->event_id)
		s->event_id = m->event_id;
	return 0;
}

/* Put the partition back at m so it is fetched again: it was not done. */
static void kc_rewind(struct fb_kc *kc, const rd_kafka_message_t *rm, const char *topic)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_error_t *e;

	if (!l)
		goto fail;
	rd_kafka_topic_partition_list_add(l, topic, rm->partition)->offset = rm->offset;
	e = rd_kafka_seek_partitions(kc->rk, l, KC_SEEK_TIMEOUT_MS);
	if (!e && !l->elems[0].err) {
		rd_kafka_topic_partition_list_destroy(l);
		return;
	}
	fb_log_err("kafka consumer group %s: cannot rewind %s[%" PRId32 "] to offset %" PRId64
		   ": %s", kc->group, topic, rm->partition, rm->offset,
		   e ? rd_kafka_error_string(e) : rd_kafka_err2str(l->elems[0].err));
	if (e)
		rd_kafka_error_destroy(e);
	rd_kafka_topic_partition_list_destroy(l);
fail:
	/* Later offsets of this partition must not be committed past it. */
	kc->no_commit = 1;
	fb_log_err("kafka consumer group %s: committing no more offsets; restart the consumer "
		   "to get the undone event again", kc->group);
}

/* One data message: decode, hand over, store. Returns cb's value (0,
 * FB_KC_STOP, negative). */
static int kc_deliver(struct fb_kc *kc, rd_kafka_message_t *rm, fb_kc_cb cb, void *arg, int *stored)
{
	rd_kafka_headers_t *h = NULL;
	char id[32], broker[24], sev[16], agent[64];
	struct fb_kc_msg m;
	rd_kafka_resp_err_t e;
	int r;

	if (rd_kafka_message_headers(rm, &h))
		h = NULL;
	kc_header(h, "fabricbus-event-id", id, sizeof(id));
	kc_header(h, "fabricbus-broker", broker, sizeof(broker));
	kc_header(h, "fabricbus-severity", sev, sizeof(sev));
	kc_header(h, "fabricbus-agent-id", agent, sizeof(agent));
	memset(&m, 0, sizeof(m));
	m.topic = rd_kafka_topic_name(rm->rkt);
	m.partition = rm->partition;
	m.offset = rm->offset;
	m.timestamp_ms = rd_kafka_message_timestamp(rm, NULL);
	m.key = rm->key;
	m.key_len = rm->key ? rm->key_len : 0;
	m.value = rm->payload;
	m.value_len = rm->payload ? rm->len : 0;
	m.broker = broker;
	m.severity = sev;
	m.agent_id = agent;
	m.event_id = kc_parse_id(kc, id, &m);

	if (kc->skip_seen && kc_seen(kc, &m, 0)) {
		kc->c.skipped++;
		r = 0;
	} else {
		r = cb(&m, arg);
		if (r < 0) {
			kc_rewind(kc, rm, m.topic);
			return r;
		}
		kc->c.messages++;
		if (kc->skip_seen)
			kc_seen(kc, &m, 1);
	}
	e = rd_kafka_offset_store(rm->rkt, rm->partition, rm->offset);
	if (e) /* revoked meanwhile: the next owner gets it again */
		fb_log_warn("kafka consumer group %s: cannot store offset %" PRId64 " of %s[%" PRId32
			    "]: %s; it will be delivered again", kc->group, rm->offset, m.topic,
			    rm->partition, rd_kafka_err2str(e));
	else
		(*stored)++;
	return r;
}

int fb_kc_poll(struct fb_kc *kc, int timeout_ms, fb_kc_cb cb, void *arg)
{
	int n = 0, stored = 0, r = 0;

	if (kc->fatal)
		return kc->fatal;
	for (int i = 0; i < KC_BATCH && !kc->fatal; i++) {
		rd_kafka_message_t *rm = rd_kafka_consumer_poll(kc->rk, i ? 0 : timeout_ms);

		if (!rm)
			break;
		if (rm->err) {
			r = kc_msg_error(kc, rm);
			rd_kafka_message_destroy(rm);
			if (r)
				break;
			continue;
		}
		r = kc_deliver(kc, rm, cb, arg, &stored);
		rd_kafka_message_destroy(rm);
		if (r < 0)
			break;
		n++;
		if (r == FB_KC_STOP)
			break;
	}
	if (stored) {
		int cr = kc_commit(kc, 1, "after processing");

		if (cr == FB_KC_ECOMMIT || cr == FB_KC_EFATAL)
			return r < 0 ? r : cr;
	}
	if (kc->fatal)
		return kc->fatal;
	return r < 0 ? r : n;
}

/* ---- life cycle ----------------------------------------------------------- */

static int kc_set(rd_kafka_conf_t *conf, const char *name, const char *value, char *err,
		  size_t errsz)
{
	char why[256];

	if (rd_kafka_conf_set(conf, name, value, why, sizeof(why)) == RD_KAFKA_CONF_OK)
		return 0;
	return fb_err_set(err, errsz, FB_ECONFIG,
			  "librdkafka property %s=%s: %s", name, value, why);
}

static int kc_conf(const struct fb_kc_opts *o, rd_kafka_conf_t *conf, char *err, size_t errsz)
{
	int st = o->session_timeout_ms > 0 ? o->session_timeout_ms : 10000;
	char sts[16], hbs[16];

	snprintf(sts, sizeof(sts), "%d", st);
	snprintf(hbs, sizeof(hbs), "%d", st / 3 < 3000 ? st / 3 : 3000);
	if (kc_set(conf, "bootstrap.servers", o->brokers, err, errsz) ||
	    kc_set(conf, "group.id", o->group_id, err, errsz) ||
	    kc_set(conf, "client.id", o->client_id ? o->client_id : "fabricbus-consumer", err,
		   errsz) ||
	    kc_set(conf, "auto.offset.reset", o->from_beginning ? "earliest" : "latest", err,
		   errsz) ||
	    kc_set(conf, "session.timeout.ms", sts, err, errsz) ||
	    kc_set(conf, "heartbeat.interval.ms", hbs, err, errsz) ||
	    kc_set(conf, "enable.auto.commit", "false", err, errsz) ||
	    kc_set(conf, "enable.auto.offset.store", "false", err, errsz))
		return FB_ECONFIG;
	for (size_t i = 0; i < o->n_props; i++) {
		const struct fb_kc_prop *p = &o->props[i];

		if (!strcmp(p->name, "enable.auto.commit") ||
		    !strcmp(p->name, "enable.auto.offset.store")) {
			return fb_err_set(err, errsz, FB_ECONFIG,
					  "librdkafka property %s is managed by fabricbus: offsets "
					  "are committed only after each event is handled (at-least-once)",
					  p->name);
		}
		if (!strcmp(p->name, "group.id") || !strcmp(p->name, "bootstrap.servers"))
			return fb_err_set(err, errsz, FB_ECONFIG,
					  "librdkafka property %s is set by its own option",
					  p->name);
		if (kc_set(conf, p->name, p->value, err, errsz))
			return FB_ECONFIG;
	}
	return 0;
}

int fb_kc_new(const struct fb_kc_opts *o, struct fb_kc **out, char *err, size_t errsz)
{
	struct fb_kc *kc;
	rd_kafka_conf_t *conf;
	rd_kafka_topic_partition_list_t *tl;
	rd_kafka_resp_err_t e;
	char why[512];
	int r;

	*out = NULL;
	if (!o->brokers || !*o->brokers || !o->group_id || !*o->group_id || !o->n_topics)
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "brokers, group id and at least one topic are required");
	if (!(kc = calloc(1, sizeof(*kc))) || !(conf = rd_kafka_conf_new())) {
		free(kc);
		return fb_err_set(err, errsz, -ENOMEM, "out of memory");
	}
	kc->brokers = strdup(o->brokers);
	kc->group = strdup(o->group_id);
	kc->skip_seen = o->skip_seen;
	kc->before_commit = o->before_commit;
	kc->before_commit_arg = o->before_commit_arg;
	kc->eager = 1;
	r = kc->brokers && kc->group ? kc_conf(o, conf, err, errsz) : -ENOMEM;
	if (r) {
		if (r == -ENOMEM)
			fb_err_set(err, errsz, r, "out of memory");
		goto fail_conf;
	}
	rd_kafka_conf_set_opaque(conf, kc);
	rd_kafka_conf_set_log_cb(conf, kc_rd_log);
	rd_kafka_conf_set_error_cb(conf, kc_on_error);
	rd_kafka_conf_set_rebalance_cb(conf, kc_on_rebalance);
	rd_kafka_conf_set_offset_commit_cb(conf, kc_on_commit);
	kc->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof(why));
	if (!kc->rk) {
		r = fb_err_set(err, errsz, FB_ECONFIG, "cannot create the Kafka consumer: %s", why);
		goto fail_conf;
	}
	/* conf is now owned by rk */
	rd_kafka_poll_set_consumer(kc->rk);
	if (!(tl = rd_kafka_topic_partition_list_new((int)o->n_topics))) {
		r = fb_err_set(err, errsz, -ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < o->n_topics; i++)
		rd_kafka_topic_partition_list_add(tl, o->topics[i], RD_KAFKA_PARTITION_UA);
	e = rd_kafka_subscribe(kc->rk, tl);
	rd_kafka_topic_partition_list_destroy(tl);
	if (e) {
		r = fb_err_set(err, errsz, e == RD_KAFKA_RESP_ERR__INVALID_ARG ? FB_ECONFIG : -EIO,
			       "cannot subscribe: %s", rd_kafka_err2str(e));
		goto fail;
	}
	fb_log_info("kafka consumer group %s on %s: subscribed (%zu topic%s), waiting for an "
		    "assignment", kc->group, kc->brokers, o->n_topics, o->n_topics == 1 ? "" : "s");
	*out = kc;
	return 0;
fail_conf:
	rd_kafka_conf_destroy(conf);
fail:
	if (kc->rk)
		rd_kafka_destroy(kc->rk);
	free(kc->brokers);
	free(kc->group);
	free(kc);
	return r;
}

int fb_kc_close(struct fb_kc *kc)
{
	rd_kafka_resp_err_t e;
	int r;

	if (!kc)
		return 0;
	r = kc_commit(kc, 0, "closing");
	if (r == FB_KC_ECOMMIT && kc->no_commit)
		r = 0; /* already reported when it happened */
	/* Revokes (committing again, a no-op) and sends LeaveGroup, so the other
	 * members rebalance now instead of after session.timeout.ms. */
	e = rd_kafka_consumer_close(kc->rk);
	if (e) {
		fb_log_warn("kafka consumer group %s on %s: closing the consumer: %s", kc->group,
			    kc->brokers, rd_kafka_err2str(e));
		if (!r)
			r = -EIO;
	}
	rd_kafka_destroy(kc->rk);
	for (size_t i = 0; i < kc->n_seen; i++)
		free(kc->seen[i].topic);
	free(kc->seen);
	free(kc->brokers);
	free(kc->group);
	free(kc);
	return r;
}

void fb_kc_get_counters(const struct fb_kc *kc, struct fb_kc_counters *c)
{
	*c = kc->c;
}

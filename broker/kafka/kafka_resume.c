/* kafka_resume.c - the highest EventId of ours in each (topic, partition). */
#include "kafka_resume.h"

#include "fb_err.h"
#include "fb_event.h"
#include "fb_log.h"
#include "kafka_conf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW_FIRST 64
#define WINDOW_GROWTH 4
#define ROUND_TIMEOUT_MS 30000
#define WATERMARK_TIMEOUT_MS 5000

struct part {
	unsigned t;
	int32_t p;
	int64_t lo, end; /* still to look at: [lo, end) */
	int64_t start;   /* this round reads [start, end) */
	int64_t window;
	int done, round_done;
};

/* A header value as a NUL-terminated string, or "" when absent/too long. */
static void header(rd_kafka_headers_t *h, const char *name, char *out, size_t outsz)
{
	const void *v;
	size_t n;
	out[0] = '\0';
	if (h && rd_kafka_header_get_last(h, name, &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR && v &&
	    n < outsz) {
		memcpy(out, v, n);
		out[n] = '\0';
	}
}

static void look_at(const rd_kafka_message_t *m, const char *epoch_hex, uint64_t *max)
{
	rd_kafka_headers_t *h = NULL;
	if (rd_kafka_message_headers(m, &h) != RD_KAFKA_RESP_ERR_NO_ERROR)
		return;
	char broker[32], id[32];
	header(h, "fabricbus-broker", broker, sizeof(broker));
	if (strcmp(broker, epoch_hex) != 0)
		return;
	header(h, "fabricbus-event-id", id, sizeof(id));
	char *end;
	uint64_t v = strtoull(id, &end, 10);
	if (id[0] && !*end && v > *max)
		*max = v;
}

static struct part *find(struct part *ps, size_t n, const struct fb_kafka_resume_topic *t,
			 const rd_kafka_message_t *m)
{
	const char *name = rd_kafka_topic_name(m->rkt);
	for (size_t i = 0; i < n; i++)
		if (ps[i].p == m->partition && strcmp(t[ps[i].t].name, name) == 0)
			return &ps[i];
	return NULL;
}

/* Read every unfinished partition's window once. */
static int round_once(rd_kafka_t *c, struct part *ps, size_t n, struct fb_kafka_resume_topic *t,
		      const char *epoch_hex, const atomic_int *stop, uint64_t *read_msgs, char *err,
		      size_t errsz)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)n);
	size_t pending = 0;
	for (size_t i = 0; i < n; i++) {
		struct part *x = &ps[i];
		x->round_done = x->done;
		if (x->done)
			continue;
		x->start = x->end - x->window > x->lo ? x->end - x->window : x->lo;
		rd_kafka_topic_partition_list_add(l, t[x->t].name, x->p)->offset = x->start;
		pending++;
	}
	rd_kafka_resp_err_t e = rd_kafka_assign(c, l);
	rd_kafka_topic_partition_list_destroy(l);
	if (e)
		return fb_err_set(err, errsz, -1, "assign: %s", rd_kafka_err2str(e));
	uint64_t deadline = fb_now_ns() + (uint64_t)ROUND_TIMEOUT_MS * 1000000ull;
	int rc = 0;
	while (pending && !rc) {
		if (atomic_load(stop)) {
			rc = FB_EAGAIN;
			break;
		}
		if (fb_now_ns() > deadline) {
			rc = fb_err_set(err, errsz, -1,
					"reading back %zu partition(s) timed out after %d s", pending,
					ROUND_TIMEOUT_MS / 1000);
			break;
		}
		rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 200);
		if (!m)
			continue;
		struct part *x = m->rkt ? find(ps, n, t, m) : NULL;
		if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			if (x && !x->round_done) {
				x->round_done = 1;
				pending--;
			}
		} else if (m->err) {
			rc = fb_err_set(err, errsz, -1,
					"%s [%" PRId32 "]: %s", m->rkt ? rd_kafka_topic_name(m->rkt) : "?",
					m->partition, rd_kafka_message_errstr(m));
		} else if (x && !x->round_done) {
			(*read_msgs)++;
			if (m->offset < x->end)
				look_at(m, epoch_hex, &t[x->t].max[x->p]);
			if (m->offset >= x->end - 1) {
				x->round_done = 1;
				pending--;
			}
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_assign(c, NULL);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct part *x = &ps[i];
		if (x->done)
			continue;
		/* Found one of ours: it is the highest (our messages are in order). */
		if (t[x->t].max[x->p] || x->start == x->lo)
			x->done = 1;
		x->end = x->start;
		x->window *= WINDOW_GROWTH;
	}
	return 0;
}

static rd_kafka_t *consumer_new(const struct fb_config *cfg, char *err, size_t errsz)
{
	char why[512];
	rd_kafka_conf_t *conf = fb_kafka_conf_new(cfg, why, sizeof(why));
	if (!conf) {
		fb_err_set(err, errsz, FB_ECONFIG, "%s", why);
		return NULL;
	}
	/* assign() needs a group id; this consumer never joins nor commits. */
	if (fb_kafka_conf_set(conf, "group.id", "fabricbus-resume", why, sizeof(why)) ||
	    fb_kafka_conf_set(conf, "enable.auto.commit", "false", why, sizeof(why)) ||
	    fb_kafka_conf_set(conf, "enable.auto.offset.store", "false", why, sizeof(why)) ||
	    fb_kafka_conf_set(conf, "enable.partition.eof", "true", why, sizeof(why)) ||
	    fb_kafka_conf_set(conf, "client.id", "fabricbusd-resume", why, sizeof(why))) {
		rd_kafka_conf_destroy(conf);
		fb_err_set(err, errsz, FB_ECONFIG, "%s", why);
		return NULL;
	}
	return fb_kafka_new(RD_KAFKA_CONSUMER, conf, err, errsz);
}

int fb_kafka_resume_scan(const struct fb_config *cfg, const char *epoch_hex,
			 struct fb_kafka_resume_topic *t, unsigned nt, const atomic_int *stop,
			 uint64_t *read_msgs, char *err, size_t errsz)
{
	size_t n = 0;
	for (unsigned i = 0; i < nt; i++)
		n += (size_t)t[i].partitions;
	struct part *ps = calloc(n ? n : 1, sizeof(*ps));
	if (!ps)
		return fb_err_set(err, errsz, -12, "out of memory");
	rd_kafka_t *c = consumer_new(cfg, err, errsz);
	int rc = c ? 0 : FB_ECONFIG;
	size_t k = 0;
	for (unsigned i = 0; !rc && i < nt; i++)
		for (int32_t p = 0; !rc && p < t[i].partitions; p++) {
			struct part *x = &ps[k++];
			t[i].max[p] = 0;
			x->t = i;
			x->p = p;
			x->window = WINDOW_FIRST;
			rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(
				c, t[i].name, p, &x->lo, &x->end, WATERMARK_TIMEOUT_MS);
			if (e)
				rc = fb_err_set(err, errsz, -1,
						"%s [%" PRId32 "]: watermarks: %s", t[i].name, p,
						rd_kafka_err2str(e));
			x->done = x->end <= x->lo;
		}
	for (int r = 0; !rc && r < 64; r++) {
		size_t left = 0;
		for (size_t i = 0; i < n; i++)
			left += !ps[i].done;
		if (!left)
			break;
		rc = round_once(c, ps, n, t, epoch_hex, stop, read_msgs, err, errsz);
	}
	if (c) {
		rd_kafka_consumer_close(c);
		rd_kafka_destroy(c);
	}
	free(ps);
	return rc;
}

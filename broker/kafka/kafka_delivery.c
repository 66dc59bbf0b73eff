/* kafka_delivery.c - the in-flight ring, delivery reports and the cursor of
 * the Kafka sink (see kafka_delivery.h and docs/kafka.md).
 */
#include "kafka_delivery.h"

#include "fb_err.h"
#include "fb_log.h"
#include "fb_time.h"
#include "kafka_cursor.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING_BITS 18 /* events in flight */
#define RING_CAP (1u << RING_BITS)

struct fb_kafka_slot {
	uint64_t id;
	uint32_t outstanding;
	uint32_t failed;
};

uint64_t fb_kafka_now_ms(void) { return (uint64_t)fb_time_ms(); }

static struct fb_kafka_slot *slot(const struct fb_kafka_delivery *d, uint64_t seq)
{
	return &d->ring[seq & (RING_CAP - 1)];
}

static uint64_t initial_cursor(const char *journal_dir, uint64_t epoch)
{
	uint64_t c = 0;
	const char *why;
	int rc = fb_kafka_cursor_read(journal_dir, epoch, &c, &why);
	if (rc == -ENOENT)
		fb_log_info("kafka: no %s/kafka.cursor: first start with Kafka; the events retained in "
			    "the journal are sent, except those Kafka already holds",
			    journal_dir);
	else if (rc == FB_ECORRUPT)
		fb_log_warn("kafka: %s/kafka.cursor is unusable (%s): starting from the oldest retained "
			    "event; what Kafka already holds is skipped",
			    journal_dir, why);
	else if (rc)
		fb_log_warn("kafka: cannot read %s/kafka.cursor: %s: starting from the oldest retained "
			    "event; what Kafka already holds is skipped",
			    journal_dir, fb_strerror(rc));
	return rc ? 0 : c;
}

int fb_kafka_delivery_init(struct fb_kafka_delivery *d, const char *journal_dir, uint64_t epoch,
			   uint64_t committed_id)
{
	d->journal_dir = journal_dir;
	d->epoch = epoch;
	pthread_mutex_init(&d->err_mu, NULL);
	uint64_t c = initial_cursor(journal_dir, epoch);
	if (c > committed_id)
		c = committed_id; /* a cursor past the journal's end: the journal was cut */
	atomic_store(&d->cursor, c);
	d->cursor_saved = c;
	d->ring = calloc(RING_CAP, sizeof(*d->ring));
	return d->ring ? 0 : -ENOMEM;
}

void fb_kafka_delivery_free(struct fb_kafka_delivery *d)
{
	pthread_mutex_destroy(&d->err_mu);
	free(d->ring);
	d->ring = NULL;
}

void fb_kafka_delivery_set_error(struct fb_kafka_delivery *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&d->err_mu);
	vsnprintf(d->last_error, sizeof(d->last_error), fmt, ap);
	d->last_error_ms = fb_kafka_now_ms();
	pthread_mutex_unlock(&d->err_mu);
	va_end(ap);
}

void fb_kafka_delivery_clear_error(struct fb_kafka_delivery *d)
{
	pthread_mutex_lock(&d->err_mu);
	d->last_error[0] = '\0';
	pthread_mutex_unlock(&d->err_mu);
}

/* ---- librdkafka's callbacks (inside rd_kafka_poll, on the Kafka thread) ---- */

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)rk;
	struct fb_kafka_delivery *d = opaque;
	struct fb_kafka_slot *s = slot(d, (uint64_t)(uintptr_t)m->_private);
	if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
		atomic_fetch_add(&d->delivered, 1);
		atomic_store(&d->connected, 1);
	} else {
		s->failed = 1;
		d->failing = 1;
		/* A purge is our own pause or stop, not a Kafka error. */
		if (m->err != RD_KAFKA_RESP_ERR__PURGE_QUEUE && m->err != RD_KAFKA_RESP_ERR__PURGE_INFLIGHT) {
			atomic_fetch_add(&d->errors, 1);
			fb_kafka_delivery_set_error(d, "%s [%" PRId32 "] EventId %" PRIu64 ": %s",
						    rd_kafka_topic_name(m->rkt), m->partition, s->id,
						    rd_kafka_err2str(m->err));
			fb_log_err("kafka: delivery of EventId %" PRIu64 " to %s [%" PRId32 "] failed: %s; "
				   "production pauses at the cursor (%" PRIu64 ") and restarts in %d s",
				   s->id, rd_kafka_topic_name(m->rkt), m->partition,
				   rd_kafka_err2str(m->err), atomic_load(&d->cursor),
				   FB_KAFKA_PAUSE_BACKOFF_MS / 1000);
		}
	}
	s->outstanding--;
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	struct fb_kafka_delivery *d = opaque;
	if (err == RD_KAFKA_RESP_ERR__FATAL) {
		char fe[256];
		rd_kafka_fatal_error(rk, fe, sizeof(fe));
		fb_log_err("kafka: the producer hit a fatal error: %s; it is re-created", fe);
		fb_kafka_delivery_set_error(d, "fatal: %s", fe);
		atomic_fetch_add(&d->errors, 1);
		d->failing = 1;
		return;
	}
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) {
		atomic_store(&d->connected, 0);
		fb_kafka_delivery_set_error(d, "%s", reason);
	}
	fb_log_debug("kafka: %s: %s", rd_kafka_err2name(err), reason);
}

void fb_kafka_delivery_conf(struct fb_kafka_delivery *d, rd_kafka_conf_t *conf)
{
	rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
	rd_kafka_conf_set_error_cb(conf, error_cb);
	rd_kafka_conf_set_opaque(conf, d);
}

/* ---- the ring ---- */

void fb_kafka_delivery_reset(struct fb_kafka_delivery *d)
{
	d->head = d->tail = 0;
	d->failing = 0;
}

uint64_t fb_kafka_delivery_in_flight(const struct fb_kafka_delivery *d)
{
	return d->tail - d->head;
}

int fb_kafka_delivery_full(const struct fb_kafka_delivery *d)
{
	return d->tail - d->head == RING_CAP;
}

uint64_t fb_kafka_delivery_add(struct fb_kafka_delivery *d, uint64_t id)
{
	*slot(d, d->tail) = (struct fb_kafka_slot){ .id = id };
	return d->tail++;
}

void fb_kafka_delivery_sent(struct fb_kafka_delivery *d, uint64_t seq)
{
	slot(d, seq)->outstanding++;
}

void fb_kafka_delivery_fail(struct fb_kafka_delivery *d, uint64_t seq)
{
	slot(d, seq)->failed = 1;
	d->failing = 1;
}

int fb_kafka_delivery_stuck(const struct fb_kafka_delivery *d)
{
	const struct fb_kafka_slot *s = slot(d, d->head);
	return s->failed && !s->outstanding;
}

/* ---- the cursor ---- */

void fb_kafka_delivery_advance(struct fb_kafka_delivery *d)
{
	uint64_t c = atomic_load(&d->cursor);
	while (d->head < d->tail) {
		struct fb_kafka_slot *s = slot(d, d->head);
		if (s->outstanding || s->failed)
			break;
		c = s->id;
		d->head++;
	}
	atomic_store(&d->cursor, c);
}

void fb_kafka_delivery_save(struct fb_kafka_delivery *d)
{
	uint64_t c = atomic_load(&d->cursor);
	if (c == d->cursor_saved)
		return;
	int rc = fb_kafka_cursor_write(d->journal_dir, d->epoch, c);
	if (rc) {
		fb_log_warn("kafka: cannot write %s/kafka.cursor: %s (events already in Kafka are "
			    "found again after a restart, nothing is sent twice)",
			    d->journal_dir, fb_strerror(rc));
		return;
	}
	d->cursor_saved = c;
}

void fb_kafka_delivery_stats(struct fb_kafka_delivery *d, struct fb_kafka_stats *st)
{
	st->connected = atomic_load(&d->connected);
	st->cursor = atomic_load(&d->cursor);
	st->delivered = atomic_load(&d->delivered);
	st->errors = atomic_load(&d->errors);
	pthread_mutex_lock(&d->err_mu);
	memcpy(st->last_error, d->last_error, sizeof(st->last_error));
	st->last_error_age_s =
		d->last_error[0] ? (double)(fb_kafka_now_ms() - d->last_error_ms) / 1000.0 : -1.0;
	pthread_mutex_unlock(&d->err_mu);
}

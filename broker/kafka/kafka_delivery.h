/* kafka_delivery.h - delivery bookkeeping of the Kafka sink (private to
 * kafka_sink.c; see docs/kafka.md).
 *
 * Events enter an in-flight ring in EventId order; each slot counts the
 * messages of its event not yet acknowledged. librdkafka's delivery reports
 * count them down, and the cursor advances over the finished prefix of the
 * ring, so it never passes an event that is missing from one of its topics;
 * this module also reads it at start and writes kafka.cursor (kafka_cursor.h).
 * A failed message marks its slot and sets failing: the cursor stops before
 * that event and the sink pauses production. The module also owns the
 * status the loop reads (connected, cursor, delivered, errors, last_error),
 * because librdkafka's callbacks write most of it.
 *
 * Threads: init/free run on the loop while the Kafka thread is not running;
 * fb_kafka_delivery_stats on the loop; everything else on the Kafka thread
 * (the callbacks run inside rd_kafka_poll there).
 */
#ifndef FB_KAFKA_DELIVERY_H
#define FB_KAFKA_DELIVERY_H

#include "kafka_sink.h"

#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* How long production pauses after a permanent error before the producer is
 * re-created (the delivery error's log line promises it). */
#define FB_KAFKA_PAUSE_BACKOFF_MS 10000

struct fb_kafka_slot;

struct fb_kafka_delivery {
	const char *journal_dir; /* where kafka.cursor lives; owned by the config */
	uint64_t epoch;

	/* Kafka thread only. The sink may read and set failing (a permanent
	 * error: produce nothing more until the producer is re-created). */
	struct fb_kafka_slot *ring; /* owned */
	uint64_t head, tail;        /* ring sequence numbers */
	uint64_t cursor_saved;
	int failing;

	/* Written by the Kafka thread, read by status on the loop. The sink
	 * may store connected, read cursor and count errors directly. */
	atomic_int connected;
	atomic_uint_fast64_t cursor, delivered, errors;
	pthread_mutex_t err_mu; /* last_error only */
	char last_error[256];
	uint64_t last_error_ms; /* when last_error was set (fb_kafka_now_ms) */
};

/* Monotonic milliseconds: the clock of error ages and of the sink's timers. */
uint64_t fb_kafka_now_ms(void);

/* Start the cursor from journal_dir/kafka.cursor (0 when it is missing or
 * unusable, which is logged; never past committed_id) and allocate the ring.
 * journal_dir outlives d. 0, or -ENOMEM; fb_kafka_delivery_free is safe
 * either way. */
int fb_kafka_delivery_init(struct fb_kafka_delivery *d, const char *journal_dir, uint64_t epoch,
			   uint64_t committed_id);
void fb_kafka_delivery_free(struct fb_kafka_delivery *d);

/* Route a new producer's delivery reports and errors to d. */
void fb_kafka_delivery_conf(struct fb_kafka_delivery *d, rd_kafka_conf_t *conf);
/* Forget the ring after the producer is dropped; the cursor stays. */
void fb_kafka_delivery_reset(struct fb_kafka_delivery *d);

/* Events in flight, and whether the ring has room for one more. */
uint64_t fb_kafka_delivery_in_flight(const struct fb_kafka_delivery *d);
int fb_kafka_delivery_full(const struct fb_kafka_delivery *d);
/* Enter event id into the ring (not full); returns its sequence number, the
 * opaque of its messages. */
uint64_t fb_kafka_delivery_add(struct fb_kafka_delivery *d, uint64_t id);
/* One more message of event seq is in librdkafka's hands. */
void fb_kafka_delivery_sent(struct fb_kafka_delivery *d, uint64_t seq);
/* Event seq cannot be delivered: the cursor stops before it, and failing is set. */
void fb_kafka_delivery_fail(struct fb_kafka_delivery *d, uint64_t seq);
/* The oldest event in flight failed and has nothing left outstanding: no
 * more delivery reports can move the cursor. */
int fb_kafka_delivery_stuck(const struct fb_kafka_delivery *d);

/* Advance the cursor over the finished prefix of the ring. */
void fb_kafka_delivery_advance(struct fb_kafka_delivery *d);
/* Write kafka.cursor if the cursor moved since the last write (a failure is
 * logged and retried at the next call). */
void fb_kafka_delivery_save(struct fb_kafka_delivery *d);

void fb_kafka_delivery_set_error(struct fb_kafka_delivery *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fb_kafka_delivery_clear_error(struct fb_kafka_delivery *d);
/* Fill connected, cursor, delivered, errors and the last error of st. */
void fb_kafka_delivery_stats(struct fb_kafka_delivery *d, struct fb_kafka_stats *st);

#endif

/* kafka_sink.h - the Kafka producer of fabricbusd (librdkafka).
 *
 * A dedicated thread owns the producer. It follows the journal with its own
 * fb_journal_reader instead of receiving batches: the loop only tells it the
 * last committed EventId (fb_kafka_committed, an atomic store and a wake),
 * so nothing on the loop ever waits on Kafka. The thread renders each event
 * (fb_redfish_render), produces it to the mapped topic and to every matching
 * KafkaSubscription topic, and advances a durable cursor (kafka_cursor.h)
 * over events delivered everywhere. After a restart or a producer
 * re-creation it first asks Kafka what it already holds from this broker
 * (kafka_resume.h) and skips that: exactly once across crashes and outages.
 * See docs/kafka.md.
 *
 * Threads: fb_kafka_new/start/stop and fb_kafka_get_stats run on the loop;
 * fb_kafka_committed on the loop (cheap, never blocks); everything else on
 * the Kafka thread. The stats are atomics written by the Kafka thread.
 */
#ifndef FB_KAFKA_SINK_H
#define FB_KAFKA_SINK_H

#include "config.h"

#include <stddef.h>
#include <stdint.h>

struct fb_kafka;

struct fb_kafka_stats {
	int connected;
	uint64_t cursor;     /* every event <= cursor is in Kafka */
	uint64_t committed;  /* last committed EventId the thread knows */
	uint64_t produced;   /* messages handed to librdkafka */
	uint64_t delivered;  /* messages acknowledged by Kafka */
	uint64_t skipped;    /* messages not resent: Kafka already had them */
	uint64_t errors;     /* permanent delivery errors and other failures */
	char last_error[256];      /* empty when none, or cleared on reconnect */
	double last_error_age_s;   /* seconds since last_error was set, -1 if none */
};

/* Create the sink (Kafka must be on: cfg->kafka_brokers set) and start its
 * thread, which resumes after the cursor in journal_dir. epoch identifies
 * this broker in Kafka headers; committed_id is the last committed EventId.
 * Never waits for Kafka. Returns 0 and *out, or a negative error (logged). */
int fb_kafka_start(const struct fb_config *cfg, uint64_t epoch, uint64_t committed_id,
		   struct fb_kafka **out);
/* Events up to id are durable and may be produced. Loop thread; O(1). */
void fb_kafka_committed(struct fb_kafka *k, uint64_t id);
/* Flush for at most flush_ms, persist the cursor, stop the thread, free. */
void fb_kafka_stop(struct fb_kafka *k, int flush_ms);
void fb_kafka_get_stats(struct fb_kafka *k, struct fb_kafka_stats *st);

/* The Redfish subscriptions with Protocol Kafka (rf_sub_store.h): the
 * thread also produces every event a subscription's filters take to its
 * topic (its Context). Called on the loop whenever the subscriptions change;
 * the enabled Kafka ones are copied and handed over. A new topic makes the
 * thread re-create its producer (the same path as after an error: the
 * resume scan keeps exactly once). At most FB_KAFKA_RSUBS_MAX. 0 or -ENOMEM. */
#define FB_KAFKA_RSUBS_MAX 32
struct fb_rf_store;
int fb_kafka_set_rsubs(struct fb_kafka *k, const struct fb_rf_store *st);
const char *fb_kafka_brokers(const struct fb_kafka *k);

#endif

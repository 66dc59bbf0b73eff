/* kafka_resume.h - what Kafka already holds from this broker.
 *
 * The durable cursor can lag Kafka (a crash between a delivery report and
 * the next cursor write). Before producing, the Kafka thread asks, for each
 * (topic, partition) it may produce to, for the highest fabricbus-event-id
 * header among messages whose fabricbus-broker header is our epoch. It reads
 * backwards from the end in growing windows (64, 256, ... messages; other
 * brokers may interleave) with a short-lived consumer that assigns and
 * seeks but never joins a group or commits. Our messages in a partition are
 * in EventId order (idempotent producer, one partition per key), so any
 * event whose (topic, partition) already holds an EventId >= its own is
 * already there and is skipped.
 */
#ifndef FB_KAFKA_RESUME_H
#define FB_KAFKA_RESUME_H

#include "config.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct fb_kafka_resume_topic {
	const char *name;
	int32_t partitions;
	uint64_t *max; /* [partitions], filled: highest EventId of ours, 0 if none */
};

/* Scan every partition of every topic. Returns 0, or a negative error with
 * err naming the topic/partition and librdkafka's reason. *read_msgs counts
 * the messages looked at. Gives up early (FB_EAGAIN) once *stop is set. */
int fb_kafka_resume_scan(const struct fb_config *cfg, const char *epoch_hex,
			 struct fb_kafka_resume_topic *t, unsigned nt, const atomic_int *stop,
			 uint64_t *read_msgs, char *err, size_t errsz);

#endif

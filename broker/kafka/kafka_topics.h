/* kafka_topics.h - where an event goes in Kafka: the topic map, the
 * KafkaSubscription destinations, and the partition.
 *
 * Pure functions on plain values (no librdkafka, no allocation), so the
 * config parser uses them and the unit tests prove them without a broker.
 *
 *   KafkaTopicMap=Fabric:fabric.events,NetworkDevice:fabric.netdev,*:fabric.other
 *       MessageId registry prefix -> topic; first match wins; '*' (the
 *       catch-all) is required and must come last.
 *   KafkaSubscription=<topic>?<filter>
 *       a Redfish EventDestination with Protocol=Kafka and Context=<topic>;
 *       the filter is the WebSocket query (prefix=, severity=, origin=,
 *       '&'-separated; see filter.h). Every matching event is also
 *       produced to <topic>.
 *
 * Partitions follow Kafka's Java default partitioner for keyed messages,
 * toPositive(murmur2(key)) % partitions, so that any Kafka client computes
 * the same partition for an OriginOfCondition key, and so that the broker
 * knows where each event went (the exactly-once resume needs that).
 */
#ifndef FB_KAFKA_TOPICS_H
#define FB_KAFKA_TOPICS_H

#include "filter.h"

#include <stddef.h>
#include <stdint.h>

#define FB_KAFKA_TOPIC_MAX 250      /* Kafka allows 249 characters; + NUL */
#define FB_KAFKA_PREFIX_MAX 64      /* a registry prefix, "Fabric"; + NUL */
#define FB_KAFKA_MAP_MAX 16
#define FB_KAFKA_SUBS_MAX 32
#define FB_KAFKA_DEFAULT_MAP \
	"Fabric:fabric.events,NetworkDevice:fabric.netdev,ResourceEvent:fabric.resource,*:fabric.other"

struct fb_kafka_route {
	char prefix[FB_KAFKA_PREFIX_MAX]; /* "Fabric", or "*" */
	char topic[FB_KAFKA_TOPIC_MAX];
};

/* A plain value, owned by whoever declared it (the config). */
struct fb_kafka_topic_map {
	unsigned n;
	struct fb_kafka_route route[FB_KAFKA_MAP_MAX];
};

struct fb_kafka_sub {
	char topic[FB_KAFKA_TOPIC_MAX];
	char text[FB_FILTER_ARG_MAX];  /* the filter as written, for printing */
	struct fb_filter filter;
};

/* 1 if name is a legal Kafka topic: [A-Za-z0-9._-]{1,249}, not "." or "..". */
int fb_kafka_topic_valid(const char *name);

/* Parse a KafkaTopicMap value into *m (replaced whole). Returns 0 or
 * FB_ECONFIG with why (a buffer of whysz) naming the entry and the problem. */
int fb_kafka_topic_map_parse(const char *s, struct fb_kafka_topic_map *m, char *why, size_t whysz);

/* The topic for a MessageId: the first route whose prefix is the MessageId's
 * registry prefix (the part before the first '.'), else the catch-all.
 * Returns the route index. */
unsigned fb_kafka_topic_map_route(const struct fb_kafka_topic_map *m, const char *message_id);

/* Write the map back as a KafkaTopicMap value. */
int fb_kafka_topic_map_format(const struct fb_kafka_topic_map *m, char *out, size_t outsz);

/* Parse a KafkaSubscription value "<topic>?<filter>" (the '?' and filter
 * may be omitted: everything). since= is refused (a Kafka destination has
 * no replay position). 0 or FB_ECONFIG with why. */
int fb_kafka_sub_parse(const char *s, struct fb_kafka_sub *sub, char *why, size_t whysz);

/* Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2), as the
 * signed 32-bit value Java computes. */
int32_t fb_kafka_murmur2(const void *key, size_t len);
/* toPositive(murmur2(key)) % partitions; partitions must be > 0. */
int32_t fb_kafka_partition(const void *key, size_t len, int32_t partitions);

#endif

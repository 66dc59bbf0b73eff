/* slurm_source.h - where fabricbus-slurm's events come from (Source=).
 *
 *   websocket  ws://Broker/ws/events?since=<LastEventId> (slurm_source_ws.c).
 *              EventIds arrive in order, so LastEventId is the resume point:
 *              an event at or below it is a replay and is skipped.
 *   kafka      a member of consumer group KafkaGroup reading KafkaTopics
 *              (slurm_source_kafka.c, through adapters/lib/fb_kafka_consumer).
 *              Kafka keeps order per partition only, so the resume point is
 *              the group's committed offsets, and LastEventId stays where
 *              the first start put it (the state file's, else the map's).
 *              An event at or below it predates the adapter and is skipped;
 *              a message at or below the partition's offset in the state
 *              file (KafkaOffsets) was handled and saved before a crash that
 *              came before its commit, and is skipped too.
 *
 * Both hand each event to fbs_adapter_on_message(a, json, len, event_id) on
 * the loop thread, during the RUNNING phase only. A source is started when
 * start-up reaches RUNNING and stopped by fbs_adapter_stop. The Kafka source
 * commits an offset only after fbs_adapter_sync() said every event it
 * covers has its effects in the saved state file.
 */
#ifndef FBS_SOURCE_H
#define FBS_SOURCE_H

#include "slurm_conf.h"

#include <stddef.h>

struct fbs_adapter;

struct fbs_source {
	const char *name;        /* "websocket" or "kafka", for logs */
	int ordered;             /* 1: EventIds arrive in increasing order */
	void (*stop)(struct fbs_source *s); /* stop delivering, free s */
};

/* Start the source Source= names, reading after a->seen_id. NULL on
 * failure (logged). Owned by the adapter: free with fbs_source_stop. */
struct fbs_source *fbs_source_start(struct fbs_adapter *a);
/* Safe with NULL. No callback follows. */
void fbs_source_stop(struct fbs_source *s);

struct fbs_source *fbs_source_ws_start(struct fbs_adapter *a);
struct fbs_source *fbs_source_kafka_start(struct fbs_adapter *a);

/* Source=kafka: make (without connecting) a consumer from the kafka.*
 * properties, so that settings that only conflict together stop the start
 * with a clear message. 0, or FB_ECONFIG with the reason in err. */
int fbs_source_kafka_check(const struct fbs_config *c, char *err, size_t errsz);

#endif

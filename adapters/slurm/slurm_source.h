/* slurm_source.h - where fabricbus-slurm's events come from (Source=): the
 * shared resuming source of proto/client/fb_source.h, set up from the
 * adapter's configuration.
 *
 *   websocket  ws://Broker/ws/events?since=<LastEventId>. EventIds arrive
 *              in order, so LastEventId is the resume point: an event at or
 *              below it is a replay and is skipped.
 *   kafka      a member of consumer group KafkaGroup reading KafkaTopics.
 *              The resume point is the group's committed offsets, and
 *              LastEventId stays where the first start put it (the state
 *              file's, else the map's). The state file's KafkaOffsets are
 *              fb_source's per-partition record (kafka_pos), and an offset
 *              is committed only after fbs_adapter_sync() said every event it
 *              covers has its effects in the saved state file.
 *
 * Events go to fbs_adapter_on_message(a, json, len, event_id) on the loop
 * thread, during the RUNNING phase only. The source is started when
 * start-up reaches RUNNING and stopped (fb_source_stop) by fbs_adapter_stop.
 */
#ifndef FBS_SOURCE_H
#define FBS_SOURCE_H

#include "fb_source.h"
#include "slurm_conf.h"

#include <stddef.h>

struct fbs_adapter;

/* Start the source Source= names, reading after a->seen_id. NULL on
 * failure (logged). Owned by the adapter: free with fb_source_stop. */
struct fb_source *fbs_source_start(struct fbs_adapter *a);

/* Source=kafka: make (without connecting) a consumer from the kafka.*
 * properties, so that settings that only conflict together stop the start
 * with a clear message. 0, or FB_ECONFIG with the reason in err. */
int fbs_source_kafka_check(const struct fbs_config *c, char *err, size_t errsz);

#endif

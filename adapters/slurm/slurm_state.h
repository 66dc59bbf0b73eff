/* slurm_state.h - the adapter's crash-safe state file.
 *
 * One JSON document (StateFile, default /var/lib/fabricbus/slurm-adapter.json)
 * holding everything the adapter would otherwise forget across a restart:
 *   LastEventId   the broker EventId whose effects are all in this file;
 *                 the WebSocket resumes after it (Source=kafka: the point
 *                 its first start began at; not advanced, see slurm_source.h)
 *   Nodes         per node: the drain we hold (reason, cause EventId, time,
 *                 in flight or confirmed), the active conditions and the
 *                 stability window
 *   Pending       actions decided but not yet confirmed by Slurm, in order
 *   CapEpisode    whether the cap event of the current episode was sent
 *   KafkaOffsets  Source=kafka only: per partition, the newest message handled
 * It is rewritten at every change: a temporary file in the same directory,
 * fsync, rename over the old one, fsync of the directory. A reader sees the
 * old or the new document, never a mix. A file that does not parse or does
 * not hold what is expected is refused with a message naming the file and
 * the field: the adapter then does not start (it must not forget drains it
 * holds); moving the file aside makes it start afresh and adopt from Slurm
 * the nodes drained with its ReasonPrefix.
 *
 * No libslurm, no I/O but the file. Not thread-safe: the loop thread owns it.
 */
#ifndef FBS_STATE_H
#define FBS_STATE_H

#include "slurm_policy.h"

#include <stddef.h>
#include <stdint.h>

#define FBS_STATE_VERSION 1

#define FBS_KTOPIC_MAX 250  /* a Kafka topic name (249) + NUL */

/* Source=kafka: the newest message of one partition whose effects are in
 * this state, with the broker epoch and EventId it carried (so that a topic
 * deleted and made again is told from a redelivery). */
struct fbs_koff {
	char topic[FBS_KTOPIC_MAX];
	int32_t partition;
	int64_t offset;
	char broker[24];            /* fabricbus-broker header, "" if none */
	uint64_t event_id;          /* fabricbus-event-id header, 0 if none */
};

struct fbs_state {
	uint64_t last_event_id;
	uint64_t next_batch_id;     /* the next fbs_batch id (ids only grow) */
	size_t n_pending;
	struct fbs_batch *pending;  /* owned, in order */
	size_t n_koffs;
	struct fbs_koff *koffs;     /* owned; written only when there are some */
};

void fbs_state_init(struct fbs_state *s);
void fbs_state_free(struct fbs_state *s);

/* Append a copy of b with the next id (written into b->id too). 0 or -ENOMEM. */
int fbs_state_push(struct fbs_state *s, struct fbs_batch *b);
/* The pending batch with this id, or NULL. */
struct fbs_batch *fbs_state_find(struct fbs_state *s, uint64_t id);
/* Drop the pending batch with this id (no-op if absent). */
void fbs_state_remove(struct fbs_state *s, uint64_t id);

/* The entry of (topic, partition), or NULL. With create, a missing one is
 * added (offset -1); NULL then means out of memory. The pointer is valid
 * until the next call that creates. */
struct fbs_koff *fbs_state_koff(struct fbs_state *s, const char *topic, int32_t partition,
				int create);

/* Serialize (for save and tests). The caller frees *out. 0 or -ENOMEM. */
int fbs_state_dump(const struct fbs_state *s, const struct fbs_policy *p, uint64_t saved_at_s,
		   char **out);
/* Parse a document into s (freed and refilled) and p (nodes restored into
 * it, expected empty). 0, or FB_EMALFORMED with "what: why" in err. */
int fbs_state_parse(const char *json, size_t len, struct fbs_state *s, struct fbs_policy *p,
		    char *err, size_t errsz);

/* Write atomically (tmp + fsync + rename + fsync of the directory).
 * 0, or a negative errno with "path: what failed: why" in err. */
int fbs_state_save(const char *path, const struct fbs_state *s, const struct fbs_policy *p,
		   char *err, size_t errsz);
/* Load path. 0 and *exists = 1, or 0 and *exists = 0 when there is no
 * file; otherwise FB_ECORRUPT (or a negative errno) with "path: why" in err. */
int fbs_state_load(const char *path, struct fbs_state *s, struct fbs_policy *p, int *exists,
		   char *err, size_t errsz);

/* 1 if name is a node name we hand to Slurm: 1..63 of [A-Za-z0-9._-],
 * so that no name can add nodes or ranges to a hostlist. */
int fbs_node_name_valid(const char *name);

#endif

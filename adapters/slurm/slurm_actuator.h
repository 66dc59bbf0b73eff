/* slurm_actuator.h - the one thread that talks to slurmctld.
 *
 * libslurm calls block (about 9 s each while slurmctld is down), so none
 * runs on the loop thread. The loop hands jobs over a mutex-protected FIFO;
 * the actuator runs them one at a time, in order, and hands results back on
 * another FIFO, waking the loop with event_active (the loop's event_base must
 * have been made after evthread_use_pthreads()). The two threads share no
 * other state.
 *
 * A job that fails (slurmctld unreachable, or Slurm refuses the update) is
 * NOT dropped: it stays at the head of the FIFO and is run again every
 * RetryInterval, so later jobs never overtake it and a drain queued during
 * an outage happens once slurmctld is back. The first failure of a run of
 * failures and the recovery are logged, not each attempt.
 *
 * Each batch is checked against what Slurm holds right before the update:
 *   drain    a node unknown to slurmctld is dropped (so a mixed list, which
 *            Slurm applies partly and fails, is never sent); a node whose
 *            reason is non-empty and not ours is skipped, never touched;
 *   undrain  only nodes that are drained with a reason of ours are
 *            undrained; the others are reported gone (an admin resumed
 *            them or replaced the reason) and left alone.
 * The nodes left go in ONE slurm_update_node() with a ranged hostlist. A
 * failed update is verified by reading the nodes again: a node that Slurm
 * did change counts as done (UNDRAIN of a node without slurmd returns an
 * error but clears the flag). Then the running jobs on the nodes are read.
 * In a dry run the reads happen and the update does not.
 */
#ifndef FBS_ACTUATOR_H
#define FBS_ACTUATOR_H

#include "slurm_api.h"
#include "slurm_policy.h"

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

struct fbs_actuator_cfg {
	char reason_prefix[64];
	char cap_partition[128];
	int dry_run;
	uint64_t retry_ms;
};

enum fbs_job_type { FBS_J_RECONCILE = 1, FBS_J_BATCH };

enum fbs_outcome {
	FBS_R_DONE = 1,   /* drained / undrained (or would be, in a dry run) */
	FBS_R_SKIPPED,    /* drain: Slurm holds a foreign reason: left alone */
	FBS_R_UNKNOWN,    /* not a node slurmctld knows: dropped */
	FBS_R_GONE,       /* undrain: not drained with our reason any more */
};

struct fbs_node_result {
	char node[FB_NAME_MAX];
	uint8_t outcome;               /* enum fbs_outcome */
	char reason[FBS_REASON_MAX];   /* Slurm's reason now (skipped, gone) */
	char jobs[FB_JOBS_MAX];        /* running jobs on it */
	int drained;                   /* Slurm's DRAIN flag now (gone) */
};

struct fbs_result {
	uint8_t type;                  /* enum fbs_job_type */
	uint64_t batch_id;
	uint8_t action;                /* enum fbs_action */
	size_t n;
	struct fbs_node_result *r;     /* one per target, in the batch's order */
	struct fbs_snodes nodes;       /* every Slurm node (reconcile, and read before a batch) */
	unsigned cap_base;
	int cap_partition_missing;
	unsigned attempts;             /* calls it took (1 = first time) */
	double update_ms;              /* time of the slurm_update_node call */
	char hostlist[1024];           /* what was sent ("" if nothing) */
	char jobs_err[256];            /* why the jobs are unknown, if they are */
};
void fbs_result_free(struct fbs_result *r);

/* Run one job now, on this thread (the actuator thread, and the benchmark).
 * 0 with r filled, or -1 with why in err (the job is to be retried). */
int fbs_actuator_run(const struct fbs_actuator_cfg *c, uint8_t type, const struct fbs_batch *b,
		     struct fbs_result *r, char *err, size_t errsz);

typedef void (*fbs_result_fn)(void *arg, struct fbs_result *r);

struct fbs_actuator;

/* Start the thread. on_result runs on base's loop, one result at a time;
 * the result is freed after it returns. 0 or a negative errno. */
int fbs_actuator_start(const struct fbs_actuator_cfg *c, struct event_base *base,
		       fbs_result_fn on_result, void *arg, struct fbs_actuator **out);
/* Queue a job (b is copied; NULL for a reconcile). 0 or -ENOMEM. */
int fbs_actuator_submit(struct fbs_actuator *a, uint8_t type, const struct fbs_batch *b);
/* Jobs queued or running. */
size_t fbs_actuator_backlog(struct fbs_actuator *a);
/* Stop after the call in progress, waiting up to wait_ms for it. 0 when the
 * thread is gone and a is freed; -ETIMEDOUT when it is still inside a
 * libslurm call (a is then left to the exiting process). */
int fbs_actuator_stop(struct fbs_actuator *a, int wait_ms);

#endif

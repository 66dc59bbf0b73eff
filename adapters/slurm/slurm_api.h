/* slurm_api.h - the few libslurm calls the adapter makes, behind one small API.
 *
 * libslurm is used in-process (not scontrol): ~1.5-2 ms per update instead
 * of ~4.3 ms per exec, errors come back as codes (slurm_strerror), reasons
 * are passed as data (no shell quoting) and node state bits and reasons are
 * read directly. Its ABI changes with every Slurm release, so the adapter is
 * built against the site's libslurm-dev (docs/slurm.md).
 *
 * Threads: the calls that talk to slurmctld (load, update, jobs) block, for
 * about 9 s when slurmctld is down, and run on the actuator thread only,
 * except fbs_slurm_job_state (the job reconciler's thread, slurm_reconcile.h;
 * libslurm's RPC calls may run on several threads at once).
 * fbs_slurm_hostlist() does not talk to slurmctld and may run anywhere.
 * fbs_slurm_init() must be called once, before any other call.
 */
#ifndef FBS_API_H
#define FBS_API_H

#include "fb_event.h"
#include "slurm_policy.h"

#include <stddef.h>
#include <stdint.h>

struct fbs_snode {
	char name[FB_NAME_MAX];
	uint32_t state;                /* node_state as Slurm reports it */
	int drained;                   /* NODE_STATE_DRAIN is set */
	char reason[FBS_REASON_MAX];   /* "" when none */
};

struct fbs_snodes {
	size_t n;
	struct fbs_snode *v;           /* sorted by name */
	unsigned cap_base;             /* nodes in the cap partition, or all nodes */
	int cap_partition_missing;     /* the cap partition does not exist */
};

/* slurm_init(NULL): reads SLURM_CONF (or the built-in path). */
void fbs_slurm_init(void);
void fbs_slurm_fini(void);

/* Every node with its state and reason, and the cap base (the node count of
 * cap_partition, or of the cluster when it is NULL or ""). 0, or -1 with
 * slurm_strerror's text in err. */
int fbs_slurm_load_nodes(const char *cap_partition, struct fbs_snodes *out, char *err, size_t errsz);
const struct fbs_snode *fbs_snodes_find(const struct fbs_snodes *s, const char *name);
void fbs_snodes_free(struct fbs_snodes *s);

/* The ranged hostlist of names ("node[001-003,007]"), malloc'd; NULL on
 * allocation failure. */
char *fbs_slurm_hostlist(const char *const *names, size_t n);

/* One slurm_update_node(): State=DRAIN with reason, or State=UNDRAIN
 * (reason NULL), for every node of hostlist. 0, or -1 with the error. */
int fbs_slurm_update(const char *hostlist, int drain, const char *reason, char *err, size_t errsz);

/* The running jobs on each of names[i] into jobs[i] ("12,13"; as many as
 * fit). 0, or -1 with the error (jobs are then all empty). */
int fbs_slurm_jobs(const char *const *names, size_t n, char (*jobs)[FB_JOBS_MAX], char *err,
		   size_t errsz);

enum fbs_job_state { FBS_JOB_ACTIVE = 1, FBS_JOB_ENDED, FBS_JOB_UNKNOWN };

/* What slurmctld says of job_id (slurm_load_job): pending, running or
 * suspended (ACTIVE), finished in any way (ENDED), or unknown to it
 * (UNKNOWN: purged MinJobAge after it ended, or never a job). 0 with *state
 * (enum fbs_job_state), or -1 with the error (slurmctld unreachable...). */
int fbs_slurm_job_state(uint32_t job_id, int *state, char *err, size_t errsz);

#endif

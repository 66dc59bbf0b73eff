/* jobs.h - the job registry: which Slurm jobs run on which nodes.
 *
 * Filled by POST /fabric/jobs (a SPANK plugin registers a job at every step
 * start, the Slurm adapter may too) and emptied by DELETE /fabric/jobs/<id>.
 * In memory only: after a broker restart the registry is empty until the
 * next step start re-registers, so nothing stale survives a restart either.
 *
 * Used by ingest.c to stamp events with the jobs on their node
 * (fb_event.jobs, Oem.Fabricbus.Jobs) and by fabric_map.c and
 * fabric_render.c for GET /fabric/map.
 *
 * Threads: fb_jobs_parse_register() is pure and runs on the lws thread; the
 * registry (struct fb_jobs) is owned by the loop thread, no locking. A
 * job's node list (struct fb_job_names) is immutable and refcounted, so
 * the map's renderer thread reads the lists it took while the loop goes on
 * registering and deleting.
 */
#ifndef FB_JOBS_H
#define FB_JOBS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define FB_JOB_ID_MAX 21            /* 1..20 decimal digits + NUL */
#define FB_JOB_NAME_MAX 64          /* user and node names: 1..63 bytes + NUL */
#define FB_JOB_NODES_MAX 65536      /* nodes in one registration */
#define FB_JOBS_DEFAULT_MAX 20000   /* jobs registered at once (JobsMax) */
/* (job, node) pairs over all jobs (JobMembersMax). The map's renderer
 * thread renders 262144 pairs in ~80 ms (release build, docs/fabric-map.md);
 * the loop only takes a reference to each job's node list. */
#define FB_JOBS_DEFAULT_MAX_MEMBERS (1u << 18)
#define FB_JOBS_DEFAULT_MAX_NODES 16384 /* nodes of one job (JobNodesMax) */
#define FB_JOB_BODY_MAX (4u << 20)  /* bytes of a POST /fabric/jobs body */

/* One parsed registration. nodes holds n_nodes names, sorted (strcmp) and
 * unique; allocated by fb_jobs_parse_register, released with
 * fb_job_reg_free (which leaves the struct empty). */
struct fb_job_reg {
	char job_id[FB_JOB_ID_MAX];
	char user[FB_JOB_NAME_MAX];
	size_t n_nodes;
	char (*nodes)[FB_JOB_NAME_MAX];
};

void fb_job_reg_free(struct fb_job_reg *r);

/* Parse and validate {"JobId":"123","User":"alice","Nodes":["n1","n2"]}
 * (exactly these members; duplicate keys refused). JobId: 1..20 decimal
 * digits, no leading zero. User and node names: 1..63 bytes of printable
 * ASCII other than space, comma and brackets. Nodes: 1..FB_JOB_NODES_MAX
 * names, no duplicates. Returns 0 with *out filled (caller frees), or
 * FB_EMALFORMED with err = "<Parameter>: <what is wrong>" (Parameter is
 * JobId, User, Nodes, or body for the document as a whole), or -ENOMEM.
 * On failure *out is left empty. */
int fb_jobs_parse_register(const char *body, size_t len, struct fb_job_reg *out, char *err,
			   size_t errsz);
/* 1 if s is a valid JobId (as above), else 0. */
int fb_jobs_valid_id(const char *s);
/* 1 if the n bytes at s are a valid user or node name, else 0. */
int fb_jobs_valid_name(const char *s, size_t n);

struct fb_jobs;

/* 0 for a bound means its default. NULL on ENOMEM. */
struct fb_jobs *fb_jobs_new(size_t max_jobs, size_t max_members);
/* Change the bounds (0: the default); max_nodes is per job, at most
 * FB_JOB_NODES_MAX. Jobs already registered stay, even past them. */
void fb_jobs_set_limits(struct fb_jobs *j, size_t max_jobs, size_t max_members, size_t max_nodes);
void fb_jobs_get_limits(const struct fb_jobs *j, size_t *max_jobs, size_t *max_members,
			size_t *max_nodes);
void fb_jobs_free(struct fb_jobs *j);

/* Register reg's job (copied; reg stays the caller's), replacing an earlier
 * registration of the same JobId (which also refreshes its time: see
 * fb_jobs_expire). Returns 0 (new), 1 (replaced), -E2BIG (more than
 * max_nodes nodes), -ENOSPC (past max_jobs or max_members) or -ENOMEM;
 * nothing changed on an error. */
int fb_jobs_register(struct fb_jobs *j, const struct fb_job_reg *reg, uint64_t now_ns);
/* Returns 1 if the job was registered and is now gone, 0 if unknown. */
int fb_jobs_delete(struct fb_jobs *j, const char *job_id);
/* Delete every job last registered before before_ns (a job whose end was
 * never reported: a lost DELETE, a crashed node). Returns how many. */
size_t fb_jobs_expire(struct fb_jobs *j, uint64_t before_ns);

/* The jobs on node as "12,123" (ascending by number), at most outsz - 1
 * bytes: only whole ids that fit. Returns the length written (0: none). */
size_t fb_jobs_node_list(const struct fb_jobs *j, const char *node, char *out, size_t outsz);

/* Every node with at least one job, in no particular order, with its job
 * ids ascending. The pointers are valid during the call only. */
typedef void (*fb_jobs_node_fn)(void *arg, const char *node, const char *const *ids, size_t n);
void fb_jobs_foreach_node(const struct fb_jobs *j, fb_jobs_node_fn fn, void *arg);

/* One registration's job id and nodes (sorted by strcmp, unique), as
 * registered: immutable, freed with its last reference. */
struct fb_job_names {
	atomic_uint refs;
	char id[FB_JOB_ID_MAX];
	size_t n;
	char (*nodes)[FB_JOB_NAME_MAX];
};
/* Any thread: drop one reference. */
void fb_job_names_unref(struct fb_job_names *nm);
/* Every registered job's node list, one reference each for the caller, in
 * *out (caller frees the array after dropping them); O(jobs). Returns how
 * many, or -ENOMEM. */
long fb_jobs_take_names(const struct fb_jobs *j, struct fb_job_names ***out);

/* A registered job's user, node count and registration time; -1 if unknown. */
int fb_jobs_get(const struct fb_jobs *j, const char *job_id, const char **user, size_t *n_nodes,
		uint64_t *reg_ns);

size_t fb_jobs_count(const struct fb_jobs *j);   /* jobs registered */
size_t fb_jobs_members(const struct fb_jobs *j); /* (job, node) pairs */
size_t fb_jobs_nodes(const struct fb_jobs *j);   /* nodes with a job */

#endif

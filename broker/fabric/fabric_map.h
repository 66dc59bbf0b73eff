/* fabric_map.h - GET /fabric/map, the job registry's door, and the job
 * enrichment of events.
 *
 * The map joins three loop-owned tables: the inventory (node ports, by the
 * node agents), the topology (switch ports and their peers, by the switch
 * agents) and the jobs (by POST /fabric/jobs). It is rendered when
 * something changed, at most once per fb_fabric_map_refresh() call
 * (main.c: every 100 ms), into an immutable, refcounted JSON snapshot that
 * the lws thread takes by reference (docs/fabric-map.md has the format).
 * Without the renderer thread the loop renders, never more than ~10% of
 * its time; with it (fb_fabric_map_start_renderer, as fabricbusd runs) the
 * loop only copies the tables (~1/20 of a render) and the renderer thread,
 * which owns nothing but that copy, writes and publishes the snapshot.
 *
 * Job registrations go the other way: the lws thread parses a request
 * (fb_jobs_parse_register), hands the operation over with
 * fb_fabric_map_submit() (a mutex-protected queue plus event_active, so the
 * base must have been created after evthread_use_pthreads()), the loop
 * applies it and puts it on the done queue, calls the waker (the lws
 * thread's lws_cancel_service) and the lws thread takes the result back
 * with fb_fabric_map_take_done() to answer the request.
 *
 * Threads: functions marked "any thread" lock; all others are loop-only.
 */
#ifndef FB_FABRIC_MAP_H
#define FB_FABRIC_MAP_H

#include "fb_event.h"
#include "jobs.h"
#include "loopq.h"
#include "topology.h"

#include <event2/event.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct fb_inventory;

/* Operations in flight (submitted, not yet taken back) at most; past it
 * fb_fabric_map_submit says FB_EFULL (HTTP 503). */
#define FB_FABRIC_MAP_MAX_OPS 256

/* One node's or switch's member ("name":{...}) of a snapshot's json, so
 * that GET /fabric/map?nodes= copies members without parsing JSON. */
struct fb_fabric_frag {
	size_t off, len;             /* the member's bytes in json */
	uint32_t name_off, name_len; /* node: its name (raw, NUL-terminated) in names */
	uint32_t sw_first, sw_n;     /* node: its switches, sw_of[sw_first..+sw_n) */
};

/* One rendered map: immutable once published. json is NUL-terminated.
 * The index (all owned by the snapshot) lists the members in json order:
 * nodes by name in strcmp order, switches by GUID. */
struct fb_fabric_snap {
	atomic_uint refs;
	size_t len;
	char *json;
	size_t head_len;             /* json[0..head_len): {"Fabric":..,"LastEventId":N, */
	const struct fb_fabric_frag *nodes;
	size_t n_nodes;
	const char *names;
	const uint32_t *sw_of;       /* indices into sws, ascending for each node */
	const struct fb_fabric_frag *sws;
	size_t n_sws;
};
/* Any thread: another reference (returns s), or drop one. */
struct fb_fabric_snap *fb_fabric_snap_ref(struct fb_fabric_snap *s);
void fb_fabric_snap_unref(struct fb_fabric_snap *s);

enum fb_job_op_kind { FB_JOB_OP_REGISTER, FB_JOB_OP_DELETE };

/* Result of an applied operation (op->result). */
enum {
	FB_JOB_CREATED = 0,   /* REGISTER: new job */
	FB_JOB_REPLACED = 1,  /* REGISTER: an earlier registration replaced */
	FB_JOB_DELETED = 2,   /* DELETE: it was registered */
	FB_JOB_UNKNOWN = 3,   /* DELETE: it was not */
	/* or < 0: -ENOSPC (too many jobs or job nodes), -ENOMEM */
};

/* Owned by whoever holds it: the submitter until fb_fabric_map_submit()
 * succeeds, the map until fb_fabric_map_take_done() returns it, then the
 * taker (fb_job_op_free). */
struct fb_job_op {
	struct fb_loop_call call;   /* first: how it travels (loopq.h) */
	struct fb_fabric_map *map;  /* set by fb_fabric_map_submit */
	enum fb_job_op_kind kind;
	uint64_t token;             /* the submitter's, returned unchanged */
	char job_id[FB_JOB_ID_MAX]; /* both kinds */
	struct fb_job_reg reg;      /* REGISTER; emptied once applied */
	size_t n_nodes;             /* REGISTER: nodes registered */
	int result;                 /* set by the loop */
	char err[200];              /* result < 0: why, naming the limit and its key */
};
void fb_job_op_free(struct fb_job_op *op);

struct fb_fabric_map_stats {
	size_t nodes;        /* in the last rendered map */
	size_t switches;
	size_t switch_ports;
	size_t jobs;
	size_t job_nodes;    /* nodes with at least one job */
	size_t job_members;  /* (job, node) pairs */
	uint64_t renders;
	double render_ms;    /* the last render took */
	double take_ms;      /* of which on the loop (all of it without the renderer) */
	int render_thread;   /* the renderer thread renders */
	uint64_t job_ops;    /* registrations and deletions applied */
	uint64_t refused;    /* topology entries or jobs refused (bounds) */
	uint64_t jobs_expired; /* not registered again within JobTtl */
};

struct fb_fabric_map;

/* base: the loop's (for the job queue's wakeup; NULL: no job channel, as
 * in unit tests). inv: the broker's inventory, read when rendering; it must
 * outlive the map. fabric: the FabricName shown as "Fabric". */
struct fb_fabric_map *fb_fabric_map_new(struct event_base *base, const struct fb_inventory *inv,
					const char *fabric);
/* After the loop has stopped and the lws thread is gone. */
void fb_fabric_map_free(struct fb_fabric_map *m);
/* The job registry's bounds (JobsMax, JobMembersMax, JobNodesMax; 0: the
 * default) and how long a registration lives without being made again
 * (JobTtl; 0: for ever). */
void fb_fabric_map_set_job_limits(struct fb_fabric_map *m, size_t max_jobs, size_t max_members,
				  size_t max_nodes, uint64_t ttl_s);
/* Forget the jobs not registered again within JobTtl (main.c: every
 * second). Returns how many. */
size_t fb_fabric_map_expire_jobs(struct fb_fabric_map *m, uint64_t now_ns);

/* Learn from an accepted (or recovered) event, after the inventory did. */
void fb_fabric_map_learn(struct fb_fabric_map *m, const struct fb_event *ev);
/* An Ethernet switch-side event without a peer (a trap from an agent that
 * has not walked the switch's MAC tables, or none that could) takes the
 * peer MAC its port last reported (topology), so that the inventory can
 * name the node -- unless a newer report put that MAC on another port (a
 * moved cable). Before fb_inventory_enrich. Returns 1 if it did, else 0. */
int fb_fabric_map_enrich_peer(const struct fb_fabric_map *m, struct fb_event *ev);
/* If ev names a node, carries no jobs and jobs are registered on that node,
 * set ev->jobs ("12,123", ascending, only whole ids that fit). Returns 1 if
 * it did (the agent's bytes no longer match), else 0. */
int fb_fabric_map_enrich(const struct fb_fabric_map *m, struct fb_event *ev);
/* Apply one job operation now, setting op->result (the loop does this for
 * submitted operations; tests call it directly). */
void fb_fabric_map_apply(struct fb_fabric_map *m, struct fb_job_op *op);
/* Start the renderer thread: from now on fb_fabric_map_refresh hands
 * renders to it. 0 or -errno (pthread_create's). Stopped by
 * fb_fabric_map_free. */
int fb_fabric_map_start_renderer(struct fb_fabric_map *m);
/* If anything changed since the last refresh, render and publish a new
 * snapshot -- unless the last render was recent for its cost (after a
 * render that took T, none for 9 T). Returns 1 if it did, 0 if nothing
 * changed or it is too soon, -ENOMEM (retried at the next call). With the
 * renderer thread, it hands the render over instead (when the renderer is
 * idle, and after a render that took it T, not for T) and returns 1 if the
 * renderer published a snapshot since the last call. */
int fb_fabric_map_refresh(struct fb_fabric_map *m, uint64_t last_event_id);
/* The map JSON as it would be published now (caller frees), or NULL. */
char *fb_fabric_map_render(struct fb_fabric_map *m, uint64_t last_event_id, size_t *len);
/* The same as a snapshot with its index (one reference, the caller's), or
 * NULL; what fb_fabric_map_refresh publishes. */
struct fb_fabric_snap *fb_fabric_map_render_snap(struct fb_fabric_map *m, uint64_t last_event_id);
void fb_fabric_map_get_stats(const struct fb_fabric_map *m, struct fb_fabric_map_stats *st);
const struct fb_topology *fb_fabric_map_topology(const struct fb_fabric_map *m);
const struct fb_jobs *fb_fabric_map_jobs(const struct fb_fabric_map *m);

/* Any thread: the newest snapshot (a new reference; NULL before the first
 * refresh). */
struct fb_fabric_snap *fb_fabric_map_snapshot(struct fb_fabric_map *m);
/* Any thread: queue op for the loop. 0 (the map owns op now), FB_EFULL
 * (too many in flight) or -ENOTSUP (no job channel); op stays the
 * caller's on failure. */
int fb_fabric_map_submit(struct fb_fabric_map *m, struct fb_job_op *op);
/* Any thread: one applied operation (the caller owns it), or NULL. */
struct fb_job_op *fb_fabric_map_take_done(struct fb_fabric_map *m);
/* Any thread: called on the loop after operations were applied (NULL: no
 * one to wake). */
void fb_fabric_map_set_waker(struct fb_fabric_map *m, void (*wake)(void *), void *arg);

#endif

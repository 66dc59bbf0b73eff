/* pmix_route.h - which fabric events concern a Slurm step (or a server's
 * jobs), and the note that carries one to it (docs/pmix.md, "What reaches a
 * job"). Pure: jansson and proto/fb_hostlist only, unit-tested in
 * tests/unit/test_pmix_route.c.
 */
#ifndef FBP_ROUTE_H
#define FBP_ROUTE_H

#include "pmix_note.h"

#include <stddef.h>
#include <stdint.h>

#define FBP_JOBS_MAX 16

/* What fabricbus-pmix reads from one of the broker's Redfish Event documents. */
struct fbp_event {
	uint64_t event_id;
	int64_t timestamp;       /* EventTimestamp, seconds since the epoch */
	int missed;              /* a SubscriberEventsMissed notice (never delivered) */
	char message[1024], message_id[96], origin[256], severity[16];
	char kind[32], link_class[16];
	char node[64];           /* Oem.Fabricbus.Node */
	char switch_guid[24], switch_name[64], peer_guid[24], peer_name[64];
	char jobs[FBP_JOBS_MAX][32]; /* Oem.Fabricbus.Jobs */
	size_t n_jobs;
	char no_path[1024];      /* a root cause's Oem.Fabricbus.NoPath hostlist */
	int root_cause;          /* Oem.Fabricbus.NoPath present: route by it */
};

/* Untrusted bytes in, ev filled. 0, or FB_EMALFORMED with the reason in err. */
int fbp_event_parse(const char *json, size_t len, struct fbp_event *ev, char *err, size_t errsz);

/* One node's cable: the switch it hangs off. */
struct fbp_cable {
	char node[64], sw_guid[24], sw_name[64];
};

/* A step's (or a server's) place in the fabric. */
struct fbp_view {
	char job_id[32];         /* "" for a server's jobs */
	char (*nodes)[64];
	size_t n_nodes;
	struct fbp_cable *cables;
	size_t n_cables;
};

/* The view's nodes from a Slurm hostlist. 0 or FB_EMALFORMED/-ENOMEM. */
int fbp_view_set_nodes(struct fbp_view *v, const char *hostlist, char *err, size_t errsz);
/* The cables of the view's nodes from a GET /fabric/map body (Nodes.<n>.Ports[].
 * Switch/SwitchGUID). Replaces earlier cables. 0 or FB_EMALFORMED/-ENOMEM. */
int fbp_view_set_map(struct fbp_view *v, const char *json, size_t len, char *err, size_t errsz);
int fbp_view_has_node(const struct fbp_view *v, const char *node);
void fbp_view_free(struct fbp_view *v);

/* 1 when ev (of a kind in kinds, enum FBP_KIND_* of pmix_conf.h) concerns
 * the view: n then carries the event with the affected nodes (the event's
 * node; for a root cause, the view's nodes in its NoPath list: the blast
 * radius; else the view's nodes behind the event's switch). 0 when it does not.
 * n->code, n->range and n->position are left for the caller. */
int fbp_route(const struct fbp_event *ev, const struct fbp_view *v, unsigned kinds,
	      struct fbp_note *n);

#endif

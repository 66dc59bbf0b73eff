/* fb_test_fabric.h - event and job-registration builders for the fabric
 * map's unit tests (test_fabric_map.c, test_fabric_render.c, and the
 * topology's: test_topo_export.c, test_blast.c, test_rootcause.c) and its
 * fuzz target (fuzz_map_select.c): the rig's
 * switch GUIDs and the events the agents would send about it. Header-only
 * (static inline), so each test links only what it uses. */
#ifndef FB_TEST_FABRIC_H
#define FB_TEST_FABRIC_H

#include "fabric_map.h"
#include "fb_event.h"
#include "inventory.h"
#include "jobs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEAF1 0x0008f10400411a08ULL
#define LEAF2 0x0008f10400411b08ULL
#define NODE_GUID(k) (0x0002c90200000000ULL + 2 * (k))     /* CA node GUID of node<k> */
#define PORT_GUID(k) (0x0002c90200000000ULL + 2 * (k) + 1) /* its port 1 */

/* ---- event builders, shaped like agents/ib/ib_poll.c and agents/node ---- */

static inline struct fb_event sw_event(uint8_t kind, uint64_t sw, const char *name, unsigned port)
{
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.tech = FB_TECH_IB;
	snprintf(ev.subj.fabric, sizeof(ev.subj.fabric), "ibsim");
	snprintf(ev.subj.switch_name, sizeof(ev.subj.switch_name), "%s", name);
	ev.subj.switch_guid = sw;
	ev.subj.port = (uint16_t)port;
	return ev;
}

/* A switch port event with the host peer node<k> (CA port 1). */
static inline struct fb_event host_event(uint8_t kind, uint64_t sw, const char *name, unsigned port, int k,
				  uint8_t port_state, uint8_t phys_state)
{
	struct fb_event ev = sw_event(kind, sw, name, port);
	ev.port_state = port_state;
	ev.phys_state = phys_state;
	ev.link_class = FB_LINK_HOST;
	ev.subj.peer_guid = NODE_GUID(k);
	ev.subj.peer_port = 1;
	snprintf(ev.subj.peer_name, sizeof(ev.subj.peer_name), "h%d HCA-1", k);
	return ev;
}

/* An inter-switch cable as seen from switch a's port ap (IB PortState
 * port_state: 4 Active, 1 Down). */
static inline struct fb_event isl_event(uint8_t kind, uint64_t a, const char *an, unsigned ap, uint64_t b,
					unsigned bp, uint8_t port_state)
{
	struct fb_event ev = sw_event(kind, a, an, ap);
	ev.link_class = FB_LINK_ISL;
	ev.port_state = port_state;
	ev.phys_state = port_state == 4 ? 5 : 2;
	ev.subj.peer_guid = b;
	ev.subj.peer_port = (uint16_t)bp;
	return ev;
}

static inline struct fb_event inventory_event(int k)
{
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = FB_KIND_INVENTORY;
	ev.tech = FB_TECH_IB;
	ev.link_class = FB_LINK_NODE;
	snprintf(ev.subj.node, sizeof(ev.subj.node), "node%03d", k);
	snprintf(ev.subj.device, sizeof(ev.subj.device), "ibsim0");
	ev.subj.port = 1;
	ev.subj.lid = (uint16_t)(k + 2);
	ev.subj.port_guid = PORT_GUID(k);
	snprintf(ev.text, sizeof(ev.text), "node_guid=0x%016llx", (unsigned long long)NODE_GUID(k));
	return ev;
}

/* node001..node008 on leaf1 ports 1..8 (as fattree46), all up, and one
 * ISL: leaf1[33] to port 1 of the switch 0x0008f10400411c08. */
static inline void learn_rig(struct fb_inventory *inv, struct fb_fabric_map *m)
{
	for (int k = 1; k <= 8; k++) {
		struct fb_event ev = inventory_event(k);
		fb_inventory_learn(inv, &ev);
		fb_fabric_map_learn(m, &ev);
		ev = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", (unsigned)k, k, 4, 5);
		fb_fabric_map_learn(m, &ev);
	}
	struct fb_event isl = isl_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 33, 0x0008f10400411c08ULL, 1, 4);
	fb_fabric_map_learn(m, &isl);
}

static inline struct fb_job_reg reg_of(const char *id, const char *user, const char *const *nodes, size_t n)
{
	struct fb_job_reg r;
	memset(&r, 0, sizeof(r));
	snprintf(r.job_id, sizeof(r.job_id), "%s", id);
	snprintf(r.user, sizeof(r.user), "%s", user);
	r.nodes = calloc(n, sizeof(*r.nodes));
	for (size_t i = 0; r.nodes && i < n; i++)
		snprintf(r.nodes[i], sizeof(r.nodes[i]), "%s", nodes[i]);
	r.n_nodes = r.nodes ? n : 0;
	return r;
}

/* Register (or replace) job id of user alice on the n nodes named by the
 * printf format fmt with first, first + 1, ...: the registry's verdict
 * (fb_job_op.result), or -ENOMEM. */
static inline int fbt_register_job(struct fb_fabric_map *m, const char *id, const char *fmt, int first,
				   int n)
{
	struct fb_job_op op = { .kind = FB_JOB_OP_REGISTER };
	snprintf(op.job_id, sizeof(op.job_id), "%s", id);
	snprintf(op.reg.job_id, sizeof(op.reg.job_id), "%s", id);
	snprintf(op.reg.user, sizeof(op.reg.user), "alice");
	op.reg.nodes = calloc((size_t)n, sizeof(*op.reg.nodes));
	if (!op.reg.nodes)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		snprintf(op.reg.nodes[i], sizeof(op.reg.nodes[i]), fmt, first + i);
	op.reg.n_nodes = (size_t)n;
	fb_fabric_map_apply(m, &op); /* sorted input is not required by the registry */
	fb_job_reg_free(&op.reg);
	return op.result;
}

/* 10000 nodes on 250 leaves (40 hosts each, leaf<k/40> at port k%40+1):
 * the inventory and the switch agents' topology of a big cluster. Needs
 * inventory.h and fabric_map.h. */
#define FBT_LEARN_10000_NODES(inv, m)                                                        \
	do {                                                                                 \
		for (int k_ = 1; k_ <= 10000; k_++) {                                         \
			struct fb_event ev_ = inventory_event(k_);                             \
			char leaf_[16];                                                        \
			fb_inventory_learn((inv), &ev_);                                       \
			fb_fabric_map_learn((m), &ev_);                                        \
			snprintf(leaf_, sizeof(leaf_), "leaf%d", k_ / 40);                     \
			ev_ = host_event(FB_KIND_TOPOLOGY, LEAF1 + 0x10000ULL * (uint64_t)(k_ / 40), \
					 leaf_, (unsigned)(k_ % 40 + 1), k_, 4, 5);            \
			fb_fabric_map_learn((m), &ev_);                                        \
		}                                                                              \
	} while (0)

#endif

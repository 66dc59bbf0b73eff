/* ib_discover.h - the fabric's switches and what each port is cabled to.
 *
 * Discovery walks the fabric breadth-first by directed route from the local
 * port (NodeInfo, NodeDescription, PortInfo), so it needs no SM. The result,
 * struct ib_topo, is owned by the MAD thread: discovery fills the topology
 * part of each port, ib_poll.c the state part. Nothing here is shared with
 * the libevent loop; what the loop needs travels as fb_event values.
 */
#ifndef IB_DISCOVER_H
#define IB_DISCOVER_H

#include "ib_counters.h"
#include "ib_flap.h"
#include "ib_mad.h"

#include <stddef.h>
#include <stdint.h>

/* What a port is (or was last) cabled to. guid == 0: never seen a peer. */
struct ib_peer {
	uint64_t guid;
	uint8_t port;
	uint8_t type;                 /* IB_NT_*: switch -> ISL, CA -> host */
	char desc[IB_DESC_SZ];
};

struct ib_port {
	struct ib_peer peer;          /* kept while the link is down */
	/* poll state (ib_poll.c) */
	struct ib_port_info pi;       /* last answer */
	int have_pi;
	struct ib_flap flap;          /* ib_flap.c, fed by ib_poll.c */
	struct ib_ctr_port ctr;       /* ib_counters.c */
	uint8_t live;                 /* a link event went out since the resync began */
};

struct ib_switch {
	uint64_t guid;
	char desc[IB_DESC_SZ];
	struct ib_dr dr;              /* route from the local port */
	uint8_t nports;
	struct ib_port *ports;        /* [0..nports], index = port number */
	int assigned;                 /* this agent polls it (--switches, --shard) */
	int announce;                 /* adopted after start: its topology is still to send */
	uint8_t live;                 /* (un)reachable went out since the resync began */
	/* reachability (ib_poll.c) */
	unsigned fails;               /* consecutive failed polls */
	int unreachable;
	uint8_t resume_port;          /* where the next poll starts, after a loss */
	struct ib_ctr_switch ctr;     /* LID and PerfMgt capabilities (ib_counters.c) */
};

struct ib_topo {
	struct ib_switch *sw;         /* sorted by GUID after discovery */
	size_t n, cap;
};

/* Walk the fabric. 0 with at least one switch, or a negative errno
 * (-ENOENT: the local port has no link or no switch answered). */
int ib_discover(struct ib_mad *m, struct ib_topo *t);
void ib_topo_free(struct ib_topo *t);

/* Move the switch guid from `from` (a later discovery) into t, keeping t
 * sorted by GUID, assigned. 0, -ENOENT (not in from, or already in t) or
 * -ENOMEM. */
int ib_topo_adopt(struct ib_topo *t, struct ib_topo *from, uint64_t guid);

/* Mark the switches this agent polls: names is NULL/"all" or a comma list of
 * node descriptions; of those, keep index % shard_n == shard_i in GUID order.
 * Returns how many are assigned; logs names that matched nothing. */
size_t ib_topo_assign(struct ib_topo *t, const char *names, unsigned shard_i, unsigned shard_n);

/* Peer of sw's port through dr+port; 0 or a negative errno. */
int ib_discover_peer(struct ib_mad *m, const struct ib_topo *t, const struct ib_switch *sw,
		     unsigned port, struct ib_peer *peer);

/* sw stopped answering on its route: look for another live link into it
 * (a known switch's port whose peer is sw and whose last PortInfo said
 * LinkUp), check it with NodeInfo (same GUID) and adopt it. Tries at most
 * max_tries candidates, shortest routes first. 0 if sw->dr changed. */
int ib_discover_reroute(struct ib_mad *m, struct ib_topo *t, struct ib_switch *sw,
			unsigned max_tries);

#endif

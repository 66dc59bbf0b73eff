/* ib_poll.h - PortInfo polling of one switch, diffed into fb_events.
 *
 * Runs on the MAD thread. Link semantics, as consumers see them:
 *   link_down  PhysState leaves LinkUp (5), e.g. to Polling or Disabled;
 *              severity Warning.
 *   link_up    PhysState becomes LinkUp (5): the SM can use the port. The
 *              event carries port_state, so Init (2) is "up, not yet
 *              configured" and Active (4) "carrying traffic"; severity OK.
 *   port_state PortState changes while the link stays up (Init -> Active
 *              after an SM sweep, Active -> Init...); severity OK.
 * link_class is ISL or HOST by the peer's node type learned at discovery; the
 * last known peer is kept and reported for a down link.
 *
 * Reachability: a poll fails when a PortInfo MAD is lost after the retries;
 * the rest of that switch is skipped (so one dead switch costs one MAD
 * timeout per poll) and the next poll resumes at the lost port. A loss may
 * be the route's fault (a link on the way went down), so at the first loss
 * (and every unreachable_after losses after) another live link into the
 * switch is tried (ib_discover_reroute) before the poll counts as failed. After
 * unreachable_after failed polls in a row: ONE switch_unreachable
 * (Critical), no diffing, one probe MAD per poll; the first answer gives ONE
 * switch_reachable and the states are re-baselined (changes meanwhile are
 * reported as link events against the last known state).
 *
 * Flap: every link_down is also fed to ib_flap.c; when a port went down
 * --flap-count times within --flap-window, ONE flap event (Warning;
 * counters flap_count, flap_window_s) follows that link_down. Counters
 * (PerfMgt) are a separate round on the same thread: ib_counters.h.
 */
#ifndef IB_POLL_H
#define IB_POLL_H

#include "fb_event.h"
#include "ib_discover.h"

/* Where events go; ev is only valid during the call. */
typedef void (*ib_emit_fn)(void *arg, const struct fb_event *ev);

struct ib_poll_ctx {
	struct ib_mad *mad;
	struct ib_topo *topo;
	const char *fabric;
	unsigned unreachable_after;
	ib_emit_fn emit;
	void *emit_arg;
	const _Atomic int *stop;  /* checked between MADs; may be NULL */
	const struct ib_ctr_cfg *ctr;   /* thresholds (ib_counters.c) */
	const struct ib_flap_cfg *flap; /* NULL: no flap detection */
};

/* An event about sw (port 0: the switch itself), its subject and link class
 * filled from the topology; counters empty. */
void ib_poll_fill(struct fb_event *ev, const struct ib_poll_ctx *c, const struct ib_switch *sw,
		  unsigned port, uint8_t kind, uint8_t sev);

/* One poll of one switch. Returns the number of PortInfo MADs answered. */
int ib_poll_switch(struct ib_poll_ctx *c, struct ib_switch *sw);
/* One topology event per port of sw with a known peer. */
void ib_poll_topology(struct ib_poll_ctx *c, const struct ib_switch *sw);

#endif

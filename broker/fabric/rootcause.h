/* rootcause.h - one story per failure: from the cables reported down within
 * a window, the switch they have in common (docs/topology.md, "Root
 * cause").
 *
 * Pure decisions on an explicit clock, over the broker's topology (read
 * only) and the blast radius (blast.h); no I/O, so it is unit-tested on
 * event sequences. broker/storm.c feeds it committed batches and emits
 * its verdicts as events (rc_event.h).
 *
 * A cable is reported down by a switch-side link_down, or a port_state or
 * topology event whose port state is Down (IB PortState 1), on a port with
 * a known peer (another switch: an inter-switch cable; a host). The window
 * opens at the first such report and closes once no report has come for
 * window_ns (at most 8 x window_ns after it opened); what came in it is
 * then weighed:
 *   - the cables are grouped by the switch at one of their ends; the switch
 *     that touches the most of them, and at least 2, is the cause (ties: the
 *     one with the larger share of its own cables down, then the lower
 *     index) -- a single cable down is its own story, not a switch's;
 *   - SwitchFailed when every cable of that switch is down (a dead spine),
 *     SwitchDegraded when only some are (a leaf that lost its uplinks: alive,
 *     but its hosts may have no path);
 *   - the blast radius is weighed on the topology as it is then;
 *   - the symptoms are the reports that touched the cause's cables; the
 *     others are left for the next window.
 * Memory: at most FB_RC_MAX_SYMPTOMS reports in a window; past that they
 * are counted (suppressed) but not kept, and the window still closes.
 */
#ifndef FB_ROOTCAUSE_H
#define FB_ROOTCAUSE_H

#include "blast.h"
#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

#define FB_RC_MAX_SYMPTOMS 65536

struct fb_topology;
struct fb_inventory;
struct fb_rootcause;

enum fb_rc_kind { FB_RC_NONE = 0, FB_RC_SWITCH_FAILED, FB_RC_SWITCH_DEGRADED };

struct fb_rc_verdict {
	enum fb_rc_kind kind;
	uint64_t switch_guid;
	char switch_name[FB_NAME_MAX];
	size_t cables, cables_down;   /* of the cause: cabled, and down now */
	uint64_t *symptoms;           /* EventIds of the reports it explains */
	size_t n_symptoms;
	size_t others;                /* reports of the window it does not explain */
	size_t dropped;               /* reports past FB_RC_MAX_SYMPTOMS */
	struct fb_blast_counts blast;
	const char **no_path;         /* host names (point into topology/inventory) */
	size_t n_no_path;
	const char **degraded;
	size_t n_degraded;
};
void fb_rc_verdict_free(struct fb_rc_verdict *v);

/* window_ns: how long after the first report to decide (0: 500 ms). NULL
 * on ENOMEM. */
struct fb_rootcause *fb_rootcause_new(uint64_t window_ns);
void fb_rootcause_free(struct fb_rootcause *rc);

/* Weigh one accepted event (after the topology learned it) with its
 * EventId at now_ns. Returns 1 if it was a cable-down report (taken into
 * the window), 0 if not. */
int fb_rootcause_observe(struct fb_rootcause *rc, const struct fb_topology *t, const struct fb_event *ev,
			 uint64_t event_id, uint64_t now_ns);

/* When the window that is open has closed by now_ns: decide, fill *v (kind
 * FB_RC_NONE when no switch explains 2 cables or more, or when every cable
 * of the one that does is up again; the caller frees v)
 * and return 1; the explained reports leave the window, the others start a
 * new one. 0 while no window is open or it is still open; -ENOMEM. */
int fb_rootcause_decide(struct fb_rootcause *rc, const struct fb_topology *t, const struct fb_inventory *inv,
			uint64_t now_ns, struct fb_rc_verdict *v);

/* Switch guid weighed again now, for an open incident: fills *v as a
 * verdict would (kind, cables, cables_down, the blast radius) with no
 * symptoms; the caller frees v. Returns 1, 0 for an unknown switch (v
 * empty), -ENOMEM. */
int fb_rootcause_reweigh(const struct fb_topology *t, const struct fb_inventory *inv, uint64_t guid,
			 struct fb_rc_verdict *v);

/* How many cables switch guid has, and how many of them are down now (the
 * rule of a verdict's cables_down). 0 with both 0 for an unknown switch;
 * -ENOMEM. */
int fb_rootcause_switch_cables(const struct fb_topology *t, const struct fb_inventory *inv, uint64_t guid,
			       size_t *cables, size_t *down);

/* When the open window closes (for the caller's timer), or 0 if none. */
uint64_t fb_rootcause_deadline(const struct fb_rootcause *rc);

#endif

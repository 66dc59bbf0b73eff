/* ib_flap.h - link flap detection for one port: pure bookkeeping, no MADs.
 *
 * A flap is --flap-count link_down transitions of one port within
 * --flap-window seconds (default 3 within 60 s). ib_poll.c feeds every
 * link_down of a port here, after emitting the link_down event itself, and
 * emits ONE flap event when ib_flap_note() says so. At most one flap event
 * per window: after one, the port's history is cleared and further downs
 * within the next window still go out as link_down events but count for
 * nothing; a new flap event needs flap-count downs within a window, all of
 * them after that quiet window ends.
 */
#ifndef IB_FLAP_H
#define IB_FLAP_H

#include <stdint.h>

#define IB_FLAP_COUNT_MAX 32

struct ib_flap_cfg {
	unsigned count;     /* downs that make a flap, 2..IB_FLAP_COUNT_MAX */
	unsigned window_s;  /* 1..86400 */
};

/* Per port, zeroed = no history. Owned by the MAD thread (struct ib_port). */
struct ib_flap {
	uint64_t downs_ms[IB_FLAP_COUNT_MAX]; /* ring of down times, CLOCK_MONOTONIC ms */
	uint8_t head, n;
	uint64_t quiet_until_ms;              /* no flap event before this */
};

/* Record a link_down at now_ms. Returns 1 when a flap event is due, with
 * *count = the downs seen within the window (>= cfg->count); else 0. */
int ib_flap_note(struct ib_flap *f, const struct ib_flap_cfg *cfg, uint64_t now_ms,
		 unsigned *count);

#endif

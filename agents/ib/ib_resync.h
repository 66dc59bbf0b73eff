/* ib_resync.h - after a start, make the broker's view of our switches
 * converge to what we see now (proto/PROTOCOL.md, "Resync").
 *
 * The agent owns the diff: it fetches GET /fabric/map from the broker's
 * HTTP listener (proto/client/fb_map_get.h) and compares, for every switch it polls, the map's
 * Reachable and each port's LinkState (Switches.*.Ports, the state as last
 * reported) with its own fresh discovery. Every difference becomes the
 * event a live change would have given (link_down, link_up,
 * switch_unreachable, switch_reachable), with the counter `resync` = 1
 * (Redfish Oem.Fabricbus.Resync: true), and goes through the agent's
 * session like any other event: sequence number, journal before ack,
 * dedup. A switch the map says we reported last (Switches.*.Agent) that
 * discovery no longer finds is reported unreachable, and handed back to
 * the caller, which rediscovers now and then until it answers again
 * (ib_worker.c).
 *
 * A port or switch whose `live` flag is set (a live event about it went out
 * since the resync began: ib_poll.c sets it, the caller clears it when a
 * resync begins) is not diffed: that event is newer than the map.
 *
 * Runs on the MAD thread (the HTTP call blocks for at most timeout_ms).
 */
#ifndef IB_RESYNC_H
#define IB_RESYNC_H

#include "ib_poll.h"

#include <jansson.h>
#include <stddef.h>

/* Switches reported unreachable because discovery did not find them. */
struct ib_gone {
	uint64_t *guid;
	size_t n, cap;
};
void ib_gone_free(struct ib_gone *g);
void ib_gone_remove(struct ib_gone *g, size_t i);

/* Diff the polled switches of c->topo (their PortInfo as discovery or the
 * last poll read it) against map, emitting through c->emit. agent_id: ours,
 * to find the switches we reported last; those not found are added to gone
 * (may be NULL). Returns the events emitted. */
size_t ib_resync_diff(struct ib_poll_ctx *c, const json_t *map, const char *agent_id,
		      struct ib_gone *gone);

#endif

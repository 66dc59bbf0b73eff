/* inventory.h - which node owns which port: the broker's port GUID/MAC map.
 *
 * Fed by INVENTORY events (fabricbus-agent-node: one per local port) as they
 * are accepted, and by the journal recovery at start, so a restart keeps the
 * map without waiting for the node agents. Keys: the IB port GUID, the CA's
 * node GUID (the event text "node_guid=0x..."; a switch agent's peer_guid is
 * the peer's node GUID) and the Ethernet MAC (subj.addr). The newest event
 * for a key wins.
 *
 * Each port also keeps its own link state as its node agent last said it
 * (the first inventory event's state, then the node-side link_down/link_up), for
 * the node agent's resync (proto/PROTOCOL.md): "link" in fb_inventory_json.
 *
 * Used by ingest.c to fill subj.node of switch-side events, and by status.c.
 * Owned by the loop thread; no locking.
 */
#ifndef FB_INVENTORY_H
#define FB_INVENTORY_H

#include "fb_event.h"

#include <jansson.h>
#include <stddef.h>

struct fb_inventory;

struct fb_inventory *fb_inventory_new(void);
void fb_inventory_free(struct fb_inventory *inv);
/* Learn from ev if it is an INVENTORY event with a node name, or the link
 * state of a known port from a node-side link_down/link_up; else nothing.
 * Returns 0, or -ENOMEM (the map is then incomplete, never wrong). */
int fb_inventory_learn(struct fb_inventory *inv, const struct fb_event *ev);
/* If ev names no node and its peer_guid, port_guid or (node-side) MAC is
 * known, set subj.node; on an Ethernet switch-side event peer_guid is the
 * host's MAC. Returns 1 if it did, else 0. */
int fb_inventory_enrich(const struct fb_inventory *inv, struct fb_event *ev);
/* The node owning a port or node GUID, or NULL. */
const char *fb_inventory_node_by_guid(const struct fb_inventory *inv, uint64_t guid);
/* {"nodes": N, "n_ports": N, "ib_ports": N, "eth_ports": N, "cap": cap,
 *  "truncated": bool, "ports": [ {guid|mac, node, device, port|ifindex,
 *  link ("up"/"down", when known)} ] }
 * with at most cap entries in "ports" (new reference, NULL on ENOMEM). */
json_t *fb_inventory_json(const struct fb_inventory *inv, size_t cap);

#endif

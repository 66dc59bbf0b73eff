/* node_resync.h - the node agent's resync (proto/PROTOCOL.md, "Resync"): at
 * start, before its inventory events, the agent compares each local port with
 * what the broker last heard about it from a node agent (NodeLinkState in
 * GET /fabric/map?nodes=<node>), so that a link that went down or came back
 * while the agent was away gives the link_down/link_up a live change would. */
#ifndef NODE_RESYNC_H
#define NODE_RESYNC_H

#include "node_port.h"

#include <jansson.h>
#include <stdint.h>

/* FB_KIND_LINK_DOWN or FB_KIND_LINK_UP when p's state differs from the
 * map's NodeLinkState for it (found by port GUID, or MAC for Ethernet), or
 * 0 (the same, or the map does not know the port or its state). */
uint8_t node_resync_kind(const json_t *map, const char *node, const struct node_port *p);

#endif

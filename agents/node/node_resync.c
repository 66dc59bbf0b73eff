/* node_resync.c - a local port against the broker's map (node_resync.h). */
#include "node_resync.h"

#include <inttypes.h>
#include <stdio.h>
#include <strings.h>

static const json_t *map_port(const json_t *map, const char *node, const struct node_port *p)
{
	const json_t *ports = json_object_get(json_object_get(json_object_get(map, "Nodes"), node),
					      "Ports");
	char guid[24];
	snprintf(guid, sizeof(guid), "0x%016" PRIx64, p->port_guid);
	size_t i;
	const json_t *x;
	json_array_foreach(ports, i, x) {
		const char *g = json_string_value(json_object_get(x, "PortGUID"));
		const char *m = json_string_value(json_object_get(x, "MAC"));
		if (p->tech == FB_TECH_IB ? g && p->port_guid && strcasecmp(g, guid) == 0
					  : m && p->mac[0] && strcasecmp(m, p->mac) == 0)
			return x;
	}
	return NULL;
}

uint8_t node_resync_kind(const json_t *map, const char *node, const struct node_port *p)
{
	const char *was = json_string_value(json_object_get(map_port(map, node, p), "NodeLinkState"));
	if (!was)
		return 0;
	if (p->up && strcasecmp(was, "down") == 0)
		return FB_KIND_LINK_UP;
	if (!p->up && strcasecmp(was, "up") == 0)
		return FB_KIND_LINK_DOWN;
	return 0;
}

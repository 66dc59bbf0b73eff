/* snmp_resync.c - the SNMP poller's resync against the broker's map: see
 * snmp_resync.h. */
#include "snmp_resync.h"

#include "fb_log.h"
#include "fb_map_get.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The entry of ifindex in Ports: [{"LinkState":"down","Port":3},...] of
 * the switch's map entry, or NULL. */
static const json_t *map_port(const json_t *ports, uint32_t ifindex)
{
	size_t i;
	const json_t *p;
	json_array_foreach(ports, i, p)
		if (json_integer_value(json_object_get(p, "Port")) == (json_int_t)ifindex)
			return p;
	return NULL;
}

static int port_up(void *arg, uint32_t ifindex)
{
	const json_t *p = map_port(arg, ifindex);
	const char *st = p ? json_string_value(json_object_get(p, "LinkState")) : NULL;
	if (st && strcmp(st, "up") == 0)
		return 1;
	return st && strcmp(st, "down") == 0 ? 0 : -1;
}

/* The port's "PeerMAC" ("aa:bb:cc:dd:ee:ff"), or 0. */
static uint64_t port_peer(void *arg, uint32_t ifindex)
{
	const json_t *p = map_port(arg, ifindex);
	const char *s = p ? json_string_value(json_object_get(p, "PeerMAC")) : NULL;
	unsigned b[6];
	char tail;
	if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
			 &tail) != 6)
		return 0;
	uint64_t m = 0;
	for (int k = 0; k < 6; k++)
		m = m << 8 | b[k];
	return m;
}

static const json_t *find_switch(const json_t *map, const char *name)
{
	const char *key;
	const json_t *sw;
	json_object_foreach((json_t *)json_object_get(map, "Switches"), key, sw) {
		const char *n = json_string_value(json_object_get(sw, "Name"));
		if (n && strcmp(n, name) == 0)
			return sw;
	}
	return NULL;
}

size_t snmp_resync_diff(const json_t *map, const struct snmp_ifc_switch *sw,
			snmp_ifc_emit_fn emit, void *arg)
{
	const json_t *ent = find_switch(map, sw->name);
	const json_t *reach = ent ? json_object_get(ent, "Reachable") : NULL;
	const json_t *ports = ent ? json_object_get(ent, "Ports") : NULL;
	struct snmp_ifc_known k = {
		.reachable = json_is_boolean(reach) ? json_is_true(reach) : -1,
		.port_up = port_up, .port_peer = port_peer, .arg = (void *)ports,
	};
	return snmp_ifc_resync(sw, &k, emit, arg);
}

int snmp_resync_switch(const struct fb_http_client *cl, const char *host, int port,
		       const struct snmp_ifc_switch *sw, snmp_ifc_emit_fn emit, void *arg)
{
	json_t *map = NULL;
	char err[512];
	int rc = fb_map_get(cl, host, port, "/fabric/map", SNMP_RESYNC_TIMEOUT_MS, &map, err, sizeof(err));
	if (rc < 0) {
		fb_log_warn("resync: switch '%s': %s; not resyncing it: changes made while this agent "
			    "was away stay unreported (is fabricbusd's HttpListen at --map?)", sw->name,
			    err);
		return rc;
	}
	if (rc > 0) {
		fb_log_warn("resync: the broker has no GET /fabric/map (HTTP 404); not resyncing");
		return -ENOENT;
	}
	size_t n = snmp_resync_diff(map, sw, emit, arg);
	fb_log_info("resync: switch '%s' (%s): %zu events against the broker's map", sw->name,
		    sw->addr, n);
	json_decref(map);
	return 0;
}

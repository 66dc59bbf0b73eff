/* snmp_resync.h - the SNMP poller's resync (proto/PROTOCOL.md, "Resync"):
 * after a switch's first complete round, and again after a reconnect, its
 * fresh view is diffed against what the broker holds of it in GET
 * /fabric/map (Switches.*, found by Name: the broker keys an Ethernet
 * switch by its fabric and name, its ports by ifIndex) and every
 * difference goes out as the live event would, with the counter resync = 1
 * (snmp_ifc_resync); a host MAC the broker does not show on the port
 * ("PeerMAC") goes out as a topology event again. Runs on the loop thread: the GET blocks for at most
 * SNMP_RESYNC_TIMEOUT_MS.
 */
#ifndef SNMP_RESYNC_H
#define SNMP_RESYNC_H

#include "snmp_ifcore.h"

#include "fb_http.h"

#include <jansson.h>

#define SNMP_RESYNC_TIMEOUT_MS 2000

/* Diff sw against map (a GET /fabric/map answer); returns the events
 * emitted. */
size_t snmp_resync_diff(const json_t *map, const struct snmp_ifc_switch *sw,
			snmp_ifc_emit_fn emit, void *arg);
/* GET /fabric/map from host:port (with cl's token and TLS, fb_map_get.h),
 * then snmp_resync_diff: 0. A broker that does not answer (or has no map)
 * is logged and skipped: negative. */
int snmp_resync_switch(const struct fb_http_client *cl, const char *host, int port,
		       const struct snmp_ifc_switch *sw, snmp_ifc_emit_fn emit, void *arg);

#endif

/* snmp_map.h - one received trap (a parsed net-snmp PDU) -> one fb_event.
 *
 * Pure: no I/O, no clock but the event's timestamp, so the fuzzer
 * (tests/fuzz/fuzz_snmp_map.c) drives it with PDUs from net-snmp's own
 * parser. The trap OID is the v2 snmpTrapOID.0 varbind, or for a v1 Trap-PDU
 * the RFC 3584 translation (generic 0..5 -> 1.3.6.1.6.3.1.1.5.(g+1),
 * enterprise-specific -> enterprise.0.specific).
 *
 *   linkDown (1.3.6.1.6.3.1.1.5.3)  link_down, Warning; but ifAdminStatus
 *                                   down(2) is an operator's choice, not a
 *                                   fault: port_state, OK (no drain)
 *   linkUp (1.3.6.1.6.3.1.1.5.4)    link_up, OK
 *   a Trap= OID of the config       its kind and severity
 *   anything else                   SNMP_MAP_IGNORED (counted by the caller)
 *
 * The subject: tech ethernet; addr = the sender's address; switch_name =
 * the config's name for it, else the address; ifindex from the ifIndex
 * varbind (or the index of ifAdminStatus/ifOperStatus/ifDescr/ifName);
 * device = ifName, else ifDescr, else the name the poller learned (lookup);
 * peer_guid/peer_name = the host MAC the poller learned behind the port
 * (snmp_mac.h), if any: the broker names the node from it.
 */
#ifndef SNMP_MAP_H
#define SNMP_MAP_H

#include "fb_event.h"
#include "snmp_conf.h"

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#define SNMP_MAP_IGNORED 1 /* not a trap we turn into an event */

/* The name learned for (switch address, ifIndex) by the poller, or NULL. */
typedef const char *(*snmp_map_ifname_fn)(void *arg, const char *addr, uint32_t ifindex);

/* The host MAC learned behind (switch address, ifIndex), or 0. */
typedef uint64_t (*snmp_map_peer_fn)(void *arg, const char *addr, uint32_t ifindex);

struct snmp_map_ctx {
	const struct snmp_conf *conf;
	const char *fabric;        /* copied into every event */
	snmp_map_ifname_fn ifname; /* may be NULL */
	void *ifname_arg;
	snmp_map_peer_fn peer;     /* may be NULL */
	void *peer_arg;
};

/* 0 and *ev filled; SNMP_MAP_IGNORED; or FB_EMALFORMED with why (a trap
 * with no snmpTrapOID.0, a linkDown/linkUp with no ifIndex). */
int snmp_map_trap(const struct snmp_map_ctx *m, const char *sender, const netsnmp_pdu *pdu,
		  struct fb_event *ev, const char **why);

#endif

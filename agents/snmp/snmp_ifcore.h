/* snmp_ifcore.h - what an IF-MIB poll round means: the poller's pure logic.
 *
 * No I/O and no clock: the poller (snmp_poll.c) hands in each completed
 * round of one switch with the time it completed, and this module diffs it
 * against the last one and emits events. tests/unit/test_snmp_ifcore.c
 * drives it with an explicit clock.
 *
 * - ifOperStatus changes (after the first round, which is the baseline):
 *   to up(1) is link_up (OK); from up to anything else is link_down
 *   (Warning), or port_state (OK) when ifAdminStatus is down(2): an
 *   operator's choice is not a fault; other changes are port_state (OK).
 * - Error and discard counters (Counter32): delta = now - prev modulo 2^32,
 *   so a wrap counts right; rates use the measured time between rounds.
 *   When sysUpTime went backwards the switch (its SNMP agent) restarted:
 *   counters are a new baseline, no delta, and ifIndex -> ifName is learned
 *   again. ifHCIn/OutOctets (Counter64) wrap modulo 2^64.
 * - Thresholds with the IB agent's hysteresis: counter_threshold once when
 *   a rate reaches its threshold, counter_cleared once after
 *   SNMP_IFC_CLEAR_AFTER rounds below, nothing in between.
 * - ifName is learned on the first round and again after a restart or a
 *   change of ifTableLastChange (snmp_ifc_need_names() tells the poller to
 *   fetch the ifName column).
 * - SNMP_IFC unreachable: snmp_ifc_failed() per failed round;
 *   switch_unreachable (Critical) once after unreachable_after in a row,
 *   switch_reachable (OK) on the next good round.
 */
#ifndef SNMP_IFCORE_H
#define SNMP_IFCORE_H

#include "fb_event.h"
#include "fb_threshold.h"
#include "snmp_mac.h"

#include <stddef.h>
#include <stdint.h>

#define SNMP_IFC_CLEAR_AFTER FB_HYST_CLEAR_AFTER

enum snmp_ifc_ctr { SNMP_IFC_IN_ERR, SNMP_IFC_OUT_ERR, SNMP_IFC_IN_DISC, SNMP_IFC_OUT_DISC,
		    SNMP_IFC__N };

/* Which columns a row has (a bit each). */
enum {
	SNMP_IFC_HAVE_ADMIN = 1 << 0,
	SNMP_IFC_HAVE_OPER = 1 << 1,
	SNMP_IFC_HAVE_HC_IN = 1 << 2,
	SNMP_IFC_HAVE_HC_OUT = 1 << 3,
	SNMP_IFC_HAVE_NAME = 1 << 4,
	SNMP_IFC_HAVE_CTR0 = 1 << 5, /* << counter index */
};

struct snmp_ifc_cfg {
	uint64_t rate[SNMP_IFC__N]; /* thresholds, per second */
	unsigned unreachable_after;
};

struct snmp_ifc_row {
	uint32_t ifindex;
	unsigned have;
	int admin, oper;
	uint32_t ctr[SNMP_IFC__N];
	uint64_t hc_in, hc_out;
	char name[FB_NAME_MAX];
};

struct snmp_ifc_round {
	uint32_t uptime_cs;          /* sysUpTime.0 */
	uint32_t last_change;        /* ifTableLastChange.0 */
	int have_uptime, have_last_change, have_names;
	const struct snmp_ifc_row *rows;
	size_t n_rows;
	uint64_t t_ms;               /* when it completed (monotonic) */
};

struct snmp_ifc_port {
	uint32_t ifindex;
	char name[FB_NAME_MAX];
	int oper, admin;
	int have_ctr;
	uint32_t prev[SNMP_IFC__N];
	uint64_t hc_in, hc_out;
	uint64_t t_ms;
	struct fb_hyst h[SNMP_IFC__N];
	uint64_t peer_mac;           /* the host behind it (snmp_mac.h), 0 none */
	uint8_t peer_src;            /* enum snmp_mac_src */
};

/* One switch's state. Zero it, then set the identity fields. */
struct snmp_ifc_switch {
	char addr[FB_ADDR_MAX];
	char name[FB_NAME_MAX];      /* config name, else the address */
	char fabric[FB_FABRIC_MAX];
	uint8_t link_class;
	struct snmp_ifc_port *ports; /* owned; sorted by ifindex */
	size_t n_ports;
	int have_round, names_stale;
	uint32_t uptime_cs, last_change;
	unsigned fails;
	int unreachable;
	uint64_t restarts;
};

typedef void (*snmp_ifc_emit_fn)(void *arg, const struct fb_event *ev);

void snmp_ifc_cfg_default(struct snmp_ifc_cfg *cfg);
/* "if_in_errors=10": 0 or -EINVAL. */
int snmp_ifc_parse_threshold(struct snmp_ifc_cfg *cfg, const char *spec);

/* 1 when the next round should fetch ifName. */
int snmp_ifc_need_names(const struct snmp_ifc_switch *sw);
/* Diff a completed round. 0, or -ENOMEM (the round is then ignored). */
int snmp_ifc_update(struct snmp_ifc_switch *sw, const struct snmp_ifc_cfg *cfg,
		    const struct snmp_ifc_round *r, snmp_ifc_emit_fn emit, void *arg);
/* A round failed (timeout, error status). */
void snmp_ifc_failed(struct snmp_ifc_switch *sw, const struct snmp_ifc_cfg *cfg,
		     snmp_ifc_emit_fn emit, void *arg);
/* Resync (proto/PROTOCOL.md): what the broker holds of sw, from its
 * GET /fabric/map (snmp_resync.c). reachable: 1, 0, or -1 not known;
 * port_up(arg, ifindex): 1 up, 0 down, -1 the broker has no state. */
struct snmp_ifc_known {
	int reachable;
	int (*port_up)(void *arg, uint32_t ifindex);
	/* The peer MAC the broker holds for the port, 0 none; NULL: not known. */
	uint64_t (*port_peer)(void *arg, uint32_t ifindex);
	void *arg;
};
/* After a complete round: every difference between sw (as the round left
 * it) and what the broker holds becomes the event a live change would
 * give (switch_reachable, link_up, link_down, or port_state for an
 * administratively down port) with the counter resync = 1; a port the
 * broker has no state of gets a topology event with its ifOperStatus (the
 * baseline a later resync diffs against); a port whose peer MAC the broker
 * does not hold (port_peer) gets a topology event with it. Returns the
 * events emitted. */
size_t snmp_ifc_resync(const struct snmp_ifc_switch *sw, const struct snmp_ifc_known *k,
		       snmp_ifc_emit_fn emit, void *arg);
/* A MAC walk's result (snmp_mac_resolve): each port of sw whose host MAC is
 * new or changed takes it and gets a topology event naming it (peer_guid =
 * the MAC's 48 bits, peer_name = "aa:bb:cc:dd:ee:ff"); ports the walk did
 * not list, or listed with several MACs, keep what they had (a host whose
 * link is down drops out of the FDB and ARP tables but is still cabled
 * there); a MAC found on another port leaves its old one (a moved cable).
 * From then on every event of the port carries its peer. emit
 * NULL: record only (a resync follows, which sends what the broker lacks).
 * Returns the events emitted. */
size_t snmp_ifc_set_peers(struct snmp_ifc_switch *sw, const struct snmp_mac_port *mp, size_t n,
			  snmp_ifc_emit_fn emit, void *arg);
/* A topology event for every port with a peer (a resync that could not
 * read the broker's map). Returns the events emitted. */
size_t snmp_ifc_send_peers(const struct snmp_ifc_switch *sw, snmp_ifc_emit_fn emit, void *arg);
/* The peer MAC of a port, or 0. */
uint64_t snmp_ifc_peer(const struct snmp_ifc_switch *sw, uint32_t ifindex);
/* Fill ev's peer (peer_guid, peer_name) with mac. */
void snmp_ifc_put_peer(struct fb_event *ev, uint64_t mac);
/* The learned name of a port, or NULL. */
const char *snmp_ifc_name(const struct snmp_ifc_switch *sw, uint32_t ifindex);
void snmp_ifc_switch_free(struct snmp_ifc_switch *sw);

/* The arithmetic, for tests and docs. */
uint32_t snmp_ifc_delta32(uint32_t prev, uint32_t now);

#endif

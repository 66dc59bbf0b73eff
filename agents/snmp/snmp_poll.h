/* snmp_poll.h - the IF-MIB poller: net-snmp's asynchronous API on the
 * agent's libevent loop.
 *
 * One SNMPv2c (or SNMPv3 authPriv: Poll=ADDRESS v3 USER) session per
 * Poll= switch (snmp_sess_open), all polled at
 * once: every --poll-interval each idle switch starts a round of GETBULK
 * requests (snmp_sess_async_send) walking ifAdminStatus, ifOperStatus,
 * ifIn/OutDiscards, ifIn/OutErrors, ifHCIn/OutOctets (and ifName when
 * snmp_ifc_need_names() says so), with sysUpTime.0 and ifTableLastChange.0
 * as non-repeaters of the first request. Each column is followed on its
 * own until it leaves its subtree, so sparse tables walk right. Each
 * session's socket is a read event; a timer runs snmp_sess_timeout() for
 * retries and timeouts. A complete round goes to snmp_ifc_update(); a
 * timed-out or refused one to snmp_ifc_failed().
 *
 * The MAC walk: after a complete round, once every mac_interval_ms (and
 * after the first round), the same session walks the LLDP, FDB and ARP
 * columns of snmp_mac_cols[] (GETBULK, each column on its own; a column
 * the switch does not have ends at once) and hands the result to
 * snmp_ifc_set_peers(): which host MAC is behind which ifIndex. A switch's
 * resync waits for it, so that the peers are diffed too.
 */
#ifndef SNMP_POLL_H
#define SNMP_POLL_H

#include "snmp_conf.h"
#include "snmp_ifcore.h"

#include <event2/event.h>
#include <stdint.h>

struct snmp_poll_cfg {
	unsigned interval_ms, timeout_ms, retries;
	unsigned mac_interval_ms;     /* 0: no MAC walk */
	struct snmp_ifc_cfg ifc;
	const struct snmp_conf *conf; /* Poll= lines, Switch= names */
	const char *fabric;
	snmp_ifc_emit_fn emit;
	void *emit_arg;
	/* Called after the first complete round of each switch, and after the
	 * next one following snmp_poll_resync(): diff sw against the broker
	 * (snmp_ifc_resync). 0, or negative when the broker's map could not be
	 * read (the peers a MAC walk recorded for it are then sent as they
	 * are). NULL: no resync. */
	int (*resync)(void *arg, const struct snmp_ifc_switch *sw, snmp_ifc_emit_fn emit,
		      void *emit_arg);
};

struct snmp_poll;

void snmp_poll_cfg_default(struct snmp_poll_cfg *cfg);
/* Open a session per Poll= line and start polling. 0, or a negative
 * errno with err naming the switch. cfg must outlive the poller. */
int snmp_poll_start(struct event_base *base, const struct snmp_poll_cfg *cfg,
		    struct snmp_poll **out, char *err, size_t errsz);
/* snmp_map_peer_fn: the host MAC learned behind (address, ifIndex), or 0. */
uint64_t snmp_poll_peer(void *poll, const char *addr, uint32_t ifindex);
/* snmp_map_ifname_fn: the ifName learned for (address, ifIndex), or NULL. */
const char *snmp_poll_ifname(void *poll, const char *addr, uint32_t ifindex);
uint64_t snmp_poll_events(const struct snmp_poll *p);
/* Resync every switch after its next complete round (a reconnect). */
void snmp_poll_resync(struct snmp_poll *p);
void snmp_poll_stop(struct snmp_poll *p); /* NULL ok */
void snmp_poll_free(struct snmp_poll *p); /* NULL ok */

#endif

/* fuzz_snmp_map.c - libFuzzer target for the trap -> event mapping of
 * fabricbus-agent-snmp (agents/snmp/snmp_map.c), fed through net-snmp's own
 * PDU parser as the agent is. Input: one byte of version (even: SNMPv1,
 * odd: SNMPv2c), then the PDU's BER (Trap-PDU, SNMPv2-Trap-PDU or
 * InformRequest-PDU). Any crash, out-of-bounds read or leak is a bug, and
 * so is a broken promise: an event that the broker would refuse, an
 * Ethernet event without tech ethernet or the sender's address, a link
 * event without an ifIndex, a return value outside the documented ones.
 *
 * The same varbinds also go through the MAC-table reading of the poller's
 * walk (agents/snmp/snmp_mac.c: LLDP, FDB, ARP columns -> the host MAC per
 * port); a broken promise there is a port listed twice or out of order, a
 * MAC that is not a 48-bit unicast one, or a MAC on a port whose best
 * source listed several. The seed v2c_mac_tables has a row of each column. */
#include "fb_err.h"
#include "snmp_conf.h"
#include "snmp_ifcore.h"
#include "snmp_mac.h"
#include "snmp_map.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *ifname(void *arg, const char *addr, uint32_t ifindex)
{
	(void)arg;
	(void)addr;
	return ifindex == 7 ? "swp7" : NULL;
}

static uint64_t peer(void *arg, const char *addr, uint32_t ifindex)
{
	(void)arg;
	(void)addr;
	return ifindex == 7 ? 0x02000000000aULL : 0;
}

/* The varbinds as a MAC walk would hand them over. */
static void mac_tables(const netsnmp_pdu *pdu)
{
	struct snmp_mac_tab t;
	memset(&t, 0, sizeof(t));
	for (const netsnmp_variable_list *v = pdu->variables; v; v = v->next_variable) {
		int rc = snmp_mac_take(&t, v);
		if (rc != 0 && rc != 1)
			__builtin_trap(); /* -ENOMEM cannot happen at this size */
	}
	struct snmp_mac_port *p = NULL;
	size_t n = 0;
	if (snmp_mac_resolve(&t, &p, &n) != 0)
		__builtin_trap();
	for (size_t i = 0; i < n; i++) {
		if (i && p[i - 1].ifindex >= p[i].ifindex)
			__builtin_trap();
		if (p[i].src < SNMP_MAC_ARP || p[i].src > SNMP_MAC_LLDP || !p[i].n_macs)
			__builtin_trap();
		if (p[i].mac ? (p[i].n_macs != 1 || p[i].mac >> 48 || (p[i].mac >> 40) & 1)
			     : p[i].n_macs < 2)
			__builtin_trap();
	}
	if (t.taken + t.ignored + t.dropped == 0 && pdu->variables)
		__builtin_trap(); /* every varbind is counted somewhere */
	free(p);
	snmp_mac_tab_free(&t);
}

static struct snmp_conf conf;

static void setup(void)
{
	char err[256];
	if (conf.n_communities)
		return;
	if (snmp_conf_line(&conf, "Community", "public", "fuzz", err, sizeof(err)) ||
	    snmp_conf_line(&conf, "Switch", "192.0.2.1 leaf1 host", "fuzz", err, sizeof(err)) ||
	    snmp_conf_line(&conf, "Trap", "1.3.6.1.4.1.99.1 Critical", "fuzz", err, sizeof(err)) ||
	    snmp_conf_line(&conf, "Trap", "1.3.6.1.4.1.8072.0.2 Warning link_down", "fuzz", err,
			   sizeof(err)))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > 4096)
		return 0;
	setup();
	netsnmp_pdu *pdu = snmp_pdu_create(SNMP_MSG_TRAP2);
	if (!pdu)
		return 0;
	pdu->version = data[0] & 1 ? SNMP_VERSION_2c : SNMP_VERSION_1;
	u_char *copy = malloc(size - 1);
	memcpy(copy, data + 1, size - 1);
	size_t len = size - 1;
	if (snmp_pdu_parse(pdu, copy, &len) == 0) {
		struct snmp_map_ctx m = { .conf = &conf, .fabric = "ETH", .ifname = ifname,
					  .peer = peer };
		struct fb_event ev;
		const char *why = NULL, *bad = NULL;
		int rc = snmp_map_trap(&m, "192.0.2.1", pdu, &ev, &why);
		if (rc == 0) {
			ev.seq = 1; /* the session's part */
			memcpy(ev.agent_id, "snmp-fuzz", sizeof("snmp-fuzz"));
			if (fb_event_check(&ev, &bad) != 0 || ev.tech != FB_TECH_ETH ||
			    strcmp(ev.subj.addr, "192.0.2.1") != 0 ||
			    strcmp(ev.subj.switch_name, "leaf1") != 0 ||
			    ev.link_class != FB_LINK_HOST)
				__builtin_trap();
			if ((ev.kind == FB_KIND_LINK_UP || ev.kind == FB_KIND_LINK_DOWN) &&
			    ev.severity != FB_SEV_OK && ev.severity != FB_SEV_WARNING)
				__builtin_trap();
			/* the peer MAC of ifIndex 7, and of no other port */
			if (ev.subj.ifindex == 7 ? strcmp(ev.subj.peer_name, "02:00:00:00:00:0a") != 0 ||
							   ev.subj.peer_guid != 0x02000000000aULL
						 : ev.subj.peer_guid != 0)
				__builtin_trap();
		} else if (rc == FB_EMALFORMED) {
			if (!why || !*why)
				__builtin_trap();
		} else if (rc != SNMP_MAP_IGNORED) {
			__builtin_trap();
		}
		mac_tables(pdu);
	}
	snmp_free_pdu(pdu);
	free(copy);
	return 0;
}

/* fuzz_snmp_map.c - libFuzzer target for the trap -> event mapping of
 * fabricbus-agent-snmp (agents/snmp/snmp_map.c), fed through net-snmp's own
 * PDU parser as the agent is. Input: one byte of version (even: SNMPv1,
 * odd: SNMPv2c), then the PDU's BER (Trap-PDU, SNMPv2-Trap-PDU or
 * InformRequest-PDU). Any crash, out-of-bounds read or leak is a bug, and
 * so is a broken promise: an event that the broker would refuse, an
 * Ethernet event without tech ethernet or the sender's address, a link
 * event without an ifIndex, a return value outside the documented ones. */
#include "fb_err.h"
#include "snmp_conf.h"
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
		struct snmp_map_ctx m = { .conf = &conf, .fabric = "ETH", .ifname = ifname };
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
		} else if (rc == FB_EMALFORMED) {
			if (!why || !*why)
				__builtin_trap();
		} else if (rc != SNMP_MAP_IGNORED) {
			__builtin_trap();
		}
	}
	snmp_free_pdu(pdu);
	free(copy);
	return 0;
}

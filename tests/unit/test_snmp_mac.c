/* test_snmp_mac.c - which host MAC is behind which switch port
 * (agents/snmp/snmp_mac.c) from varbinds built with net-snmp as a switch
 * would answer them: LLDP over FDB over ARP, FDB through
 * dot1dBasePortIfIndex, several MACs on a port (not a host), malformed
 * rows ignored; then what the agent does with it (snmp_ifcore.c): one
 * topology event per new peer, the peer on every later event of the port,
 * a resync that sends only what the broker's map lacks, and the trap path
 * naming the peer. */
#include "fb_test.h"
#include "fb_test_sink.h"
#include "snmp_conf.h"
#include "snmp_ifcore.h"
#include "snmp_mac.h"
#include "snmp_map.h"

#include <stdlib.h>
#include <string.h>

static const u_char MAC_A[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
static const u_char MAC_B[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };
static const u_char MAC_C[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0c };
static const u_char MCAST[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
#define U64(m) ((uint64_t)(m)[0] << 40 | (uint64_t)(m)[1] << 32 | (uint64_t)(m)[2] << 24 | \
		(uint64_t)(m)[3] << 16 | (uint64_t)(m)[4] << 8 | (uint64_t)(m)[5])

/* column OID + index -> a varbind of type/value, handed to snmp_mac_take. */
static int put(struct snmp_mac_tab *t, int col, const oid *idx, size_t n, u_char type,
	       const void *val, size_t len)
{
	oid name[MAX_OID_LEN];
	const struct snmp_mac_col_def *d = &snmp_mac_cols[col];
	memcpy(name, d->oid, d->len * sizeof(oid));
	memcpy(name + d->len, idx, n * sizeof(oid));
	netsnmp_variable_list *v = NULL;
	if (!snmp_varlist_add_variable(&v, name, d->len + n, type, val, len))
		abort();
	int rc = snmp_mac_take(t, v);
	snmp_free_varbind(v);
	return rc;
}

static int put_int(struct snmp_mac_tab *t, int col, const oid *idx, size_t n, long x)
{
	return put(t, col, idx, n, ASN_INTEGER, &x, sizeof(x));
}

static const struct snmp_mac_port *port_of(const struct snmp_mac_port *p, size_t n, uint32_t ifx)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].ifindex == ifx)
			return &p[i];
	return NULL;
}

static void mac_sources_rank_and_map_bridge_ports(void)
{
	struct snmp_mac_tab t;
	memset(&t, 0, sizeof(t));
	/* bridge ports 1, 2, 3 are ifIndex 11, 12, 13 */
	for (oid bp = 1; bp <= 3; bp++)
		CHECK_EQ(put_int(&t, SNMP_MAC_C_BASEPORT, &bp, 1, (long)(10 + bp)), 0);
	/* FDB: A on port 1; B and C both on port 2 (a switch behind it);
	 * a multicast entry and the switch's own (port 0) are no hosts. */
	oid fa[6] = { 2, 0, 0, 0, 0, 10 }, fb[6] = { 2, 0, 0, 0, 0, 11 }, fc[6] = { 2, 0, 0, 0, 0, 12 };
	oid fm[6] = { 1, 0, 94, 0, 0, 1 }, fself[6] = { 2, 0, 0, 0, 0, 99 };
	CHECK_EQ(put_int(&t, SNMP_MAC_C_FDB, fa, 6, 1), 0);
	CHECK_EQ(put_int(&t, SNMP_MAC_C_FDB, fb, 6, 2), 0);
	oid qc[7] = { 1, 2, 0, 0, 0, 0, 12 }; /* Q-BRIDGE: FDB id 1, then the MAC */
	CHECK_EQ(put_int(&t, SNMP_MAC_C_QFDB, qc, 7, 2), 0);
	CHECK_EQ(put_int(&t, SNMP_MAC_C_FDB, fm, 6, 3), 1);
	CHECK_EQ(put_int(&t, SNMP_MAC_C_FDB, fself, 6, 0), 1);
	(void)fc;
	/* ARP: C on ifIndex 11 (worse than FDB's A there), B on 20 (routed) */
	oid a11[7] = { 11, 1, 4, 10, 0, 0, 2 }, a20[7] = { 20, 1, 4, 10, 0, 1, 2 };
	CHECK_EQ(put(&t, SNMP_MAC_C_ARP, a11, 7, ASN_OCTET_STR, MAC_C, 6), 0);
	CHECK_EQ(put(&t, SNMP_MAC_C_ARP, a20, 7, ASN_OCTET_STR, MAC_B, 6), 0);
	oid m21[5] = { 21, 10, 0, 2, 2 }; /* ipNetToMedia: ifIndex + IPv4 */
	CHECK_EQ(put(&t, SNMP_MAC_C_ARP_OLD, m21, 5, ASN_OCTET_STR, MAC_A, 6), 0);
	/* ARP rows that are not: a 4-byte "MAC", a length that lies, multicast */
	CHECK_EQ(put(&t, SNMP_MAC_C_ARP, a20, 7, ASN_OCTET_STR, MAC_B, 4), 1);
	oid bad[7] = { 22, 1, 9, 10, 0, 0, 2 };
	CHECK_EQ(put(&t, SNMP_MAC_C_ARP, bad, 7, ASN_OCTET_STR, MAC_B, 6), 1);
	CHECK_EQ(put(&t, SNMP_MAC_C_ARP, a20, 7, ASN_OCTET_STR, MCAST, 6), 1);
	/* LLDP on local port 3 (bridge port 3 -> ifIndex 13): port id is a MAC;
	 * on local port 30 (no bridge port: taken as ifIndex 30): only the
	 * chassis id is a MAC; on local port 31 neither is. */
	oid l3[3] = { 0, 3, 1 }, l30[3] = { 0, 30, 1 }, l31[3] = { 0, 31, 1 };
	CHECK_EQ(put_int(&t, SNMP_MAC_C_LLDP_CSUB, l3, 3, 7), 0);
	CHECK_EQ(put(&t, SNMP_MAC_C_LLDP_CID, l3, 3, ASN_OCTET_STR, "host-3", 6), 0);
	CHECK_EQ(put_int(&t, SNMP_MAC_C_LLDP_PSUB, l3, 3, 3), 0);
	CHECK_EQ(put(&t, SNMP_MAC_C_LLDP_PID, l3, 3, ASN_OCTET_STR, MAC_C, 6), 0);
	CHECK_EQ(put_int(&t, SNMP_MAC_C_LLDP_CSUB, l30, 3, 4), 0);
	CHECK_EQ(put(&t, SNMP_MAC_C_LLDP_CID, l30, 3, ASN_OCTET_STR, MAC_A, 6), 0);
	CHECK_EQ(put_int(&t, SNMP_MAC_C_LLDP_PSUB, l30, 3, 5), 0);
	CHECK_EQ(put(&t, SNMP_MAC_C_LLDP_PID, l30, 3, ASN_OCTET_STR, "eth0", 4), 0);
	CHECK_EQ(put_int(&t, SNMP_MAC_C_LLDP_CSUB, l31, 3, 7), 0);
	CHECK_EQ(put(&t, SNMP_MAC_C_LLDP_CID, l31, 3, ASN_OCTET_STR, "sw9", 3), 0);
	/* wrong types are refused */
	CHECK_EQ(put(&t, SNMP_MAC_C_LLDP_PSUB, l31, 3, ASN_OCTET_STR, "x", 1), 1);
	CHECK_EQ(put(&t, SNMP_MAC_C_FDB, fa, 6, ASN_OCTET_STR, "x", 1), 1);

	struct snmp_mac_port *p = NULL;
	size_t n = 0;
	CHECK_EQ(snmp_mac_resolve(&t, &p, &n), 0);
	const struct snmp_mac_port *x = port_of(p, n, 11);
	CHECK(x && x->mac == U64(MAC_A) && x->src == SNMP_MAC_FDB); /* FDB over ARP */
	x = port_of(p, n, 12);
	CHECK(x && x->mac == 0 && x->n_macs == 2); /* two MACs: not a host */
	x = port_of(p, n, 13);
	CHECK(x && x->mac == U64(MAC_C) && x->src == SNMP_MAC_LLDP);
	x = port_of(p, n, 20);
	CHECK(x && x->mac == U64(MAC_B) && x->src == SNMP_MAC_ARP);
	x = port_of(p, n, 21);
	CHECK(x && x->mac == U64(MAC_A) && x->src == SNMP_MAC_ARP);
	x = port_of(p, n, 30);
	CHECK(x && x->mac == U64(MAC_A) && x->src == SNMP_MAC_LLDP); /* chassis id */
	CHECK(!port_of(p, n, 31)); /* no MAC at all */
	for (size_t i = 1; i < n; i++)
		CHECK(p[i - 1].ifindex < p[i].ifindex);
	free(p);
	snmp_mac_tab_free(&t);

	/* not a column of ours */
	oid other[] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 8, 1 };
	netsnmp_variable_list *v = NULL;
	long one = 1;
	snmp_varlist_add_variable(&v, other, 11, ASN_INTEGER, &one, sizeof(one));
	CHECK_EQ(snmp_mac_take(&t, v), 1);
	snmp_free_varbind(v);
	CHECK_EQ(snmp_mac_resolve(&t, &p, &n), 0);
	CHECK_EQ(n, 0);
	char s[SNMP_MAC_STR];
	snmp_mac_format(U64(MAC_B), s);
	CHECK_STR(s, "02:00:00:00:00:0b");
}

static void feed(struct snmp_ifc_switch *sw, struct fbt_sink *s, int oper1, uint32_t uptime)
{
	struct snmp_ifc_cfg cfg;
	snmp_ifc_cfg_default(&cfg);
	struct snmp_ifc_row r[2] = {
		{ .ifindex = 3, .admin = 1, .oper = oper1,
		  .have = SNMP_IFC_HAVE_ADMIN | SNMP_IFC_HAVE_OPER | SNMP_IFC_HAVE_NAME,
		  .name = "swp1" },
		{ .ifindex = 4, .admin = 1, .oper = 1,
		  .have = SNMP_IFC_HAVE_ADMIN | SNMP_IFC_HAVE_OPER | SNMP_IFC_HAVE_NAME,
		  .name = "swp2" },
	};
	struct snmp_ifc_round rd = { .uptime_cs = uptime, .have_uptime = 1, .rows = r, .n_rows = 2,
				     .t_ms = uptime * 10 };
	if (snmp_ifc_update(sw, &cfg, &rd, fbt_collect, s) != 0)
		abort();
}

static uint64_t map_peer;
static int map_up(void *arg, uint32_t ifx)
{
	(void)arg;
	(void)ifx;
	return 1;
}
static uint64_t map_peer_of(void *arg, uint32_t ifx)
{
	(void)arg;
	return ifx == 3 ? map_peer : 0;
}

static void ifcore_peers_are_reported_once_and_carried(void)
{
	struct snmp_ifc_switch sw = { .addr = "10.0.0.2", .name = "leaf1", .fabric = "ETH",
				      .link_class = FB_LINK_HOST };
	struct fbt_sink s = { .n = 0 };
	feed(&sw, &s, 1, 100);
	CHECK_EQ(s.n, 0);
	struct snmp_mac_port mp[3] = {
		{ .ifindex = 3, .mac = U64(MAC_A), .src = SNMP_MAC_ARP, .n_macs = 1 },
		{ .ifindex = 4, .mac = 0, .src = SNMP_MAC_FDB, .n_macs = 5 },
		{ .ifindex = 99, .mac = U64(MAC_B), .src = SNMP_MAC_ARP, .n_macs = 1 }, /* no such port */
	};
	CHECK_EQ(snmp_ifc_set_peers(&sw, mp, 3, fbt_collect, &s), 1);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.ev[0].kind, FB_KIND_TOPOLOGY);
	CHECK_EQ(s.ev[0].subj.ifindex, 3);
	CHECK(s.ev[0].subj.peer_guid == U64(MAC_A));
	CHECK_STR(s.ev[0].subj.peer_name, "02:00:00:00:00:0a");
	CHECK(strstr(s.ev[0].text, "(arp)") != NULL);
	CHECK_EQ(s.ev[0].port_state, 1);
	/* the same again: nothing; a walk without the port (link down, the
	 * entry aged out): it keeps its peer */
	CHECK_EQ(snmp_ifc_set_peers(&sw, mp, 3, fbt_collect, &s), 0);
	CHECK_EQ(snmp_ifc_set_peers(&sw, mp + 1, 2, fbt_collect, &s), 0);
	CHECK(snmp_ifc_peer(&sw, 3) == U64(MAC_A));
	CHECK(snmp_ifc_peer(&sw, 4) == 0);
	/* the link goes down: the event names the peer */
	s.n = 0;
	feed(&sw, &s, 2, 200);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.ev[0].kind, FB_KIND_LINK_DOWN);
	CHECK(s.ev[0].subj.peer_guid == U64(MAC_A));
	/* another host on the port: a new topology event */
	s.n = 0;
	struct snmp_mac_port moved = { .ifindex = 3, .mac = U64(MAC_C), .src = SNMP_MAC_FDB,
				       .n_macs = 1 };
	CHECK_EQ(snmp_ifc_set_peers(&sw, &moved, 1, fbt_collect, &s), 1);
	CHECK(s.ev[0].subj.peer_guid == U64(MAC_C));
	/* that host's cable moved to swp2: swp1 no longer names it */
	struct snmp_mac_port to2 = { .ifindex = 4, .mac = U64(MAC_C), .src = SNMP_MAC_FDB,
				     .n_macs = 1 };
	CHECK_EQ(snmp_ifc_set_peers(&sw, &to2, 1, fbt_collect, &s), 1);
	CHECK(snmp_ifc_peer(&sw, 4) == U64(MAC_C) && snmp_ifc_peer(&sw, 3) == 0);
	/* record only (a resync follows), then the resync sends what the map
	 * lacks and nothing when it has it */
	struct snmp_ifc_switch sw2 = { .addr = "10.0.0.2", .name = "leaf1", .fabric = "ETH",
				       .link_class = FB_LINK_HOST };
	s.n = 0;
	feed(&sw2, &s, 1, 100);
	CHECK_EQ(snmp_ifc_set_peers(&sw2, mp, 1, NULL, NULL), 0);
	CHECK(snmp_ifc_peer(&sw2, 3) == U64(MAC_A));
	struct snmp_ifc_known k = { .reachable = 1, .port_up = map_up, .port_peer = map_peer_of };
	map_peer = U64(MAC_A);
	CHECK_EQ(snmp_ifc_resync(&sw2, &k, fbt_collect, &s), 0);
	map_peer = 0;
	CHECK_EQ(snmp_ifc_resync(&sw2, &k, fbt_collect, &s), 1);
	CHECK_EQ(s.ev[0].kind, FB_KIND_TOPOLOGY);
	CHECK(s.ev[0].subj.peer_guid == U64(MAC_A));
	CHECK(strstr(s.ev[0].text, "found at resync") != NULL);
	s.n = 0;
	CHECK_EQ(snmp_ifc_send_peers(&sw2, fbt_collect, &s), 1);
	snmp_ifc_switch_free(&sw);
	snmp_ifc_switch_free(&sw2);
}

static uint64_t peer_cb(void *arg, const char *addr, uint32_t ifx)
{
	(void)arg;
	return strcmp(addr, "10.0.0.2") == 0 && ifx == 3 ? U64(MAC_B) : 0;
}

static void map_trap_names_the_peer(void)
{
	struct snmp_conf c;
	char err[256];
	memset(&c, 0, sizeof(c));
	CHECK_EQ(snmp_conf_line(&c, "Switch", "10.0.0.2 leaf1 host", "t", err, sizeof(err)), 0);
	struct snmp_map_ctx m = { .conf = &c, .fabric = "ETH", .peer = peer_cb };
	oid trap_oid[] = { 1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0 };
	oid link_down[] = { 1, 3, 6, 1, 6, 3, 1, 1, 5, 3 };
	oid if_index[] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 0 };
	for (uint32_t ifx = 3; ifx <= 4; ifx++) {
		netsnmp_pdu *pdu = snmp_pdu_create(SNMP_MSG_TRAP2);
		pdu->version = SNMP_VERSION_2c;
		snmp_pdu_add_variable(pdu, trap_oid, 11, ASN_OBJECT_ID, link_down, sizeof(link_down));
		if_index[10] = ifx;
		long v = ifx;
		snmp_pdu_add_variable(pdu, if_index, 11, ASN_INTEGER, &v, sizeof(v));
		struct fb_event ev;
		const char *why = NULL;
		CHECK_EQ(snmp_map_trap(&m, "10.0.0.2", pdu, &ev, &why), 0);
		CHECK_EQ(ev.kind, FB_KIND_LINK_DOWN);
		if (ifx == 3) {
			CHECK(ev.subj.peer_guid == U64(MAC_B));
			CHECK_STR(ev.subj.peer_name, "02:00:00:00:00:0b");
		} else {
			CHECK(ev.subj.peer_guid == 0 && !ev.subj.peer_name[0]);
		}
		snmp_free_pdu(pdu);
	}
	snmp_conf_free(&c);
}

int main(void)
{
	RUN(mac_sources_rank_and_map_bridge_ports);
	RUN(ifcore_peers_are_reported_once_and_carried);
	RUN(map_trap_names_the_peer);
	return TEST_DONE();
}

/* snmp_mac.h - which MAC sits behind which switch port, from the switch's
 * own tables: the pure part (no I/O, no clock).
 *
 * The poller (snmp_poll.c) walks the columns of snmp_mac_cols[] and hands
 * every varbind to snmp_mac_take(); snmp_mac_resolve() then says, per
 * ifIndex, the one MAC behind it. Three sources, best first:
 *
 *   LLDP  lldpRemTable (LLDP-MIB, 1.0.8802.1.1.2.1.4.1.1): the neighbour's
 *         own word. Its port id when the subtype is macAddress(3), else its
 *         chassis id when that subtype is macAddress(4). The local port
 *         number is mapped through dot1dBasePortIfIndex when the switch has
 *         that table, else taken as the ifIndex (lldpd, most switches).
 *   FDB   dot1dTpFdbPort (BRIDGE-MIB 1.3.6.1.2.1.17.4.3.1.2, index MAC) and
 *         dot1qTpFdbPort (Q-BRIDGE-MIB 1.3.6.1.2.1.17.7.1.2.2.1.2, index
 *         FDB id + MAC): MAC -> bridge port, then dot1dBasePortIfIndex
 *         (1.3.6.1.2.1.17.1.4.1.2) bridge port -> ifIndex. Port 0 (the
 *         switch's own addresses) and ports without an ifIndex are skipped.
 *   ARP   ipNetToPhysicalPhysAddress (IP-MIB 1.3.6.1.2.1.4.35.1.4, index
 *         ifIndex, address type, address) and the older
 *         ipNetToMediaPhysAddress (1.3.6.1.2.1.4.22.1.2, index ifIndex,
 *         IPv4 address): a neighbour learned on a routed port.
 *
 * A port takes its MAC from the best source that has any for it. If that
 * source lists several distinct MACs on the port (another switch or a
 * hypervisor behind it) the port gets none: only a port with exactly one
 * neighbour MAC is tied to a host. Multicast, broadcast and all-zero MACs
 * are skipped. At most SNMP_MAC_ROWS_MAX rows per table are kept (the rest
 * are counted in dropped).
 */
#ifndef SNMP_MAC_H
#define SNMP_MAC_H

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include <stddef.h>
#include <stdint.h>

#define SNMP_MAC_ROWS_MAX 65536
#define SNMP_MAC_OID_MAX 13 /* sub-ids of the longest column OID */
#define SNMP_MAC_STR 18     /* "aa:bb:cc:dd:ee:ff" */

enum snmp_mac_src { SNMP_MAC_NONE, SNMP_MAC_ARP, SNMP_MAC_FDB, SNMP_MAC_LLDP };

enum snmp_mac_col {
	SNMP_MAC_C_BASEPORT,  /* dot1dBasePortIfIndex */
	SNMP_MAC_C_FDB,       /* dot1dTpFdbPort */
	SNMP_MAC_C_QFDB,      /* dot1qTpFdbPort */
	SNMP_MAC_C_LLDP_CSUB, /* lldpRemChassisIdSubtype */
	SNMP_MAC_C_LLDP_CID,  /* lldpRemChassisId */
	SNMP_MAC_C_LLDP_PSUB, /* lldpRemPortIdSubtype */
	SNMP_MAC_C_LLDP_PID,  /* lldpRemPortId */
	SNMP_MAC_C_ARP,       /* ipNetToPhysicalPhysAddress */
	SNMP_MAC_C_ARP_OLD,   /* ipNetToMediaPhysAddress */
	SNMP_MAC_C__N
};

struct snmp_mac_col_def {
	oid oid[SNMP_MAC_OID_MAX];
	size_t len;
};
extern const struct snmp_mac_col_def snmp_mac_cols[SNMP_MAC_C__N];

struct snmp_mac_lldp {
	uint32_t local_port, rem_index;
	int csub, psub;
	uint64_t cmac, pmac; /* 0 unless the id is 6 bytes */
};

/* The rows of one walk. Zero it before the first snmp_mac_take(). */
struct snmp_mac_tab {
	struct { uint32_t port, ifindex; } *base;
	struct { uint64_t mac; uint32_t port; } *fdb;
	struct { uint32_t ifindex; uint64_t mac; } *arp;
	struct snmp_mac_lldp *lldp;
	size_t n_base, n_fdb, n_arp, n_lldp;
	size_t cap_base, cap_fdb, cap_arp, cap_lldp;
	uint64_t taken, ignored, dropped;
};

/* Per ifIndex, what snmp_mac_resolve() found. mac 0: several MACs (n_macs
 * of them) from its best source, so no host. */
struct snmp_mac_port {
	uint32_t ifindex;
	uint64_t mac;
	uint8_t src;     /* enum snmp_mac_src */
	uint32_t n_macs;
};

/* The column v belongs to, or -1. */
int snmp_mac_col_of(const oid *name, size_t len);
/* One varbind of a walk: 0 taken, 1 not a row we use (wrong column, index
 * or type: counted in ignored), -ENOMEM. */
int snmp_mac_take(struct snmp_mac_tab *t, const netsnmp_variable_list *v);
/* Every port with a MAC source, sorted by ifIndex (*out is the caller's,
 * free()). 0 or -ENOMEM. */
int snmp_mac_resolve(const struct snmp_mac_tab *t, struct snmp_mac_port **out, size_t *n);
void snmp_mac_tab_free(struct snmp_mac_tab *t);

/* "aa:bb:cc:dd:ee:ff" of the low 48 bits. */
void snmp_mac_format(uint64_t mac, char out[SNMP_MAC_STR]);
const char *snmp_mac_src_name(unsigned src); /* "lldp", "fdb", "arp", "none" */

#endif

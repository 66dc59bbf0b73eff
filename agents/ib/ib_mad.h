/* ib_mad.h - SMP queries over one local CA port (libibmad over umad).
 *
 * Everything here is synchronous and belongs to the MAD thread (ib_worker.c):
 * umad fds can be >= 1024 (ibsim's shim), so they never go near the libevent
 * loop. Each query waits at most timeout_ms * retries.
 *
 * Routes are directed routes from the local port, so discovery and polling
 * work with no subnet manager and no LIDs.
 */
#ifndef IB_MAD_H
#define IB_MAD_H

#include <stdint.h>

#define IB_DR_MAX_HOPS 63
/* NodeDescription is 64 bytes on the wire, not always NUL-terminated; we keep
 * 63 characters and a NUL, which is what an fb_event name field holds. */
#define IB_DESC_SZ 64

/* IB node types (NodeInfo.NodeType). */
enum { IB_NT_CA = 1, IB_NT_SWITCH = 2, IB_NT_ROUTER = 3 };
/* PortInfo.PortPhysicalState 5 = LinkUp; PortState 1 Down .. 4 Active. */
enum { IB_PHYS_POLLING = 2, IB_PHYS_DISABLED = 3, IB_PHYS_LINKUP = 5 };
enum { IB_PS_DOWN = 1, IB_PS_INIT = 2, IB_PS_ARMED = 3, IB_PS_ACTIVE = 4 };

/* A directed route: the output port at each hop, hops[0..n-1]. n == 0 is the
 * local node itself. */
struct ib_dr {
	uint8_t n;
	uint8_t hops[IB_DR_MAX_HOPS];
};

struct ib_node_info {
	uint8_t type;        /* IB_NT_* */
	uint8_t nports;
	uint8_t local_port;  /* the port the query entered by: the peer's port */
	uint64_t guid;
};

struct ib_port_info {
	uint8_t state;       /* IB_PS_* */
	uint8_t phys;        /* IB_PHYS_* */
	uint8_t width;       /* LinkWidthActive (bit mask) */
	uint8_t speed;       /* LinkSpeedActive */
};

/* PortCounters (PMA attribute 0x12): the error counters and PortXmitWait.
 * Widths on the wire: symbol_error, rcv_errors, xmit_discards 16 bits;
 * link_error_recovery, link_downed 8 bits; xmit_wait 32 bits. */
struct ib_pma_counters {
	uint64_t symbol_error, link_error_recovery, link_downed, rcv_errors, xmit_discards;
	uint64_t xmit_wait;
};

/* PortCountersExtended (0x1D): 64-bit data counters. */
struct ib_pma_ext {
	uint64_t xmit_data, rcv_data, xmit_pkts, rcv_pkts;
};

/* PerfMgt ClassPortInfo.CapabilityMask bits we use. */
#define IB_PMA_CAP_EXT_WIDTH 0x0200        /* PortCountersExtended, all fields */
#define IB_PMA_CAP_EXT_WIDTH_NOIETF 0x0400 /* PortCountersExtended, data counters only */

struct ib_mad;

/* Open ca (NULL: the first CA) port (0: the first active); registers SMI,
 * directed-route SMI, PerfMgt (for the counters round) and SA (trap
 * subscriptions and their Reports) so the umad shim
 * never sees a send on an unregistered class. */
int ib_mad_open(const char *ca, int port, int timeout_ms, int retries, struct ib_mad **out);
void ib_mad_close(struct ib_mad *m);

/* Append one hop; -E2BIG past IB_DR_MAX_HOPS. */
int ib_dr_extend(const struct ib_dr *in, uint8_t port, struct ib_dr *out);
/* "0,1,33" form for logs. */
void ib_dr_format(const struct ib_dr *dr, char *buf, unsigned bufsz);

/* 0, or -ETIMEDOUT when the node did not answer (after the retries). */
int ib_mad_node_info(struct ib_mad *m, const struct ib_dr *dr, struct ib_node_info *ni);
/* desc gets a NUL-terminated printable-ASCII copy (other bytes become '?'),
 * cut at IB_DESC_SZ - 1 characters. */
int ib_mad_node_desc(struct ib_mad *m, const struct ib_dr *dr, char desc[IB_DESC_SZ]);
int ib_mad_port_info(struct ib_mad *m, const struct ib_dr *dr, unsigned port,
		     struct ib_port_info *pi);

/* PortInfo of port 0 of a switch: its base LID (0 until an SM assigned one). */
int ib_mad_switch_lid(struct ib_mad *m, const struct ib_dr *dr, uint16_t *lid);

/* PerfMgt (GSI, LID-routed: needs an SM to have assigned LIDs). 0, or
 * -ETIMEDOUT when nothing came back after the retries. */
int ib_mad_pma_capmask(struct ib_mad *m, uint16_t lid, uint16_t *capmask);
int ib_mad_pma_counters(struct ib_mad *m, uint16_t lid, unsigned port,
			struct ib_pma_counters *pc);
int ib_mad_pma_counters_ext(struct ib_mad *m, uint16_t lid, unsigned port,
			    struct ib_pma_ext *pe);

/* ---- SA traps (ib_worker.c) ---- */

/* The local port (the one the MAD port is bound to): its LID and the SM's
 * LID, both 0 until an SM configured the port. */
int ib_mad_local_sm(struct ib_mad *m, uint16_t *lid, uint16_t *sm_lid);

/* SA InformInfo Set at sm_lid: (un)subscribe to generic trap `trap` from
 * every LID, Reports to our QP1. 0, -ETIMEDOUT (no answer), or -EPROTO with
 * *status the SA's MAD status (the SA refused). */
int ib_mad_sa_inform(struct ib_mad *m, uint16_t sm_lid, uint16_t trap, int subscribe,
		     unsigned *status);

/* One unsolicited SA Report(Notice), already answered with a ReportResponse. */
struct ib_report {
	uint16_t trap;        /* Notice.TrapNumber (generic notices) */
	uint16_t issuer_lid;  /* Notice.IssuerLID */
	uint8_t generic;
};

/* Non-blocking: 1 and *r when a Report was waiting (and was answered), 0 when
 * nothing was waiting, or when what was there was not a Report (dropped). */
int ib_mad_recv_report(struct ib_mad *m, struct ib_report *r);

#endif

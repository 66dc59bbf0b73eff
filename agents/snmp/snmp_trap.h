/* snmp_trap.h - the trap receiver: a net-snmp server session on the
 * agent's libevent loop.
 *
 * net-snmp does all of the decoding and USM work (snmp_sess_read2 on a
 * session added with snmp_sess_add over the "snmptrap" server transport);
 * this module checks v1/v2c communities against the config, requires
 * authPriv for v3, acknowledges INFORMs, maps each trap (snmp_map.c) and
 * hands the event to deliver(). The socket is non-blocking with a large
 * receive buffer; each readable callback drains up to SNMP_TRAP_BATCH
 * datagrams so a storm is taken in batches.
 *
 * What is refused is counted, never fatal, and logged at most once a second
 * per reason with the number suppressed. A datagram read that net-snmp did
 * not hand to us was refused by it: its usmStats (snmp_get_statistic) say
 * how many of those were v3 refusals, the rest count as malformed.
 */
#ifndef SNMP_TRAP_H
#define SNMP_TRAP_H

#include "snmp_map.h"

#include <event2/event.h>
#include <stdint.h>

#define SNMP_TRAP_BATCH 1024

struct snmp_trap_stats {
	uint64_t packets;        /* PDUs net-snmp decoded and authenticated */
	uint64_t events;         /* events handed to deliver() and accepted */
	uint64_t dropped;        /* deliver() refused (session buffer full) */
	uint64_t ignored;        /* trap OIDs neither linkDown/Up nor in Trap= */
	uint64_t malformed;      /* undecodable packets + traps snmp_map refused */
	uint64_t bad_community;  /* v1/v2c with a community not in Community= */
	uint64_t v3_rejected;    /* unknown user or engine, wrong key, not in
				    the time window, below authPriv */
	uint64_t informs_acked;
	uint64_t not_traps;      /* GET/SET/... sent to the trap port */
	uint64_t pauses;         /* times reading paused for the broker */
};

/* Return 0 when the event is taken, else a negative value (it is counted
 * as dropped). */
typedef int (*snmp_trap_deliver_fn)(void *arg, const struct fb_event *ev);

struct snmp_trap_cfg {
	const char *listen;      /* net-snmp transport spec, "udp:0.0.0.0:162" */
	int rcvbuf;              /* bytes, SO_RCVBUF(FORCE) */
	struct snmp_map_ctx map;
	snmp_trap_deliver_fn deliver;
	/* Nonzero while deliver() can take more. When it says no, reading
	 * pauses (the kernel's receive buffer holds what comes meanwhile) until
	 * snmp_trap_resume(). */
	int (*room)(void *arg);
	void *deliver_arg; /* for deliver and room */
};

struct snmp_trap;

/* Open and start listening. 0, or a negative errno with err set. The cfg
 * (and what its map points to) must outlive the receiver. */
int snmp_trap_open(struct event_base *base, const struct snmp_trap_cfg *cfg,
		   struct snmp_trap **out, char *err, size_t errsz);
void snmp_trap_get_stats(const struct snmp_trap *t, struct snmp_trap_stats *st);
/* Start reading again after room() said no. */
void snmp_trap_resume(struct snmp_trap *t);
/* Datagrams the kernel dropped on the trap socket because its receive
 * buffer was full (/proc/net/udp "drops" of our socket), or 0. */
uint64_t snmp_trap_kernel_drops(const struct snmp_trap *t);
/* Stop reading (on shutdown), keeping the stats. NULL ok. */
void snmp_trap_stop(struct snmp_trap *t);
void snmp_trap_free(struct snmp_trap *t);

#endif

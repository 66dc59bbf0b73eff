/* snmp_flood.c - send linkDown traps built and encoded by net-snmp's
 * library, as fast as asked: the storm of tests/integration/test_snmp.py
 * and the flood of tests/bench/bench_snmp.sh.
 *
 * Usage: snmp_flood HOST:PORT COUNT RATE IFINDEX_BASE [COMMUNITY]
 *   RATE traps/s (0: as fast as it can). Trap i carries ifIndex
 *   IFINDEX_BASE + i, so a receiver can tell every trap apart.
 * Prints "sent: N traps in S s (R/s)" on stdout. */
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static netsnmp_pdu *link_down(long ifindex)
{
	static const oid uptime0[] = { 1, 3, 6, 1, 2, 1, 1, 3, 0 };
	static const oid trap_oid0[] = { 1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0 };
	static const oid trap[] = { 1, 3, 6, 1, 6, 3, 1, 1, 5, 3 };
	oid idx[] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 1, (oid)ifindex };
	oid adm[] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 7, (oid)ifindex };
	oid opr[] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 8, (oid)ifindex };
	long up = 1, down = 2;
	u_long ticks = 4242;
	netsnmp_pdu *pdu = snmp_pdu_create(SNMP_MSG_TRAP2);
	if (!pdu)
		return NULL;
	snmp_pdu_add_variable(pdu, uptime0, 9, ASN_TIMETICKS, &ticks, sizeof(ticks));
	snmp_pdu_add_variable(pdu, trap_oid0, 11, ASN_OBJECT_ID, trap, sizeof(trap));
	snmp_pdu_add_variable(pdu, idx, 11, ASN_INTEGER, &ifindex, sizeof(ifindex));
	snmp_pdu_add_variable(pdu, adm, 11, ASN_INTEGER, &up, sizeof(up));
	snmp_pdu_add_variable(pdu, opr, 11, ASN_INTEGER, &down, sizeof(down));
	return pdu;
}

int main(int argc, char **argv)
{
	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: %s HOST:PORT COUNT RATE IFINDEX_BASE [COMMUNITY]\n", argv[0]);
		return 2;
	}
	char peer[300];
	snprintf(peer, sizeof(peer), "udp:%s", argv[1]);
	long count = atol(argv[2]), base = atol(argv[4]);
	double rate = atof(argv[3]);
	const char *community = argc == 6 ? argv[5] : "public";
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	setenv("MIBS", "", 1);
	init_snmp("snmp_flood");
	netsnmp_session s;
	snmp_sess_init(&s);
	s.peername = peer;
	s.version = SNMP_VERSION_2c;
	s.community = (u_char *)community;
	s.community_len = strlen(community);
	void *sessp = snmp_sess_open(&s);
	if (!sessp) {
		fprintf(stderr, "snmp_flood: cannot open %s: %s\n", peer, snmp_api_errstring(snmp_errno));
		return 1;
	}
	double t0 = now_s();
	long sent = 0;
	for (long i = 0; i < count; i++) {
		if (rate > 0) { /* pace: never ahead of i / rate; sleep, do not
				 * spin, so the receivers get the CPU */
			double ahead = t0 + (double)i / rate - now_s();
			if (ahead > 0.0005) {
				struct timespec ts = { 0, (long)(ahead * 1e9) };
				nanosleep(&ts, NULL);
			}
		}
		netsnmp_pdu *pdu = link_down(base + i);
		if (pdu && snmp_sess_send(sessp, pdu))
			sent++;
		else if (pdu)
			snmp_free_pdu(pdu);
	}
	double dt = now_s() - t0;
	printf("sent: %ld traps in %.3f s (%.0f/s)\n", sent, dt, dt > 0 ? sent / dt : 0.0);
	snmp_sess_close(sessp);
	snmp_shutdown("snmp_flood");
	return sent == count ? 0 : 1;
}

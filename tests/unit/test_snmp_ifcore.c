/* test_snmp_ifcore.c - fabricbus-agent-snmp's pure parts with an explicit
 * clock: the IF-MIB round logic (state changes, Counter32 wrap, restart,
 * hysteresis, unreachable, the resync against the broker's states), the config file's permission check and the
 * trap -> event mapping of PDUs built with net-snmp. */
#include "fb_err.h"
#include "fb_test.h"
#include "fb_test_sink.h"
#include "snmp_conf.h"
#include "snmp_ifcore.h"
#include "snmp_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static struct snmp_ifc_row row(uint32_t ifindex, int admin, int oper, uint32_t in_err)
{
	struct snmp_ifc_row r = { .ifindex = ifindex, .admin = admin, .oper = oper,
				  .have = SNMP_IFC_HAVE_ADMIN | SNMP_IFC_HAVE_OPER |
					  (SNMP_IFC_HAVE_CTR0 << SNMP_IFC_IN_ERR) };
	r.ctr[SNMP_IFC_IN_ERR] = in_err;
	return r;
}

static void feed(struct snmp_ifc_switch *sw, const struct snmp_ifc_cfg *cfg, struct fbt_sink *s,
		 const struct snmp_ifc_row *rows, size_t n, uint32_t uptime, uint64_t t_ms)
{
	struct snmp_ifc_round r = { .uptime_cs = uptime, .have_uptime = 1, .rows = rows,
				    .n_rows = n, .t_ms = t_ms };
	if (snmp_ifc_update(sw, cfg, &r, fbt_collect, s) != 0)
		abort();
}

static void ifcore_oper_changes_become_link_events(void)
{
	struct snmp_ifc_cfg cfg;
	struct snmp_ifc_switch sw = { .addr = "10.0.0.2", .name = "leaf1", .link_class = FB_LINK_HOST };
	struct fbt_sink s = { .n = 0 };
	snmp_ifc_cfg_default(&cfg);
	struct snmp_ifc_row r[2] = { row(1, 1, 1, 0), row(2, 1, 1, 0) };
	CHECK(snmp_ifc_need_names(&sw));
	feed(&sw, &cfg, &s, r, 2, 100, 1000);
	CHECK_EQ(s.n, 0); /* the first round is the baseline */
	CHECK(!snmp_ifc_need_names(&sw));
	r[0].oper = 2;
	feed(&sw, &cfg, &s, r, 2, 200, 2000);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.ev[0].kind, FB_KIND_LINK_DOWN);
	CHECK_EQ(s.ev[0].severity, FB_SEV_WARNING);
	CHECK_EQ(s.ev[0].subj.ifindex, 1);
	CHECK_EQ(s.ev[0].tech, FB_TECH_ETH);
	CHECK_EQ(s.ev[0].link_class, FB_LINK_HOST);
	CHECK_STR(s.ev[0].subj.switch_name, "leaf1");
	CHECK_STR(s.ev[0].subj.addr, "10.0.0.2");
	r[0].oper = 1;
	feed(&sw, &cfg, &s, r, 2, 300, 3000);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(s.ev[1].kind, FB_KIND_LINK_UP);
	/* An operator's shutdown is not a fault: port_state, OK. */
	r[1].admin = 2;
	r[1].oper = 2;
	feed(&sw, &cfg, &s, r, 2, 400, 4000);
	CHECK_EQ(s.n, 3);
	CHECK_EQ(s.ev[2].kind, FB_KIND_PORT_STATE);
	CHECK_EQ(s.ev[2].severity, FB_SEV_OK);
	CHECK_EQ(s.ev[2].subj.ifindex, 2);
	snmp_ifc_switch_free(&sw);
}

static void ifcore_counter32_wrap_is_a_small_delta(void)
{
	CHECK_EQ(snmp_ifc_delta32(0xFFFFFFF0u, 0x10u), 0x20);
	CHECK_EQ(snmp_ifc_delta32(5, 5), 0);
	CHECK_EQ(fb_rate_per_s(50, 1000), 50);
	CHECK_EQ(fb_rate_per_s(1, 3), 333);
	struct snmp_ifc_cfg cfg;
	struct snmp_ifc_switch sw = { .addr = "a", .name = "a" };
	struct fbt_sink s = { .n = 0 };
	snmp_ifc_cfg_default(&cfg); /* if_in_errors 10/s */
	struct snmp_ifc_row r = row(1, 1, 1, 0xFFFFFFF0u);
	feed(&sw, &cfg, &s, &r, 1, 100, 1000);
	r.ctr[SNMP_IFC_IN_ERR] = 0x4; /* +20 over the wrap in 10 s: 2/s, below */
	feed(&sw, &cfg, &s, &r, 1, 1100, 11000);
	CHECK_EQ(s.n, 0);
	snmp_ifc_switch_free(&sw);
}

static void ifcore_threshold_has_hysteresis(void)
{
	struct snmp_ifc_cfg cfg;
	struct snmp_ifc_switch sw = { .addr = "a", .name = "a" };
	struct fbt_sink s = { .n = 0 };
	snmp_ifc_cfg_default(&cfg);
	CHECK_EQ(snmp_ifc_parse_threshold(&cfg, "if_in_errors=5"), 0);
	CHECK(snmp_ifc_parse_threshold(&cfg, "symbol_error=5") != 0);
	CHECK(snmp_ifc_parse_threshold(&cfg, "if_in_errors=0") != 0);
	struct snmp_ifc_row r = row(3, 1, 1, 0);
	uint64_t t = 0;
	uint32_t up = 0, errs = 0;
	feed(&sw, &cfg, &s, &r, 1, up += 100, t += 1000);
	for (int i = 0; i < 3; i++) { /* 10/s for 3 rounds: one event */
		r.ctr[SNMP_IFC_IN_ERR] = errs += 10;
		feed(&sw, &cfg, &s, &r, 1, up += 100, t += 1000);
	}
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.ev[0].kind, FB_KIND_COUNTER_THRESHOLD);
	CHECK_EQ(s.ev[0].counters[0].id, FB_CTR_IF_IN_ERRORS);
	CHECK_EQ(s.ev[0].counters[0].value, 10);
	CHECK_EQ(fb_event_counter(&s.ev[0], FB_CTR_RATE_PER_S, 0), 10);
	CHECK_EQ(fb_event_counter(&s.ev[0], FB_CTR_THRESHOLD, 0), 5);
	for (int i = 0; i < SNMP_IFC_CLEAR_AFTER - 1; i++) /* quiet, not yet cleared */
		feed(&sw, &cfg, &s, &r, 1, up += 100, t += 1000);
	CHECK_EQ(s.n, 1);
	feed(&sw, &cfg, &s, &r, 1, up += 100, t += 1000);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(s.ev[1].kind, FB_KIND_COUNTER_CLEARED);
	snmp_ifc_switch_free(&sw);
}

static void ifcore_restart_rebaselines_and_relearns_names(void)
{
	struct snmp_ifc_cfg cfg;
	struct snmp_ifc_switch sw = { .addr = "a", .name = "a" };
	struct fbt_sink s = { .n = 0 };
	snmp_ifc_cfg_default(&cfg);
	struct snmp_ifc_row r = row(3, 1, 1, 1000000);
	r.have |= SNMP_IFC_HAVE_NAME;
	snprintf(r.name, sizeof(r.name), "swp3");
	struct snmp_ifc_round rd = { .uptime_cs = 500000, .have_uptime = 1, .have_names = 1,
				     .last_change = 7, .have_last_change = 1, .rows = &r,
				     .n_rows = 1, .t_ms = 1000 };
	CHECK_EQ(snmp_ifc_update(&sw, &cfg, &rd, fbt_collect, &s), 0);
	CHECK_STR(snmp_ifc_name(&sw, 3), "swp3");
	CHECK(!snmp_ifc_need_names(&sw));
	/* sysUpTime back to near 0: the counter drop is a restart, not a wrap
	 * of 4 billion errors. */
	r.have &= ~(unsigned)SNMP_IFC_HAVE_NAME;
	r.ctr[SNMP_IFC_IN_ERR] = 3;
	rd.uptime_cs = 300;
	rd.have_names = 0;
	rd.t_ms = 2000;
	CHECK_EQ(snmp_ifc_update(&sw, &cfg, &rd, fbt_collect, &s), 0);
	CHECK_EQ(s.n, 0);
	CHECK_EQ(sw.restarts, 1);
	CHECK(snmp_ifc_need_names(&sw));
	/* the next round fetches names and they stick */
	r.have |= SNMP_IFC_HAVE_NAME;
	snprintf(r.name, sizeof(r.name), "Ethernet3");
	rd.uptime_cs = 400;
	rd.have_names = 1;
	rd.t_ms = 3000;
	CHECK_EQ(snmp_ifc_update(&sw, &cfg, &rd, fbt_collect, &s), 0);
	CHECK_STR(snmp_ifc_name(&sw, 3), "Ethernet3");
	CHECK(!snmp_ifc_need_names(&sw));
	/* ifTableLastChange moved: names again */
	rd.last_change = 9;
	rd.have_names = 0;
	rd.uptime_cs = 500;
	rd.t_ms = 4000;
	CHECK_EQ(snmp_ifc_update(&sw, &cfg, &rd, fbt_collect, &s), 0);
	CHECK(snmp_ifc_need_names(&sw));
	/* TimeTicks wrapping at 2^32 is not a restart */
	sw.uptime_cs = 0xFFFFFF00u;
	rd.uptime_cs = 0x100;
	CHECK_EQ(snmp_ifc_update(&sw, &cfg, &rd, fbt_collect, &s), 0);
	CHECK_EQ(sw.restarts, 1);
	snmp_ifc_switch_free(&sw);
}

static void ifcore_unreachable_once_and_back(void)
{
	struct snmp_ifc_cfg cfg;
	struct snmp_ifc_switch sw = { .addr = "10.0.0.9", .name = "sw9" };
	struct fbt_sink s = { .n = 0 };
	snmp_ifc_cfg_default(&cfg);
	for (int i = 0; i < 5; i++)
		snmp_ifc_failed(&sw, &cfg, fbt_collect, &s);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.ev[0].kind, FB_KIND_SWITCH_UNREACHABLE);
	CHECK_EQ(s.ev[0].severity, FB_SEV_CRITICAL);
	struct snmp_ifc_row r = row(1, 1, 1, 0);
	feed(&sw, &cfg, &s, &r, 1, 100, 1000);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(s.ev[1].kind, FB_KIND_SWITCH_REACHABLE);
	snmp_ifc_switch_free(&sw);
}

/* What the broker holds, by ifIndex: 1 up, 0 down, -1 nothing. */
static int known_port(void *arg, uint32_t ifindex)
{
	const int *st = arg;
	return ifindex < 5 ? st[ifindex] : -1;
}

static void ifcore_resync_reports_differences_only(void)
{
	struct snmp_ifc_cfg cfg;
	struct snmp_ifc_switch sw = { .addr = "10.0.0.2", .name = "leaf1", .link_class = FB_LINK_HOST };
	struct fbt_sink s = { .n = 0 };
	snmp_ifc_cfg_default(&cfg);
	/* 1 up (broker: down), 2 down (broker: up), 3 admin down (broker: up),
	 * 4 up (broker: up), 5 up (broker: nothing) */
	struct snmp_ifc_row r[5] = { row(1, 1, 1, 0), row(2, 1, 2, 0), row(3, 2, 2, 0),
				     row(4, 1, 1, 0), row(5, 1, 1, 0) };
	feed(&sw, &cfg, &s, r, 5, 100, 1000);
	CHECK_EQ(s.n, 0);
	int st[5] = { -1, 0, 1, 1, 1 };
	struct snmp_ifc_known k = { .reachable = 0, .port_up = known_port, .arg = st };
	CHECK_EQ(snmp_ifc_resync(&sw, &k, fbt_collect, &s), 5);
	CHECK_EQ(s.n, 5);
	CHECK_EQ(s.ev[0].kind, FB_KIND_SWITCH_REACHABLE);
	CHECK_EQ(s.ev[1].kind, FB_KIND_LINK_UP);
	CHECK_EQ(s.ev[1].subj.ifindex, 1);
	CHECK_EQ(s.ev[2].kind, FB_KIND_LINK_DOWN);
	CHECK_EQ(s.ev[2].severity, FB_SEV_WARNING);
	CHECK_EQ(s.ev[3].kind, FB_KIND_PORT_STATE); /* an operator's shutdown */
	CHECK_EQ(s.ev[3].severity, FB_SEV_OK);
	CHECK_EQ(s.ev[4].kind, FB_KIND_TOPOLOGY);   /* the baseline of an unknown port */
	CHECK_EQ(s.ev[4].subj.ifindex, 5);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(s.ev[i].n_counters, 1);
		CHECK_EQ(s.ev[i].counters[0].id, FB_CTR_RESYNC);
	}
	CHECK_EQ(s.ev[4].n_counters, 0);
	/* Nothing differs: only the port the broker still has no state of. */
	int same[5] = { -1, 1, 0, 0, 1 };
	k = (struct snmp_ifc_known){ .reachable = 1, .port_up = known_port, .arg = same };
	s.n = 0;
	CHECK_EQ(snmp_ifc_resync(&sw, &k, fbt_collect, &s), 1);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.ev[0].kind, FB_KIND_TOPOLOGY);
	snmp_ifc_switch_free(&sw);
}

static void conf_refuses_readable_secrets(void)
{
	char path[] = "/tmp/fbt-snmp-conf-XXXXXX", err[256];
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	const char text[] = "Community=public\nUser=u1 SHA authpass1 AES privpass1 0x8000000001020304\n"
			    "Switch=10.0.0.2 leaf1 host\nTrap=1.3.6.1.4.1.99.1 Critical\n"
			    "Poll=10.0.0.2 public\n";
	CHECK_EQ(write(fd, text, sizeof(text) - 1), (long)sizeof(text) - 1);
	close(fd);
	struct snmp_conf c;
	CHECK_EQ(chmod(path, 0640), 0);
	int rc = snmp_conf_load(&c, path, err, sizeof(err));
	if (rc == 0)
		snmp_conf_free(&c);
	CHECK_EQ(rc, FB_ECONFIG);
	CHECK(strstr(err, "chmod 600") != NULL);
	CHECK_EQ(chmod(path, 0600), 0);
	rc = snmp_conf_load(&c, path, err, sizeof(err));
	unlink(path);
	CHECK_EQ(rc, 0);
	CHECK_EQ(c.n_communities, 1);
	CHECK_EQ(c.n_users, 1);
	CHECK_STR(c.users[0].line, "-e 0x8000000001020304 u1 SHA authpass1 AES privpass1");
	CHECK_EQ(c.n_polls, 1);
	CHECK_STR(c.polls[0].peer, "udp:10.0.0.2:161");
	CHECK(snmp_conf_switch(&c, "10.0.0.2") != NULL);
	snmp_conf_free(&c);
	struct snmp_conf d = { 0 };
	CHECK_EQ(snmp_conf_line(&d, "User", "u2 SHA short AES privpass1", "x", err, sizeof(err)),
		 FB_ECONFIG);
	CHECK_EQ(snmp_conf_line(&d, "Trap", "1.3.x Warning", "x", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(snmp_conf_line(&d, "Switch", "10.0.0.3 leaf3 node", "x", err, sizeof(err)),
		 FB_ECONFIG);
	/* A user without ENGINEID: a createUser line net-snmp parses (no
	 * leading blank); a v3 poll names it. */
	CHECK_EQ(snmp_conf_line(&d, "User", "u3 SHA authpass1 AES privpass1", "x", err, sizeof(err)),
		 0);
	CHECK_STR(d.users[0].line, "u3 SHA authpass1 AES privpass1");
	CHECK_STR(d.users[0].authpass, "authpass1");
	CHECK_STR(d.users[0].engine, "");
	CHECK_EQ(snmp_conf_line(&d, "Poll", "10.0.0.4:1161 v3 u3", "x", err, sizeof(err)), 0);
	CHECK_STR(d.polls[0].user, "u3");
	CHECK_STR(d.polls[0].community, "");
	CHECK_STR(d.polls[0].peer, "udp:10.0.0.4:1161");
	CHECK(snmp_conf_user(&d, "u3") == &d.users[0] && !snmp_conf_user(&d, "u4"));
	CHECK_EQ(snmp_conf_line(&d, "Poll", "10.0.0.4 v2 u3", "x", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(snmp_conf_line(&d, "Poll", "10.0.0.4 v3", "x", err, sizeof(err)), 0); /* community "v3" */
	CHECK_STR(d.polls[1].community, "v3");
	snmp_conf_free(&d);
}

static netsnmp_pdu *link_trap(int up, long ifindex, long admin, long oper)
{
	static const oid trap_oid0[] = { 1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0 };
	oid trap[] = { 1, 3, 6, 1, 6, 3, 1, 1, 5, up ? 4 : 3 };
	oid idx[] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 1, (oid)ifindex };
	oid adm[] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 7, (oid)ifindex };
	oid opr[] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 8, (oid)ifindex };
	netsnmp_pdu *pdu = snmp_pdu_create(SNMP_MSG_TRAP2);
	snmp_pdu_add_variable(pdu, trap_oid0, 11, ASN_OBJECT_ID, trap, sizeof(trap));
	snmp_pdu_add_variable(pdu, idx, 11, ASN_INTEGER, &ifindex, sizeof(ifindex));
	snmp_pdu_add_variable(pdu, adm, 11, ASN_INTEGER, &admin, sizeof(admin));
	snmp_pdu_add_variable(pdu, opr, 11, ASN_INTEGER, &oper, sizeof(oper));
	return pdu;
}

static const char *names(void *arg, const char *addr, uint32_t ifindex)
{
	(void)arg;
	return strcmp(addr, "10.0.0.2") == 0 && ifindex == 3 ? "swp3" : NULL;
}

static void map_link_traps_name_switch_and_port(void)
{
	struct snmp_conf c = { 0 };
	char err[128];
	CHECK_EQ(snmp_conf_line(&c, "Switch", "10.0.0.2 leaf1 host", "x", err, sizeof(err)), 0);
	struct snmp_map_ctx m = { .conf = &c, .fabric = "ETH", .ifname = names };
	struct fb_event ev;
	const char *why = NULL, *bad = NULL;
	netsnmp_pdu *pdu = link_trap(0, 3, 1, 2);
	int rc = snmp_map_trap(&m, "10.0.0.2", pdu, &ev, &why);
	snmp_free_pdu(pdu);
	CHECK_EQ(rc, 0);
	ev.seq = 1; /* the session's part */
	snprintf(ev.agent_id, sizeof(ev.agent_id), "snmp-test");
	CHECK_EQ(fb_event_check(&ev, &bad), 0);
	CHECK_EQ(ev.kind, FB_KIND_LINK_DOWN);
	CHECK_EQ(ev.severity, FB_SEV_WARNING);
	CHECK_EQ(ev.link_class, FB_LINK_HOST);
	CHECK_STR(ev.subj.switch_name, "leaf1");
	CHECK_STR(ev.subj.device, "swp3");
	CHECK_EQ(ev.subj.ifindex, 3);
	CHECK_EQ(ev.port_state, 2);
	pdu = link_trap(0, 4, 2, 2); /* admin down: not a fault */
	rc = snmp_map_trap(&m, "10.0.0.7", pdu, &ev, &why);
	snmp_free_pdu(pdu);
	CHECK_EQ(rc, 0);
	CHECK_EQ(ev.kind, FB_KIND_PORT_STATE);
	CHECK_EQ(ev.severity, FB_SEV_OK);
	CHECK_STR(ev.subj.switch_name, "10.0.0.7"); /* no Switch= line: the address */
	pdu = link_trap(1, 3, 1, 1);
	rc = snmp_map_trap(&m, "10.0.0.2", pdu, &ev, &why);
	snmp_free_pdu(pdu);
	CHECK_EQ(rc, 0);
	CHECK_EQ(ev.kind, FB_KIND_LINK_UP);
	pdu = snmp_pdu_create(SNMP_MSG_TRAP2); /* no snmpTrapOID.0 */
	rc = snmp_map_trap(&m, "10.0.0.2", pdu, &ev, &why);
	snmp_free_pdu(pdu);
	CHECK_EQ(rc, FB_EMALFORMED);
	snmp_conf_free(&c);
}

int main(void)
{
	RUN(ifcore_oper_changes_become_link_events);
	RUN(ifcore_counter32_wrap_is_a_small_delta);
	RUN(ifcore_threshold_has_hysteresis);
	RUN(ifcore_restart_rebaselines_and_relearns_names);
	RUN(ifcore_unreachable_once_and_back);
	RUN(ifcore_resync_reports_differences_only);
	RUN(conf_refuses_readable_secrets);
	RUN(map_link_traps_name_switch_and_port);
	return TEST_DONE();
}

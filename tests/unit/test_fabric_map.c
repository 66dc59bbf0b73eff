/* test_fabric_map.c - the switch-port topology, the job registry, the
 * POST /fabric/jobs parser, the event enrichment with job ids, the
 * snapshot refresh and the job channel. The map's JSON is in
 * test_fabric_render.c. */
#include "fb_test.h"
#include "fb_test_fabric.h"

#include "fabric_map.h"
#include "fb_err.h"
#include "fb_event.h"
#include "inventory.h"
#include "jobs.h"
#include "topology.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- topology ---- */

static void topology_learns_switch_ports_and_peers(void)
{
	struct fb_topology *t = fb_topology_new(0, 0);
	CHECK(t);
	struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 3, 3, 4, 5);
	CHECK_EQ(fb_topology_learn(t, &ev), 1);
	CHECK_EQ(fb_topology_learn(t, &ev), 0); /* the same report changes nothing */
	CHECK_EQ(fb_topology_n_switches(t), 1);
	CHECK_EQ(fb_topology_n_ports(t), 1);
	const struct fb_topo_port *p = fb_topology_port(t, LEAF1, 3);
	CHECK(p);
	CHECK(p->peer_guid == NODE_GUID(3));
	CHECK_EQ(p->peer_port, 1);
	CHECK_EQ(p->link_class, FB_LINK_HOST);
	CHECK_EQ(p->state, FB_LS_UP);
	CHECK_STR(p->peer_name, "h3 HCA-1");
	CHECK(fb_topology_by_peer(t, NODE_GUID(3), 1) == p);
	CHECK(fb_topology_by_peer(t, NODE_GUID(4), 1) == NULL);
	const struct fb_topo_switch *sw = fb_topology_switch(t, LEAF1);
	CHECK(sw);
	CHECK_STR(sw->name, "leaf1");
	CHECK(sw->reachable);
	/* Counter events and events without a switch GUID are not topology. */
	struct fb_event ctr = host_event(FB_KIND_COUNTER_THRESHOLD, LEAF2, "leaf2", 1, 1, 4, 5);
	CHECK_EQ(fb_topology_learn(t, &ctr), 0);
	struct fb_event nosw = host_event(FB_KIND_LINK_DOWN, 0, "", 1, 1, 1, 2);
	CHECK_EQ(fb_topology_learn(t, &nosw), 0);
	CHECK_EQ(fb_topology_n_switches(t), 1);
	fb_topology_free(t);
}

static void topology_link_state_follows_link_and_port_state_events(void)
{
	struct fb_topology *t = fb_topology_new(0, 0);
	CHECK(t);
	struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 3, 3, 0, 0);
	CHECK_EQ(fb_topology_learn(t, &ev), 1);
	const struct fb_topo_port *p = fb_topology_port(t, LEAF1, 3);
	CHECK_EQ(p->state, FB_LS_UNKNOWN); /* no PortInfo yet */
	struct {
		uint8_t kind, port_state, phys_state;
		enum fb_link_state want;
	} steps[] = {
		{ FB_KIND_LINK_DOWN, 1, 2, FB_LS_DOWN },
		{ FB_KIND_LINK_UP, 2, 5, FB_LS_UP },       /* Init: no SM, still "up" */
		{ FB_KIND_PORT_STATE, 1, 5, FB_LS_DOWN },
		{ FB_KIND_PORT_STATE, 4, 5, FB_LS_UP },
		{ FB_KIND_LINK_DEGRADED, 4, 5, FB_LS_DEGRADED },
		{ FB_KIND_PORT_STATE, 5, 5, FB_LS_DEGRADED }, /* says nothing about speed */
		{ FB_KIND_TOPOLOGY, 4, 5, FB_LS_DEGRADED },
		{ FB_KIND_LINK_DOWN, 1, 3, FB_LS_DOWN },
		{ FB_KIND_TOPOLOGY, 3, 5, FB_LS_UP },      /* Armed, LinkUp */
		{ FB_KIND_TOPOLOGY, 0, 0, FB_LS_UP },      /* unknown: keeps the last */
		{ FB_KIND_FLAP, 1, 2, FB_LS_UP },          /* not a state report */
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		ev = host_event(steps[i].kind, LEAF1, "leaf1", 3, 3, steps[i].port_state,
				steps[i].phys_state);
		CHECK(fb_topology_learn(t, &ev) >= 0);
		p = fb_topology_port(t, LEAF1, 3);
		if (p->state != steps[i].want)
			fprintf(stderr, "  step %zu: %s\n", i, fb_link_state_name(p->state));
		CHECK_EQ(p->state, steps[i].want);
	}
	CHECK_STR(fb_link_state_name(FB_LS_UP), "up");
	CHECK_STR(fb_link_state_name(FB_LS_DOWN), "down");
	CHECK_STR(fb_link_state_name(FB_LS_DEGRADED), "degraded");
	CHECK_STR(fb_link_state_name(FB_LS_UNKNOWN), "unknown");
	fb_topology_free(t);
}

static void topology_unreachable_switch_shows_unknown_until_it_answers(void)
{
	struct fb_topology *t = fb_topology_new(0, 0);
	struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 3, 3, 4, 5);
	CHECK(t);
	CHECK_EQ(fb_topology_learn(t, &ev), 1);
	const struct fb_topo_port *p = fb_topology_port(t, LEAF1, 3);
	CHECK_EQ(fb_topology_shown_state(t, p), FB_LS_UP);
	ev = sw_event(FB_KIND_SWITCH_UNREACHABLE, LEAF1, "leaf1", 0);
	CHECK_EQ(fb_topology_learn(t, &ev), 1);
	CHECK(!fb_topology_switch(t, LEAF1)->reachable);
	CHECK_EQ(fb_topology_shown_state(t, p), FB_LS_UNKNOWN);
	CHECK_EQ(p->state, FB_LS_UP); /* the last report is kept */
	ev = sw_event(FB_KIND_SWITCH_REACHABLE, LEAF1, "leaf1", 0);
	CHECK_EQ(fb_topology_learn(t, &ev), 1);
	CHECK_EQ(fb_topology_shown_state(t, p), FB_LS_UP);
	/* Any port report proves it answers, too (a restarted agent says no
	 * switch_reachable). */
	ev = sw_event(FB_KIND_SWITCH_UNREACHABLE, LEAF1, "leaf1", 0);
	CHECK_EQ(fb_topology_learn(t, &ev), 1);
	ev = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 3, 3, 4, 5);
	CHECK_EQ(fb_topology_learn(t, &ev), 1);
	CHECK(fb_topology_switch(t, LEAF1)->reachable);
	fb_topology_free(t);
}

static void topology_moved_cable_newest_report_wins(void)
{
	struct fb_topology *t = fb_topology_new(0, 0);
	CHECK(t);
	struct fb_event a = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 3, 3, 4, 5);
	CHECK_EQ(fb_topology_learn(t, &a), 1);
	/* The cable moves: leaf1[3] goes down (keeping its last peer), then
	 * leaf2[5] comes up with the host on it. */
	struct fb_event down = host_event(FB_KIND_LINK_DOWN, LEAF1, "leaf1", 3, 3, 1, 2);
	CHECK_EQ(fb_topology_learn(t, &down), 1);
	struct fb_event b = host_event(FB_KIND_TOPOLOGY, LEAF2, "leaf2", 5, 3, 4, 5);
	CHECK_EQ(fb_topology_learn(t, &b), 1);
	const struct fb_topo_port *p = fb_topology_by_peer(t, NODE_GUID(3), 1);
	CHECK(p);
	CHECK(p->switch_guid == LEAF2);
	CHECK_EQ(p->port, 5);
	/* A stale port repeating its last peer does not take it back ... */
	CHECK(fb_topology_learn(t, &down) >= 0);
	CHECK(fb_topology_by_peer(t, NODE_GUID(3), 1)->switch_guid == LEAF2);
	/* ... and when leaf1[3] gets another host, the old key is gone. */
	struct fb_event other = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 3, 9, 4, 5);
	CHECK_EQ(fb_topology_learn(t, &other), 1);
	CHECK(fb_topology_by_peer(t, NODE_GUID(9), 1) == fb_topology_port(t, LEAF1, 3));
	CHECK(fb_topology_by_peer(t, NODE_GUID(3), 1) == fb_topology_port(t, LEAF2, 5));
	fb_topology_free(t);
}

static void topology_peer_index_survives_many_moves(void)
{
	/* Backward-shift deletion keeps every remaining key findable. */
	struct fb_topology *t = fb_topology_new(0, 0);
	CHECK(t);
	for (int round = 0; round < 4; round++)
		for (unsigned port = 1; port <= 300; port++) {
			int k = (int)(port + 300 * (unsigned)round);
			struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", port, k, 4, 5);
			CHECK(fb_topology_learn(t, &ev) == 1);
		}
	CHECK_EQ(fb_topology_n_ports(t), 300);
	for (unsigned port = 1; port <= 300; port++) {
		CHECK(fb_topology_by_peer(t, NODE_GUID(port + 900), 1) == fb_topology_port(t, LEAF1, port));
		CHECK(fb_topology_by_peer(t, NODE_GUID(port), 1) == NULL);
	}
	fb_topology_free(t);
}

static void topology_refuses_entries_past_its_bounds(void)
{
	struct fb_topology *t = fb_topology_new(2, 3);
	CHECK(t);
	for (unsigned port = 1; port <= 3; port++) {
		struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", port, (int)port, 4, 5);
		CHECK_EQ(fb_topology_learn(t, &ev), 1);
	}
	struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 4, 4, 4, 5);
	CHECK_EQ(fb_topology_learn(t, &ev), -ENOSPC);
	ev = sw_event(FB_KIND_SWITCH_UNREACHABLE, LEAF2, "leaf2", 0);
	CHECK_EQ(fb_topology_learn(t, &ev), 1);
	ev = sw_event(FB_KIND_SWITCH_UNREACHABLE, 0x1234, "third", 0);
	CHECK_EQ(fb_topology_learn(t, &ev), -ENOSPC);
	/* Known entries still update. */
	ev = host_event(FB_KIND_LINK_DOWN, LEAF1, "leaf1", 2, 2, 1, 2);
	CHECK_EQ(fb_topology_learn(t, &ev), 1);
	CHECK_EQ(fb_topology_port(t, LEAF1, 2)->state, FB_LS_DOWN);
	fb_topology_free(t);
}

/* ---- jobs ---- */

/* fb_jobs_register of job id for user on the n nodes, at now: its return. */
static int register_job(struct fb_jobs *j, const char *id, const char *user, const char *const *nodes,
			size_t n, uint64_t now)
{
	struct fb_job_reg r = reg_of(id, user, nodes, n);
	int rc = fb_jobs_register(j, &r, now);
	fb_job_reg_free(&r);
	return rc;
}

static void jobs_add_replace_delete(void)
{
	struct fb_jobs *j = fb_jobs_new(0, 0);
	CHECK(j);
	const char *n12[] = { "node001", "node002" };
	CHECK_EQ(register_job(j, "12", "alice", n12, 2, 5), 0);
	CHECK_EQ(fb_jobs_count(j), 1);
	CHECK_EQ(fb_jobs_nodes(j), 2);
	CHECK_EQ(fb_jobs_members(j), 2);
	const char *user;
	size_t n;
	uint64_t at;
	CHECK_EQ(fb_jobs_get(j, "12", &user, &n, &at), 0);
	CHECK_STR(user, "alice");
	CHECK_EQ(n, 2);
	CHECK_EQ(at, 5);
	/* Replace: node002 leaves, node003 joins. */
	const char *n23[] = { "node001", "node003" };
	CHECK_EQ(register_job(j, "12", "bob", n23, 2, 6), 1);
	char list[FB_JOBS_MAX];
	CHECK_EQ(fb_jobs_node_list(j, "node002", list, sizeof(list)), 0);
	CHECK_STR(list, "");
	CHECK(fb_jobs_node_list(j, "node003", list, sizeof(list)) > 0);
	CHECK_STR(list, "12");
	CHECK_EQ(fb_jobs_nodes(j), 2);
	CHECK_EQ(fb_jobs_get(j, "12", &user, NULL, NULL), 0);
	CHECK_STR(user, "bob");
	/* Another job on node001. */
	const char *n1[] = { "node001" };
	CHECK_EQ(register_job(j, "9", "carol", n1, 1, 7), 0);
	fb_jobs_node_list(j, "node001", list, sizeof(list));
	CHECK_STR(list, "9,12");
	CHECK_EQ(fb_jobs_delete(j, "12"), 1);
	CHECK_EQ(fb_jobs_delete(j, "12"), 0); /* idempotent */
	CHECK_EQ(fb_jobs_delete(j, "777"), 0);
	fb_jobs_node_list(j, "node001", list, sizeof(list));
	CHECK_STR(list, "9");
	CHECK_EQ(fb_jobs_node_list(j, "node003", list, sizeof(list)), 0);
	CHECK_EQ(fb_jobs_count(j), 1);
	CHECK_EQ(fb_jobs_nodes(j), 1);
	CHECK_EQ(fb_jobs_members(j), 1);
	CHECK_EQ(fb_jobs_delete(j, "9"), 1);
	CHECK_EQ(fb_jobs_nodes(j), 0);
	CHECK_EQ(fb_jobs_members(j), 0);
	fb_jobs_free(j);
}

static void jobs_refuse_past_the_job_and_member_caps(void)
{
	struct fb_jobs *j = fb_jobs_new(3, 5);
	CHECK(j);
	const char *two[] = { "a", "b" };
	const char *three[] = { "a", "b", "c" };
	struct fb_job_reg r = reg_of("1", "u", two, 2);
	CHECK_EQ(fb_jobs_register(j, &r, 1), 0);
	snprintf(r.job_id, sizeof(r.job_id), "2");
	CHECK_EQ(fb_jobs_register(j, &r, 1), 0);
	snprintf(r.job_id, sizeof(r.job_id), "3");
	CHECK_EQ(fb_jobs_register(j, &r, 1), -ENOSPC); /* 6 members > 5 */
	fb_job_reg_free(&r);
	const char *one[] = { "c" };
	r = reg_of("3", "u", one, 1);
	CHECK_EQ(fb_jobs_register(j, &r, 1), 0);
	snprintf(r.job_id, sizeof(r.job_id), "4");
	CHECK_EQ(fb_jobs_register(j, &r, 1), -ENOSPC); /* a 4th job */
	fb_job_reg_free(&r);
	/* Replacing counts the old registration out first. */
	CHECK_EQ(register_job(j, "1", "u", three, 3, 1), -ENOSPC); /* 5 - 2 + 3 = 6 */
	CHECK_EQ(register_job(j, "1", "u", one, 1, 1), 1);
	CHECK_EQ(fb_jobs_count(j), 3);
	CHECK_EQ(fb_jobs_members(j), 4);
	char list[FB_JOBS_MAX];
	fb_jobs_node_list(j, "a", list, sizeof(list));
	CHECK_STR(list, "2");
	fb_jobs_node_list(j, "c", list, sizeof(list));
	CHECK_STR(list, "1,3");
	fb_jobs_free(j);
}

/* JobNodesMax refuses a registration by itself (-E2BIG, nothing changed);
 * fb_jobs_expire drops exactly the jobs not registered again since. */
static void jobs_node_cap_and_expiry(void)
{
	struct fb_jobs *j = fb_jobs_new(0, 0);
	CHECK(j);
	fb_jobs_set_limits(j, 0, 0, 2);
	const char *two[] = { "a", "b" };
	const char *three[] = { "a", "b", "c" };
	struct fb_job_reg r = reg_of("1", "u", three, 3);
	CHECK_EQ(fb_jobs_register(j, &r, 100), -E2BIG);
	CHECK_EQ(fb_jobs_count(j), 0);
	CHECK_EQ(fb_jobs_nodes(j), 0);
	fb_job_reg_free(&r);
	r = reg_of("1", "u", two, 2);
	CHECK_EQ(fb_jobs_register(j, &r, 100), 0);
	snprintf(r.job_id, sizeof(r.job_id), "2");
	CHECK_EQ(fb_jobs_register(j, &r, 100), 0);
	snprintf(r.job_id, sizeof(r.job_id), "3");
	CHECK_EQ(fb_jobs_register(j, &r, 100), 0);
	snprintf(r.job_id, sizeof(r.job_id), "2");
	CHECK_EQ(fb_jobs_register(j, &r, 200), 1); /* registered again: refreshed */
	fb_job_reg_free(&r);
	CHECK_EQ(fb_jobs_expire(j, 100), 0);  /* "before 100": none */
	CHECK_EQ(fb_jobs_expire(j, 150), 2);  /* 1 and 3 */
	CHECK_EQ(fb_jobs_count(j), 1);
	CHECK_EQ(fb_jobs_members(j), 2);
	CHECK_EQ(fb_jobs_get(j, "2", NULL, NULL, NULL), 0);
	CHECK_EQ(fb_jobs_get(j, "1", NULL, NULL, NULL), -1);
	char list[FB_JOBS_MAX];
	fb_jobs_node_list(j, "a", list, sizeof(list));
	CHECK_STR(list, "2");
	CHECK_EQ(fb_jobs_expire(j, 201), 1);
	CHECK_EQ(fb_jobs_count(j), 0);
	CHECK_EQ(fb_jobs_nodes(j), 0);
	fb_jobs_free(j);
}

static void jobs_node_list_is_ascending_and_keeps_whole_ids_only(void)
{
	struct fb_jobs *j = fb_jobs_new(0, 0);
	CHECK(j);
	const char *n[] = { "node001" };
	/* Numeric order, not text order: 9 < 10 < 100. */
	const char *ids[] = { "100", "9", "10", "12345678901234567890" };
	for (size_t i = 0; i < 4; i++) {
		CHECK_EQ(register_job(j, ids[i], "u", n, 1, 1), 0);
	}
	char list[FB_JOBS_MAX];
	CHECK_EQ(fb_jobs_node_list(j, "node001", list, sizeof(list)), strlen("9,10,100,12345678901234567890"));
	CHECK_STR(list, "9,10,100,12345678901234567890");
	/* A small buffer: "9,10" fits in 5 bytes with the NUL, ",100" does not. */
	char small[6];
	CHECK_EQ(fb_jobs_node_list(j, "node001", small, sizeof(small)), 4);
	CHECK_STR(small, "9,10");
	/* Fill to past 95 bytes: only whole ids, never a cut one. */
	for (int i = 0; i < 20; i++) {
		char id[16];
		snprintf(id, sizeof(id), "%d", 1000000 + i);
		CHECK_EQ(register_job(j, id, "u", n, 1, 1), 0);
	}
	size_t len = fb_jobs_node_list(j, "node001", list, sizeof(list));
	CHECK(len <= FB_JOBS_MAX - 1);
	CHECK_EQ(len, strlen(list));
	CHECK_EQ(fb_event_jobs_check(list, len, NULL), 0);
	CHECK(strncmp(list, "9,10,100,1000000,1000001,", 25) == 0);
	CHECK(list[len - 1] != ',');
	/* "9,10,100" is 8 bytes, each 7-digit id 8 more: ten fit in 95. */
	CHECK_EQ(len, 88);
	CHECK_STR(list + len - 7, "1000009");
	fb_jobs_free(j);
}

/* ---- the parser ---- */

static void parse_accepts_a_registration(void)
{
	static const char body[] = "{\"JobId\":\"123\",\"User\":\"alice\","
				   "\"Nodes\":[\"node002\",\"node001\",\"gpu-[x]\"]}";
	struct fb_job_reg r;
	char err[256];
	/* brackets are not allowed in names */
	CHECK_EQ(fb_jobs_parse_register(body, sizeof(body) - 1, &r, err, sizeof(err)), FB_EMALFORMED);
	CHECK(strncmp(err, "Nodes:", 6) == 0);
	CHECK(r.nodes == NULL);
	static const char ok[] = " {\"Nodes\":[\"node002\",\"node001\"],\"User\":\"alice\",\"JobId\":\"123\"} ";
	CHECK_EQ(fb_jobs_parse_register(ok, sizeof(ok) - 1, &r, err, sizeof(err)), 0);
	CHECK_STR(r.job_id, "123");
	CHECK_STR(r.user, "alice");
	CHECK_EQ(r.n_nodes, 2);
	CHECK_STR(r.nodes[0], "node001"); /* sorted */
	CHECK_STR(r.nodes[1], "node002");
	fb_job_reg_free(&r);
	CHECK(r.nodes == NULL);
	CHECK_EQ(r.n_nodes, 0);
}

static void parse_refusals_name_the_parameter(void)
{
	char name63[64], name64[65], id21[22], ok_big[160];
	memset(name63, 'n', 63);
	name63[63] = '\0';
	memset(name64, 'n', 64);
	name64[64] = '\0';
	memset(id21, '1', 21);
	id21[21] = '\0';
	snprintf(ok_big, sizeof(ok_big), "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[\"%s\"]}", name63);
	struct fb_job_reg r;
	char err[256];
	CHECK_EQ(fb_jobs_parse_register(ok_big, strlen(ok_big), &r, err, sizeof(err)), 0);
	fb_job_reg_free(&r);
	char long_node[160], long_id[100];
	snprintf(long_node, sizeof(long_node), "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[\"%s\"]}", name64);
	snprintf(long_id, sizeof(long_id), "{\"JobId\":\"%s\",\"User\":\"u\",\"Nodes\":[\"a\"]}", id21);
	struct {
		const char *body;
		const char *param;
	} bad[] = {
		{ "", "body" },
		{ "not json", "body" },
		{ "[1,2]", "body" },
		{ "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[\"a\"]} x", "body" },
		{ "{\"JobId\":\"1\",\"JobId\":\"2\",\"User\":\"u\",\"Nodes\":[\"a\"]}", "body" },
		{ "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[\"a\"],\"Step\":0}", "body" },
		{ "{\"User\":\"u\",\"Nodes\":[\"a\"]}", "JobId" },
		{ "{\"JobId\":123,\"User\":\"u\",\"Nodes\":[\"a\"]}", "JobId" },
		{ "{\"JobId\":\"\",\"User\":\"u\",\"Nodes\":[\"a\"]}", "JobId" },
		{ "{\"JobId\":\"12a\",\"User\":\"u\",\"Nodes\":[\"a\"]}", "JobId" },
		{ "{\"JobId\":\"-1\",\"User\":\"u\",\"Nodes\":[\"a\"]}", "JobId" },
		{ "{\"JobId\":\"007\",\"User\":\"u\",\"Nodes\":[\"a\"]}", "JobId" },
		{ "{\"JobId\":\"1\\u0000\",\"User\":\"u\",\"Nodes\":[\"a\"]}", "body" },
		{ long_id, "JobId" },
		{ "{\"JobId\":\"1\",\"Nodes\":[\"a\"]}", "User" },
		{ "{\"JobId\":\"1\",\"User\":\"\",\"Nodes\":[\"a\"]}", "User" },
		{ "{\"JobId\":\"1\",\"User\":\"a b\",\"Nodes\":[\"a\"]}", "User" },
		{ "{\"JobId\":\"1\",\"User\":null,\"Nodes\":[\"a\"]}", "User" },
		{ "{\"JobId\":\"1\",\"User\":\"u\"}", "Nodes" },
		{ "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":\"a\"}", "Nodes" },
		{ "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[]}", "Nodes" },
		{ "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[\"a\",1]}", "Nodes" },
		{ "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[\"a,b\"]}", "Nodes" },
		{ "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[\"a\",\"b\",\"a\"]}", "Nodes" },
		{ "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[\"\\u00e9\"]}", "Nodes" },
		{ "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[\"a\\u0000b\"]}", "body" },
		{ long_node, "Nodes" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&r, 0x5a, sizeof(r));
		err[0] = '\0';
		int rc = fb_jobs_parse_register(bad[i].body, strlen(bad[i].body), &r, err, sizeof(err));
		size_t n = strlen(bad[i].param);
		if (rc != FB_EMALFORMED || strncmp(err, bad[i].param, n) != 0 || err[n] != ':')
			fprintf(stderr, "  case %zu (%s): rc %d, err \"%s\"\n", i, bad[i].body, rc, err);
		CHECK_EQ(rc, FB_EMALFORMED);
		CHECK(strncmp(err, bad[i].param, n) == 0 && err[n] == ':');
		CHECK(r.nodes == NULL); /* nothing to free on failure */
	}
}

/* The refusal is logged with the peer: jansson's error quotes the bytes it
 * stopped at, which must not carry an escape sequence or a CR into the log. */
static void parse_error_quotes_no_control_bytes(void)
{
	static const char *bodies[] = {
		"{\"JobId\":\"a\\\x1b\"}", /* invalid escape near '"a\<ESC>' */
		"[1,\x01]",                  /* invalid token near '<SOH>' */
		"{\"JobId\":\"a\\\r\"}",   /* invalid escape near '"a\<CR>' */
		"{\"\x1b[31m\":1}",         /* control character in a key */
	};
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		struct fb_job_reg r;
		char err[256];
		CHECK_EQ(fb_jobs_parse_register(bodies[i], strlen(bodies[i]), &r, err, sizeof(err)),
			 FB_EMALFORMED);
		CHECK(strncmp(err, "body: ", 6) == 0);
		int clean = 1;
		for (const char *p = err; *p; p++)
			clean &= *p >= ' ' && *p <= '~';
		if (!clean)
			fprintf(stderr, "  case %zu: control byte in \"%s\"\n", i, err);
		CHECK(clean);
	}
}

static void parse_refuses_more_than_65536_nodes(void)
{
	size_t n = FB_JOB_NODES_MAX + 1;
	char *body = malloc(n * 10 + 64);
	CHECK(body);
	size_t len = (size_t)sprintf(body, "{\"JobId\":\"1\",\"User\":\"u\",\"Nodes\":[");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(body + len, "%s\"n%zu\"", i ? "," : "", i);
	len += (size_t)sprintf(body + len, "]}");
	struct fb_job_reg r;
	char err[256];
	int rc = fb_jobs_parse_register(body, len, &r, err, sizeof(err));
	CHECK_EQ(rc, FB_EMALFORMED);
	CHECK(strncmp(err, "Nodes:", 6) == 0);
	/* Exactly the maximum is fine. */
	char *last = strrchr(body, ',');
	memcpy(last, "]}", 3);
	rc = fb_jobs_parse_register(body, strlen(body), &r, err, sizeof(err));
	free(body);
	CHECK_EQ(rc, 0);
	CHECK_EQ(r.n_nodes, FB_JOB_NODES_MAX);
	fb_job_reg_free(&r);
}


static void enrich_stamps_node_events_with_their_jobs(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	struct fb_event ev = host_event(FB_KIND_LINK_DOWN, LEAF1, "leaf1", 3, 3, 1, 2);
	snprintf(ev.subj.node, sizeof(ev.subj.node), "node003");
	CHECK_EQ(fb_fabric_map_enrich(m, &ev), 0); /* no jobs at all */
	const char *nodes[] = { "node003" };
	const char *ids[] = { "124", "123" };
	for (int i = 0; i < 2; i++) {
		struct fb_job_op op = { .kind = FB_JOB_OP_REGISTER };
		op.reg = reg_of(ids[i], "alice", nodes, 1);
		snprintf(op.job_id, sizeof(op.job_id), "%s", ids[i]);
		fb_fabric_map_apply(m, &op);
		CHECK_EQ(op.result, FB_JOB_CREATED);
	}
	CHECK_EQ(fb_fabric_map_enrich(m, &ev), 1);
	CHECK_STR(ev.jobs, "123,124");
	/* Jobs already set by the agent are kept. */
	snprintf(ev.jobs, sizeof(ev.jobs), "5");
	CHECK_EQ(fb_fabric_map_enrich(m, &ev), 0);
	CHECK_STR(ev.jobs, "5");
	/* No node, or a node with no job: nothing. */
	ev.jobs[0] = '\0';
	ev.subj.node[0] = '\0';
	CHECK_EQ(fb_fabric_map_enrich(m, &ev), 0);
	snprintf(ev.subj.node, sizeof(ev.subj.node), "node004");
	CHECK_EQ(fb_fabric_map_enrich(m, &ev), 0);
	CHECK_STR(ev.jobs, "");
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

/* An Ethernet switch event as fabricbus-agent-snmp sends it (no GUID:
 * fabric, name, ifIndex), with the host MAC behind the port when it knows
 * it. */
static struct fb_event eth_event(uint8_t kind, uint32_t ifindex, uint64_t mac)
{
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.tech = FB_TECH_ETH;
	ev.link_class = FB_LINK_HOST;
	ev.port_state = kind == FB_KIND_LINK_DOWN ? 2 : 1;
	snprintf(ev.subj.fabric, sizeof(ev.subj.fabric), "ETH");
	snprintf(ev.subj.switch_name, sizeof(ev.subj.switch_name), "sw1");
	snprintf(ev.subj.addr, sizeof(ev.subj.addr), "10.77.1.2");
	snprintf(ev.agent_id, sizeof(ev.agent_id), "snmp-1");
	ev.subj.ifindex = ifindex;
	ev.subj.peer_guid = mac;
	if (mac)
		snprintf(ev.subj.peer_name, sizeof(ev.subj.peer_name), "02:00:00:00:00:%02x",
			 (unsigned)(mac & 0xff));
	return ev;
}

static void eth_switch_port_names_the_node_behind_its_mac(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "ETH");
	CHECK(inv && m);
	/* node001's eth0 (the node agent's inventory) */
	struct fb_event nic;
	memset(&nic, 0, sizeof(nic));
	nic.kind = FB_KIND_INVENTORY;
	nic.tech = FB_TECH_ETH;
	nic.link_class = FB_LINK_NODE;
	nic.port_state = 1;
	snprintf(nic.subj.node, sizeof(nic.subj.node), "node001");
	snprintf(nic.subj.device, sizeof(nic.subj.device), "eth0");
	snprintf(nic.subj.addr, sizeof(nic.subj.addr), "02:00:00:00:00:0a");
	nic.subj.ifindex = 2;
	CHECK_EQ(fb_inventory_learn(inv, &nic), 0);
	fb_fabric_map_learn(m, &nic);
	/* The SNMP agent's MAC walk: swp1 (ifIndex 3) has node001's MAC. */
	struct fb_event topo = eth_event(FB_KIND_TOPOLOGY, 3, 0x02000000000aULL);
	CHECK_EQ(fb_fabric_map_enrich_peer(m, &topo), 0); /* it has its peer */
	CHECK_EQ(fb_inventory_enrich(inv, &topo), 1);
	CHECK_STR(topo.subj.node, "node001");
	fb_fabric_map_learn(m, &topo);
	/* A trap without the peer (a trap-only agent): the broker fills it in
	 * from the topology, then the node from the inventory. */
	struct fb_event down = eth_event(FB_KIND_LINK_DOWN, 3, 0);
	CHECK_EQ(fb_fabric_map_enrich_peer(m, &down), 1);
	CHECK(down.subj.peer_guid == 0x02000000000aULL);
	CHECK_STR(down.subj.peer_name, "02:00:00:00:00:0a");
	CHECK_EQ(fb_inventory_enrich(inv, &down), 1);
	CHECK_STR(down.subj.node, "node001");
	fb_fabric_map_learn(m, &down);
	/* Another port, no peer known: nothing. A MAC no node owns: no node. */
	struct fb_event other = eth_event(FB_KIND_LINK_DOWN, 4, 0);
	CHECK_EQ(fb_fabric_map_enrich_peer(m, &other), 0);
	CHECK_EQ(fb_inventory_enrich(inv, &other), 0);
	struct fb_event stranger = eth_event(FB_KIND_LINK_DOWN, 4, 0x02000000000bULL);
	CHECK_EQ(fb_inventory_enrich(inv, &stranger), 0);
	/* The map: node001's eth0 on sw1 port 3, down; sw1 has host node001 and
	 * its port 3 shows the peer MAC (what the SNMP agent's resync reads). */
	char *json = fb_fabric_map_render(m, 7, NULL);
	CHECK(json);
	CHECK(strstr(json, "\"Hosts\":[\"node001\"]") != NULL);
	CHECK(strstr(json, "{\"LinkState\":\"down\",\"PeerMAC\":\"02:00:00:00:00:0a\",\"Port\":3}") !=
	      NULL);
	CHECK(strstr(json, "\"MAC\":\"02:00:00:00:00:0a\"") != NULL);
	CHECK(strstr(json, "\"Switch\":\"sw1\"") != NULL);
	CHECK(strstr(json, "\"SwitchPort\":3") != NULL);
	free(json);
	/* node001's cable moved to swp3 (ifIndex 5): the old port no longer
	 * names it. */
	struct fb_event moved = eth_event(FB_KIND_TOPOLOGY, 5, 0x02000000000aULL);
	fb_fabric_map_learn(m, &moved);
	struct fb_event old = eth_event(FB_KIND_LINK_DOWN, 3, 0);
	CHECK_EQ(fb_fabric_map_enrich_peer(m, &old), 0);
	struct fb_event now = eth_event(FB_KIND_LINK_DOWN, 5, 0);
	CHECK_EQ(fb_fabric_map_enrich_peer(m, &now), 1);
	/* An IB event is none of this code's business. */
	struct fb_event ib = host_event(FB_KIND_LINK_DOWN, LEAF1, "leaf1", 3, 3, 1, 2);
	ib.subj.peer_guid = 0;
	CHECK_EQ(fb_fabric_map_enrich_peer(m, &ib), 0);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

/* A refresh that may have to wait out the spacing after the last render
 * (nine times its duration: microseconds here). */
static int refresh_within_1s(struct fb_fabric_map *m, uint64_t last_id)
{
	int rc = 0;
	for (int i = 0; i < 1000 && (rc = fb_fabric_map_refresh(m, last_id)) == 0; i++)
		usleep(1000);
	return rc;
}

static void refresh_publishes_only_when_something_changed(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	CHECK(fb_fabric_map_snapshot(m) == NULL);
	CHECK_EQ(fb_fabric_map_refresh(m, 1), 1); /* the first, empty map */
	struct fb_fabric_snap *s1 = fb_fabric_map_snapshot(m);
	CHECK(s1);
	usleep(20000); /* past the spacing: a 0 now means "nothing changed" */
	CHECK_EQ(fb_fabric_map_refresh(m, 2), 0);
	struct fb_event ctr = host_event(FB_KIND_COUNTER_THRESHOLD, LEAF1, "leaf1", 1, 1, 4, 5);
	fb_fabric_map_learn(m, &ctr);
	CHECK_EQ(fb_fabric_map_refresh(m, 3), 0); /* not a map change */
	struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 1, 1, 4, 5);
	fb_fabric_map_learn(m, &ev);
	CHECK_EQ(refresh_within_1s(m, 4), 1);
	struct fb_fabric_snap *s2 = fb_fabric_map_snapshot(m);
	CHECK(s2 && s2 != s1);
	/* The old snapshot stays valid for whoever holds it. */
	CHECK(strstr(s1->json, "\"LastEventId\":1,") != NULL);
	CHECK(strstr(s2->json, "\"LastEventId\":4,") != NULL);
	CHECK_EQ(s2->len, strlen(s2->json));
	fb_fabric_snap_unref(s1);
	fb_fabric_snap_unref(s2);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

static int woken;
static void wake(void *arg) { woken += arg != NULL; }

static void job_channel_carries_operations_to_the_loop_and_back(void)
{
	struct event_base *base = event_base_new();
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = base && inv ? fb_fabric_map_new(base, inv, "IB") : NULL;
	CHECK(m);
	fb_fabric_map_set_waker(m, wake, m);
	struct fb_job_op *op = calloc(1, sizeof(*op));
	CHECK(op);
	static const char body[] = "{\"JobId\":\"77\",\"User\":\"u\",\"Nodes\":[\"node001\"]}";
	char err[128];
	CHECK_EQ(fb_jobs_parse_register(body, sizeof(body) - 1, &op->reg, err, sizeof(err)), 0);
	op->kind = FB_JOB_OP_REGISTER;
	op->token = 5;
	memcpy(op->job_id, op->reg.job_id, sizeof(op->job_id));
	CHECK_EQ(fb_fabric_map_submit(m, op), 0);
	CHECK(fb_fabric_map_take_done(m) == NULL); /* not applied yet */
	woken = 0;
	event_base_loop(base, EVLOOP_NONBLOCK);
	CHECK_EQ(woken, 1);
	struct fb_job_op *done = fb_fabric_map_take_done(m);
	CHECK(done == op);
	CHECK_EQ(done->token, 5);
	CHECK_EQ(done->result, FB_JOB_CREATED);
	CHECK_EQ(done->n_nodes, 1);
	fb_job_op_free(done);
	CHECK_EQ(fb_jobs_count(fb_fabric_map_jobs(m)), 1);
	/* Bounded: past FB_FABRIC_MAP_MAX_OPS in flight, FB_EFULL. */
	struct fb_job_op *ops[FB_FABRIC_MAP_MAX_OPS + 1];
	for (size_t i = 0; i <= FB_FABRIC_MAP_MAX_OPS; i++) {
		ops[i] = calloc(1, sizeof(*ops[i]));
		CHECK(ops[i]);
		ops[i]->kind = FB_JOB_OP_DELETE;
		snprintf(ops[i]->job_id, sizeof(ops[i]->job_id), "%zu", i + 1000);
		int rc = fb_fabric_map_submit(m, ops[i]);
		CHECK_EQ(rc, i < FB_FABRIC_MAP_MAX_OPS ? 0 : FB_EFULL);
	}
	fb_job_op_free(ops[FB_FABRIC_MAP_MAX_OPS]);
	event_base_loop(base, EVLOOP_NONBLOCK);
	size_t n = 0;
	while ((done = fb_fabric_map_take_done(m))) {
		CHECK(done->result == FB_JOB_UNKNOWN || done->result == FB_JOB_DELETED);
		fb_job_op_free(done);
		n++;
	}
	CHECK_EQ(n, FB_FABRIC_MAP_MAX_OPS);
	CHECK_EQ(fb_jobs_count(fb_fabric_map_jobs(m)), 1); /* 77 was not among them */
	/* Left on the done queue at shutdown: freed with the map. */
	op = calloc(1, sizeof(*op));
	CHECK(op);
	op->kind = FB_JOB_OP_DELETE;
	snprintf(op->job_id, sizeof(op->job_id), "77");
	CHECK_EQ(fb_fabric_map_submit(m, op), 0);
	event_base_loop(base, EVLOOP_NONBLOCK);
	fb_fabric_map_set_waker(m, NULL, NULL);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
	event_base_free(base);
}

int main(void)
{
	RUN(topology_learns_switch_ports_and_peers);
	RUN(topology_link_state_follows_link_and_port_state_events);
	RUN(topology_unreachable_switch_shows_unknown_until_it_answers);
	RUN(topology_moved_cable_newest_report_wins);
	RUN(topology_peer_index_survives_many_moves);
	RUN(topology_refuses_entries_past_its_bounds);
	RUN(jobs_add_replace_delete);
	RUN(jobs_refuse_past_the_job_and_member_caps);
	RUN(jobs_node_cap_and_expiry);
	RUN(jobs_node_list_is_ascending_and_keeps_whole_ids_only);
	RUN(parse_accepts_a_registration);
	RUN(parse_refusals_name_the_parameter);
	RUN(parse_error_quotes_no_control_bytes);
	RUN(parse_refuses_more_than_65536_nodes);
	RUN(enrich_stamps_node_events_with_their_jobs);
	RUN(eth_switch_port_names_the_node_behind_its_mac);
	RUN(refresh_publishes_only_when_something_changed);
	RUN(job_channel_carries_operations_to_the_loop_and_back);
	return TEST_DONE();
}

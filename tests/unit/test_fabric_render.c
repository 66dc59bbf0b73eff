/* test_fabric_render.c - the GET /fabric/map JSON that fabric_render.c
 * builds from inventory + topology + jobs, whole and filtered (?nodes=,
 * ws_fabric_map.c through the snapshot's index). */
#include "fb_test.h"
#include "fb_test_fabric.h"

#include "fabric_map.h"
#include "fb_err.h"
#include "fb_event.h"
#include "inventory.h"
#include "jobs.h"
#include "ws_fabric_map.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the map ---- */

static json_t *render(struct fb_fabric_map *m, uint64_t last_id)
{
	size_t len = 0;
	char *s = fb_fabric_map_render(m, last_id, &len);
	if (!s)
		return NULL;
	json_error_t je;
	json_t *j = json_loadb(s, len, 0, &je);
	free(s);
	return j;
}

static void map_json_joins_node_ports_to_their_switch_ports(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	learn_rig(inv, m);
	json_t *j = render(m, 1234);
	CHECK(j);
	CHECK_STR(json_string_value(json_object_get(j, "Fabric")), "IB");
	CHECK_EQ(json_integer_value(json_object_get(j, "LastEventId")), 1234);
	json_t *nodes = json_object_get(j, "Nodes");
	CHECK_EQ(json_object_size(nodes), 8);
	json_t *n3 = json_object_get(nodes, "node003");
	CHECK(n3);
	CHECK_EQ(json_array_size(json_object_get(n3, "Jobs")), 0);
	json_t *ports = json_object_get(n3, "Ports");
	CHECK_EQ(json_array_size(ports), 1);
	json_t *p = json_array_get(ports, 0);
	char want[24];
	CHECK_STR(json_string_value(json_object_get(p, "Technology")), "IB");
	CHECK_STR(json_string_value(json_object_get(p, "Device")), "ibsim0");
	CHECK_EQ(json_integer_value(json_object_get(p, "Port")), 1);
	snprintf(want, sizeof(want), "0x%016llx", (unsigned long long)PORT_GUID(3));
	CHECK_STR(json_string_value(json_object_get(p, "PortGUID")), want);
	snprintf(want, sizeof(want), "0x%016llx", (unsigned long long)NODE_GUID(3));
	CHECK_STR(json_string_value(json_object_get(p, "NodeGUID")), want);
	CHECK_EQ(json_integer_value(json_object_get(p, "LID")), 5);
	CHECK_STR(json_string_value(json_object_get(p, "Switch")), "leaf1");
	CHECK_STR(json_string_value(json_object_get(p, "SwitchGUID")), "0x0008f10400411a08");
	CHECK_EQ(json_integer_value(json_object_get(p, "SwitchPort")), 3);
	CHECK_STR(json_string_value(json_object_get(p, "LinkState")), "up");
	CHECK_EQ(json_object_size(p), 10);
	json_decref(j);

	/* h3's cable pulled, then back. */
	struct fb_event down = host_event(FB_KIND_LINK_DOWN, LEAF1, "leaf1", 3, 3, 1, 2);
	fb_fabric_map_learn(m, &down);
	j = render(m, 1235);
	p = json_array_get(json_object_get(json_object_get(json_object_get(j, "Nodes"), "node003"),
					   "Ports"), 0);
	CHECK_STR(json_string_value(json_object_get(p, "LinkState")), "down");
	json_decref(j);
	struct fb_event up = host_event(FB_KIND_LINK_UP, LEAF1, "leaf1", 3, 3, 2, 5);
	fb_fabric_map_learn(m, &up);
	j = render(m, 1236);
	p = json_array_get(json_object_get(json_object_get(json_object_get(j, "Nodes"), "node003"),
					   "Ports"), 0);
	CHECK_STR(json_string_value(json_object_get(p, "LinkState")), "up");
	CHECK(!json_object_get(p, "NodeLinkState")); /* the inventory event did not say */
	json_decref(j);
	/* The node agent's own view of its port: NodeLinkState. */
	struct fb_event own = inventory_event(3);
	own.kind = FB_KIND_LINK_DOWN;
	own.link_class = FB_LINK_NODE;
	fb_inventory_learn(inv, &own);
	fb_fabric_map_learn(m, &own);
	j = render(m, 1237);
	p = json_array_get(json_object_get(json_object_get(json_object_get(j, "Nodes"), "node003"),
					   "Ports"), 0);
	CHECK_STR(json_string_value(json_object_get(p, "NodeLinkState")), "down");
	json_decref(j);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

/* A second port of node002's CA, cabled by port GUID to leaf2[7]. */
static void learn_second_port(struct fb_inventory *inv, struct fb_fabric_map *m)
{
	struct fb_event ev = inventory_event(2);
	ev.subj.port = 2;
	ev.subj.port_guid = PORT_GUID(2) + 0x100;
	fb_inventory_learn(inv, &ev);
	fb_fabric_map_learn(m, &ev);
	ev = host_event(FB_KIND_TOPOLOGY, LEAF2, "leaf2", 7, 2, 4, 5);
	ev.subj.peer_guid = PORT_GUID(2) + 0x100;
	ev.subj.peer_port = 2;
	fb_fabric_map_learn(m, &ev);
}

static void map_lists_the_hosts_behind_each_switch(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	learn_rig(inv, m);
	/* node002's second port on leaf2, and an unknown host (no node agent)
	 * on leaf2[1]. */
	learn_second_port(inv, m);
	struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF2, "leaf2", 1, 99, 4, 5);
	strcpy(ev.agent_id, "ib-a");
	fb_fabric_map_learn(m, &ev);
	json_t *j = render(m, 1);
	CHECK(j);
	json_t *sws = json_object_get(j, "Switches");
	CHECK_EQ(json_object_size(sws), 2);
	json_t *l1 = json_object_get(sws, "0x0008f10400411a08");
	CHECK(l1);
	CHECK_STR(json_string_value(json_object_get(l1, "Name")), "leaf1");
	CHECK(json_is_true(json_object_get(l1, "Reachable")));
	json_t *hosts = json_object_get(l1, "Hosts");
	CHECK_EQ(json_array_size(hosts), 8);
	for (size_t i = 0; i < 8; i++) {
		char want[16];
		snprintf(want, sizeof(want), "node%03zu", i + 1);
		CHECK_STR(json_string_value(json_array_get(hosts, i)), want);
	}
	json_t *l2 = json_object_get(sws, "0x0008f10400411b08");
	CHECK(l2);
	hosts = json_object_get(l2, "Hosts");
	CHECK_EQ(json_array_size(hosts), 1);
	CHECK_STR(json_string_value(json_array_get(hosts, 0)), "node002");
	/* Every reported switch port, by number, and who reported the switch last:
	 * what a restarted agent resyncs against. */
	CHECK_STR(json_string_value(json_object_get(l2, "Agent")), "ib-a");
	json_t *swp = json_object_get(l2, "Ports");
	CHECK_EQ(json_array_size(swp), 2);
	CHECK_EQ(json_integer_value(json_object_get(json_array_get(swp, 0), "Port")), 1);
	CHECK_EQ(json_integer_value(json_object_get(json_array_get(swp, 1), "Port")), 7);
	CHECK_STR(json_string_value(json_object_get(json_array_get(swp, 1), "LinkState")), "up");
	CHECK_EQ(json_array_size(json_object_get(l1, "Ports")), 9); /* 8 hosts, 1 ISL */
	/* The ISL names its peer switch port (the switch tree of `fabricbus
	 * topology`); a host port does not (its node's entry does). */
	json_t *isl = json_array_get(json_object_get(l1, "Ports"), 8);
	CHECK_EQ(json_integer_value(json_object_get(isl, "Port")), 33);
	CHECK_STR(json_string_value(json_object_get(isl, "Peer")), "0x0008f10400411c08");
	CHECK_EQ(json_integer_value(json_object_get(isl, "PeerPort")), 1);
	CHECK(!json_object_get(json_array_get(json_object_get(l1, "Ports"), 0), "Peer"));
	json_t *ports = json_object_get(json_object_get(json_object_get(j, "Nodes"), "node002"), "Ports");
	CHECK_EQ(json_array_size(ports), 2);
	CHECK_EQ(json_integer_value(json_object_get(json_array_get(ports, 1), "Port")), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(ports, 1), "Switch")), "leaf2");
	CHECK_EQ(json_integer_value(json_object_get(json_array_get(ports, 1), "SwitchPort")), 7);
	json_decref(j);

	/* Unreachable: Reachable false, its ports' LinkState unknown. */
	ev = sw_event(FB_KIND_SWITCH_UNREACHABLE, LEAF1, "leaf1", 0);
	fb_fabric_map_learn(m, &ev);
	j = render(m, 2);
	CHECK(json_is_false(json_object_get(json_object_get(json_object_get(j, "Switches"),
							    "0x0008f10400411a08"), "Reachable")));
	json_t *p = json_array_get(json_object_get(json_object_get(json_object_get(j, "Nodes"), "node001"),
						   "Ports"), 0);
	CHECK_STR(json_string_value(json_object_get(p, "LinkState")), "unknown");
	/* The switch's own list keeps the last reported state for the resync. */
	p = json_array_get(json_object_get(json_object_get(json_object_get(j, "Switches"),
							   "0x0008f10400411a08"), "Ports"), 0);
	CHECK_STR(json_string_value(json_object_get(p, "LinkState")), "up");
	json_decref(j);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

static void map_omits_switch_fields_it_does_not_know(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	struct fb_event ev = inventory_event(5);
	fb_inventory_learn(inv, &ev);
	fb_fabric_map_learn(m, &ev);
	/* An Ethernet port: a MAC, no GUIDs. */
	struct fb_event eth;
	memset(&eth, 0, sizeof(eth));
	eth.kind = FB_KIND_INVENTORY;
	eth.tech = FB_TECH_ETH;
	eth.link_class = FB_LINK_NODE;
	snprintf(eth.subj.node, sizeof(eth.subj.node), "node005");
	snprintf(eth.subj.device, sizeof(eth.subj.device), "eth0");
	snprintf(eth.subj.addr, sizeof(eth.subj.addr), "02:00:00:00:00:05");
	eth.subj.ifindex = 2;
	fb_inventory_learn(inv, &eth);
	fb_fabric_map_learn(m, &eth);
	json_t *j = render(m, 0);
	CHECK(j);
	json_t *ports = json_object_get(json_object_get(json_object_get(j, "Nodes"), "node005"), "Ports");
	CHECK_EQ(json_array_size(ports), 2);
	json_t *ib = json_array_get(ports, 0), *e = json_array_get(ports, 1);
	CHECK_STR(json_string_value(json_object_get(ib, "Technology")), "IB");
	CHECK(json_object_get(ib, "Switch") == NULL);
	CHECK(json_object_get(ib, "SwitchGUID") == NULL);
	CHECK(json_object_get(ib, "SwitchPort") == NULL);
	CHECK(json_object_get(ib, "LinkState") == NULL);
	CHECK_STR(json_string_value(json_object_get(e, "Technology")), "Ethernet");
	CHECK_STR(json_string_value(json_object_get(e, "Device")), "eth0");
	CHECK_STR(json_string_value(json_object_get(e, "MAC")), "02:00:00:00:00:05");
	CHECK(json_object_get(e, "PortGUID") == NULL);
	CHECK(json_object_get(e, "LinkState") == NULL);
	CHECK_EQ(json_object_size(json_object_get(j, "Switches")), 0);
	json_decref(j);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

static void map_is_deterministic_and_shows_jobs(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	learn_rig(inv, m);
	const char *nodes[] = { "node003", "node010" };
	struct fb_job_op op = { .kind = FB_JOB_OP_REGISTER };
	op.reg = reg_of("42", "alice", nodes, 2);
	snprintf(op.job_id, sizeof(op.job_id), "42");
	fb_fabric_map_apply(m, &op);
	CHECK_EQ(op.result, FB_JOB_CREATED);
	CHECK_EQ(op.n_nodes, 2);
	CHECK(op.reg.nodes == NULL); /* the loop frees it once applied */
	op.reg = reg_of("7", "bob", nodes, 1);
	snprintf(op.job_id, sizeof(op.job_id), "7");
	fb_fabric_map_apply(m, &op);
	CHECK_EQ(op.result, FB_JOB_CREATED);
	size_t la, lb;
	char *a = fb_fabric_map_render(m, 9, &la);
	char *b = fb_fabric_map_render(m, 9, &lb);
	CHECK(a && b);
	CHECK(la == lb && memcmp(a, b, la) == 0);
	static const char head[] = "{\"Fabric\":\"IB\",\"LastEventId\":9,\"Nodes\":{\"node001\":";
	CHECK(strncmp(a, head, sizeof(head) - 1) == 0);
	free(b);
	json_error_t je;
	json_t *j = json_loads(a, 0, &je);
	free(a);
	CHECK(j);
	json_t *n3 = json_object_get(json_object_get(j, "Nodes"), "node003");
	json_t *jobs = json_object_get(n3, "Jobs");
	CHECK_EQ(json_array_size(jobs), 2);
	CHECK_STR(json_string_value(json_array_get(jobs, 0)), "7");
	CHECK_STR(json_string_value(json_array_get(jobs, 1)), "42");
	/* A node known only from a job is listed with no ports. */
	json_t *n10 = json_object_get(json_object_get(j, "Nodes"), "node010");
	CHECK(n10);
	CHECK_EQ(json_array_size(json_object_get(n10, "Ports")), 0);
	CHECK_STR(json_string_value(json_array_get(json_object_get(n10, "Jobs"), 0)), "42");
	json_decref(j);
	struct fb_fabric_map_stats st;
	fb_fabric_map_get_stats(m, &st);
	CHECK_EQ(st.nodes, 9);
	CHECK_EQ(st.switches, 1);
	CHECK_EQ(st.switch_ports, 9);
	CHECK_EQ(st.jobs, 2);
	CHECK_EQ(st.job_nodes, 2);
	struct fb_job_op del = { .kind = FB_JOB_OP_DELETE };
	snprintf(del.job_id, sizeof(del.job_id), "42");
	fb_fabric_map_apply(m, &del);
	CHECK_EQ(del.result, FB_JOB_DELETED);
	fb_fabric_map_apply(m, &del);
	CHECK_EQ(del.result, FB_JOB_UNKNOWN);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

/* ---- GET /fabric/map?nodes= (ws_fabric_map.c over the snapshot's index) ---- */

/* The body's bytes, whole (caller frees), after checking they add up. */
static char *read_body(struct fb_ws_map_body *b, size_t *len)
{
	size_t n = fb_ws_map_body_len(b), got = 0, k;
	char *out = malloc(n + 1);
	/* odd-sized reads cross every piece boundary */
	while (out && (k = fb_ws_map_body_read(b, out + got, got + 7 <= n ? 7 : n - got + 1)) > 0)
		got += k;
	if (!out || got != n) {
		free(out);
		return NULL;
	}
	out[n] = '\0';
	*len = n;
	return out;
}

/* The filtered document for expr, parsed (NULL if refused: why says it). */
static json_t *select_json(struct fb_fabric_snap *snap, const char *expr, char *raw_head,
			   size_t head_sz, char *why, size_t whysz)
{
	struct fb_ws_map_body *b = NULL;
	size_t len = 0;
	if (fb_ws_fabric_select(snap, expr, strlen(expr), &b, why, whysz) != 0)
		return NULL;
	char *s = read_body(b, &len);
	fb_ws_map_body_free(b);
	if (!s)
		return NULL;
	if (raw_head)
		snprintf(raw_head, head_sz, "%s", s);
	json_error_t je;
	json_t *j = json_loadb(s, len, JSON_REJECT_DUPLICATES, &je);
	free(s);
	return j;
}

/* The rig, node002's second port on leaf2, and node010 known only by a job. */
static void filter_rig(struct fb_inventory *inv, struct fb_fabric_map *m)
{
	learn_rig(inv, m);
	learn_second_port(inv, m);
	const char *nodes[] = { "node010" };
	struct fb_job_op op = { .kind = FB_JOB_OP_REGISTER };
	op.reg = reg_of("42", "alice", nodes, 1);
	snprintf(op.job_id, sizeof(op.job_id), "42");
	fb_fabric_map_apply(m, &op);
}

static int same_member(json_t *a, json_t *b, const char *obj, const char *key)
{
	json_t *x = json_object_get(json_object_get(a, obj), key);
	return x && json_equal(x, json_object_get(json_object_get(b, obj), key));
}

static void map_filtered_keeps_the_asked_nodes_and_their_switches(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	filter_rig(inv, m);
	struct fb_fabric_snap *snap = fb_fabric_map_render_snap(m, 9);
	CHECK(snap);
	json_error_t je;
	json_t *full = json_loadb(snap->json, snap->len, 0, &je);
	char head[128], why[256];
	json_t *j = select_json(snap, "node[002-003],node010,ghost[2-1]", head, sizeof(head), why,
				sizeof(why));
	CHECK(!j && strstr(why, "nodes: reversed range 2-1"));
	j = select_json(snap, "ghost2,node[003,002],node010,ghost1,node003", head, sizeof(head), why,
			sizeof(why));
	CHECK(full && j);
	/* the full map's keys and byte order, with Missing before Nodes */
	CHECK(strncmp(head, "{\"Fabric\":\"IB\",\"LastEventId\":9,\"Missing\":[\"ghost1\",\"ghost2\"],"
			    "\"MissingCount\":2,\"Nodes\":{\"node002\":", 88) == 0);
	CHECK_EQ(json_object_size(j), 6);
	CHECK_EQ(json_object_size(json_object_get(j, "Nodes")), 3);
	CHECK(same_member(j, full, "Nodes", "node002"));
	CHECK(same_member(j, full, "Nodes", "node003"));
	CHECK(same_member(j, full, "Nodes", "node010")); /* no ports, its job */
	/* node002 hangs off both leaves; each listed once, whole */
	CHECK_EQ(json_object_size(json_object_get(j, "Switches")), 2);
	CHECK(same_member(j, full, "Switches", "0x0008f10400411a08"));
	CHECK(same_member(j, full, "Switches", "0x0008f10400411b08"));
	json_decref(j);

	j = select_json(snap, "node001", NULL, 0, why, sizeof(why));
	CHECK(j);
	CHECK_EQ(json_object_size(json_object_get(j, "Switches")), 1);
	CHECK(same_member(j, full, "Switches", "0x0008f10400411a08"));
	CHECK_EQ(json_array_size(json_object_get(j, "Missing")), 0);
	json_decref(j);
	j = select_json(snap, "node010", NULL, 0, why, sizeof(why));
	CHECK(j);
	CHECK_EQ(json_object_size(json_object_get(j, "Nodes")), 1);
	CHECK_EQ(json_object_size(json_object_get(j, "Switches")), 0);
	json_decref(j);
	json_decref(full);
	fb_fabric_snap_unref(snap);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

static void map_filtered_caps_missing_and_survives_an_empty_map(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	struct fb_fabric_snap *snap = fb_fabric_map_render_snap(m, 0);
	CHECK(snap);
	char why[256];
	json_t *j = select_json(snap, "x[1-1500],x7", NULL, 0, why, sizeof(why));
	CHECK(j);
	CHECK_EQ(json_array_size(json_object_get(j, "Missing")), FB_WS_MAP_MISSING_MAX);
	CHECK_STR(json_string_value(json_array_get(json_object_get(j, "Missing"), 0)), "x1");
	CHECK_EQ(json_integer_value(json_object_get(j, "MissingCount")), 1500);
	CHECK_EQ(json_object_size(json_object_get(j, "Nodes")), 0);
	json_decref(j);
	CHECK(!select_json(snap, "x[1-65537]", NULL, 0, why, sizeof(why)));
	CHECK(strncmp(why, "nodes: more than 65536 names", 28) == 0);
	CHECK(!select_json(snap, "", NULL, 0, why, sizeof(why)));
	CHECK_STR(why, "nodes: empty list");
	fb_fabric_snap_unref(snap);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

/* A 10000-node map on 250 leaves (40 hosts each): what a 1000-node job
 * start costs the lws thread, whole map against ?nodes=. Prints, does not
 * assert timings. */
static void map_filtered_10000_nodes_costs_what_the_job_asks(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	FBT_LEARN_10000_NODES(inv, m);
	uint64_t t0 = fb_now_ns();
	struct fb_fabric_snap *snap = fb_fabric_map_render_snap(m, 1);
	uint64_t t1 = fb_now_ns();
	CHECK(snap);
	CHECK_EQ(snap->n_nodes, 10000);
	struct fb_ws_map_body *b = NULL;
	char why[256], *buf = malloc(32 * 1024);
	CHECK(buf);
	uint64_t t2 = fb_now_ns();
	CHECK_EQ(fb_ws_fabric_whole(snap, &b), 0);
	size_t full = fb_ws_map_body_len(b);
	while (fb_ws_map_body_read(b, buf, 32 * 1024))
		;
	fb_ws_map_body_free(b);
	uint64_t t3 = fb_now_ns();
	static const char expr[] = "node[2001-3000]";
	CHECK_EQ(fb_ws_fabric_select(snap, expr, sizeof(expr) - 1, &b, why, sizeof(why)), 0);
	size_t part = fb_ws_map_body_len(b);
	while (fb_ws_map_body_read(b, buf, 32 * 1024))
		;
	fb_ws_map_body_free(b);
	uint64_t t4 = fb_now_ns();
	printf("map_10000_render: %.1f ms\n", (double)(t1 - t0) / 1e6);
	printf("map_10000_full_bytes: %zu bytes\n", full);
	printf("map_10000_full_copy: %.3f ms\n", (double)(t3 - t2) / 1e6);
	printf("map_10000_filtered_1000_bytes: %zu bytes\n", part);
	printf("map_10000_filtered_1000_select_and_copy: %.3f ms\n", (double)(t4 - t3) / 1e6);
	printf("ratio: %.1f (full bytes / filtered bytes)\n", (double)full / (double)part);
	CHECK(part * 5 < full);
	free(buf);
	fb_fabric_snap_unref(snap);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

/* ---- the renderer thread (fb_fabric_map_start_renderer) ---- */

static void register_nodes(struct fb_fabric_map *m, const char *id, const char *fmt, int n)
{
	CHECK(fbt_register_job(m, id, fmt, 0, n) >= 0);
}

/* Refresh (the loop's tick) until the renderer published; at most ~20 s. */
static int refresh_until_published(struct fb_fabric_map *m, uint64_t last_id)
{
	for (int i = 0; i < 20000; i++) {
		int rc = fb_fabric_map_refresh(m, last_id);
		if (rc)
			return rc;
		usleep(1000);
	}
	return 0;
}

/* The published snapshot is the loop's rendering of the same state, bytes
 * and index alike. */
static void check_same_as_loop(struct fb_fabric_map *m, uint64_t last_id)
{
	struct fb_fabric_snap *got = fb_fabric_map_snapshot(m);
	struct fb_fabric_snap *want = fb_fabric_map_render_snap(m, last_id);
	CHECK(got && want);
	if (!got || !want)
		goto out;
	CHECK_EQ(got->len, want->len);
	CHECK(got->len == want->len && memcmp(got->json, want->json, got->len + 1) == 0);
	CHECK_EQ(got->head_len, want->head_len);
	CHECK_EQ(got->n_nodes, want->n_nodes);
	CHECK_EQ(got->n_sws, want->n_sws);
	CHECK(got->n_nodes == want->n_nodes &&
	      memcmp(got->nodes, want->nodes, got->n_nodes * sizeof(*got->nodes)) == 0);
	CHECK(got->n_sws == want->n_sws &&
	      memcmp(got->sws, want->sws, got->n_sws * sizeof(*got->sws)) == 0);
	/* Each node's Jobs, as the registry lists them for enrichment (its own
	 * per-node index, not the renderer's grouping of the jobs' lists). */
	json_error_t je;
	json_t *j = json_loadb(got->json, got->len, 0, &je);
	CHECK(j);
	const char *name;
	json_t *node;
	size_t with_jobs = 0;
	json_object_foreach(json_object_get(j, "Nodes"), name, node) {
		char list[4096] = "", want_list[4096];
		size_t i, len = 0;
		json_t *id;
		json_array_foreach(json_object_get(node, "Jobs"), i, id)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? "," : "",
						json_string_value(id));
		fb_jobs_node_list(fb_fabric_map_jobs(m), name, want_list, sizeof(want_list));
		CHECK_STR(list, want_list);
		with_jobs += len > 0;
	}
	CHECK_EQ(with_jobs, fb_jobs_nodes(fb_fabric_map_jobs(m)));
	json_decref(j);
out:
	fb_fabric_snap_unref(got);
	fb_fabric_snap_unref(want);
}

static void renderer_thread_publishes_what_the_loop_renders(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	CHECK(inv && m);
	learn_rig(inv, m);
	register_nodes(m, "17", "node%03d", 6);     /* nodes with ports */
	register_nodes(m, "5", "node%03d", 4);      /* a node with two jobs */
	register_nodes(m, "123456", "x%05d", 3000); /* nodes with jobs only */
	register_nodes(m, "99", "x%05d", 10);       /* ids compare as numbers: 99 < 123456 */
	register_nodes(m, "1000", "x%05d", 20);
	register_nodes(m, "1000", "x%05d", 15);     /* replaced: x00015..19 lose it */
	CHECK_EQ(fb_fabric_map_start_renderer(m), 0);
	CHECK_EQ(fb_fabric_map_start_renderer(m), 0); /* once is enough */
	CHECK_EQ(refresh_until_published(m, 41), 1);
	check_same_as_loop(m, 41);
	struct fb_fabric_map_stats st;
	fb_fabric_map_get_stats(m, &st);
	CHECK_EQ(st.renders, 1);
	CHECK_EQ(st.nodes, 3009); /* node000..node005: node000 has no port */
	CHECK(st.render_thread);
	printf("  3009 nodes: render %.2f ms on the renderer, %.2f ms of it on the loop\n",
	       st.render_ms, st.take_ms);
	/* Nothing changed: nothing handed over, nothing published. */
	usleep(50000);
	CHECK_EQ(fb_fabric_map_refresh(m, 41), 0);
	CHECK_EQ(fb_fabric_map_refresh(m, 41), 0);
	/* A change: published again; the old snapshot stays valid for its holder. */
	struct fb_fabric_snap *old = fb_fabric_map_snapshot(m);
	struct fb_event down = host_event(FB_KIND_LINK_DOWN, LEAF1, "leaf1", 3, 3, 1, 2);
	fb_fabric_map_learn(m, &down);
	struct fb_job_op del = { .kind = FB_JOB_OP_DELETE, .job_id = "5" };
	fb_fabric_map_apply(m, &del);
	CHECK_EQ(del.result, FB_JOB_DELETED);
	CHECK_EQ(refresh_until_published(m, 42), 1);
	check_same_as_loop(m, 42);
	CHECK(old && strstr(old->json, "\"LastEventId\":41,"));
	fb_fabric_snap_unref(old);
	/* Freed with a render handed over and maybe not started: no leak, no hang. */
	register_nodes(m, "7", "y%d", 100);
	usleep(200000); /* past the spacing: this refresh hands the render over */
	CHECK(fb_fabric_map_refresh(m, 43) >= 0);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

int main(void)
{
	RUN(map_json_joins_node_ports_to_their_switch_ports);
	RUN(map_lists_the_hosts_behind_each_switch);
	RUN(map_omits_switch_fields_it_does_not_know);
	RUN(map_is_deterministic_and_shows_jobs);
	RUN(map_filtered_keeps_the_asked_nodes_and_their_switches);
	RUN(map_filtered_caps_missing_and_survives_an_empty_map);
	RUN(map_filtered_10000_nodes_costs_what_the_job_asks);
	RUN(renderer_thread_publishes_what_the_loop_renders);
	return TEST_DONE();
}

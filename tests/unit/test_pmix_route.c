/* test_pmix_route.c - fabricbus-pmix's pure parts without PMIx or Slurm:
 * which events reach a step (adapters/pmix/pmix_route.c), the step socket's
 * lines (pmix_note.c), and the settings (pmix_conf.c). */
#include "fb_test.h"

#include "fb_err.h"
#include "pmix_conf.h"
#include "pmix_note.h"
#include "pmix_route.h"

#include <pmix_common.h>
#include <stdlib.h>

static const char *MAP =
	"{\"Nodes\":{\"node001\":{\"Ports\":[{\"Switch\":\"leaf1\",\"SwitchGUID\":\"0x0000000000200000\"}]},"
	"\"node002\":{\"Ports\":[{\"Switch\":\"leaf1\",\"SwitchGUID\":\"0x0000000000200000\"}]},"
	"\"node011\":{\"Ports\":[{\"Switch\":\"leaf2\",\"SwitchGUID\":\"0x0000000000200001\"}]}}}";

/* A broker document with the given Oem.Fabricbus members. */
static void event(struct fbp_event *ev, const char *kind, const char *oem)
{
	char doc[2048];
	snprintf(doc, sizeof(doc),
		 "{\"Id\":\"42\",\"Events\":[{\"EventId\":\"42\",\"EventTimestamp\":\"2026-11-22T09:52:21.123456Z\","
		 "\"MessageId\":\"Fabric.1.0.DownstreamLinkDropped\",\"MessageSeverity\":\"Warning\","
		 "\"Message\":\"Switch 'leaf1' downstream link has gone down on port '1'.\","
		 "\"OriginOfCondition\":{\"@odata.id\":\"/redfish/v1/Fabrics/IB/Switches/leaf1/Ports/1\"},"
		 "\"Oem\":{\"Fabricbus\":{\"Kind\":\"%s\"%s%s}}}]}", kind, oem[0] ? "," : "", oem);
	char err[256];
	if (fbp_event_parse(doc, strlen(doc), ev, err, sizeof(err)) < 0)
		abort();
}

static void view(struct fbp_view *v, const char *nodes, const char *job)
{
	char err[256];
	memset(v, 0, sizeof(*v));
	snprintf(v->job_id, sizeof(v->job_id), "%s", job);
	if (fbp_view_set_nodes(v, nodes, err, sizeof(err)) < 0 ||
	    fbp_view_set_map(v, MAP, strlen(MAP), err, sizeof(err)) < 0)
		abort();
}

#define ALL_KINDS 0xffu

/* fbp_route's verdict on a fresh event(kind, oem) for view v. */
static int route(const char *kind, const char *oem, const struct fbp_view *v, unsigned kinds,
		 struct fbp_note *n)
{
	struct fbp_event ev;
	event(&ev, kind, oem);
	return fbp_route(&ev, v, kinds, n);
}

static void node_event_reaches_its_step_only(void)
{
	struct fbp_event ev;
	struct fbp_view v;
	struct fbp_note n;
	event(&ev, "link_down", "\"LinkClass\":\"host\",\"SwitchName\":\"leaf1\",\"Node\":\"node001\"");
	view(&v, "node[001-002]", "12");
	CHECK_EQ(fbp_route(&ev, &v, ALL_KINDS, &n), 1);
	CHECK_EQ(n.n_nodes, 1);
	CHECK_STR(n.nodes[0], "node001");
	CHECK_EQ(n.event_id, 42);
	CHECK_EQ(n.timestamp, 1795341141); /* 2026-11-22T09:52:21Z */
	CHECK_STR(n.message_id, "Fabric.1.0.DownstreamLinkDropped");
	CHECK_STR(n.origin, "/redfish/v1/Fabrics/IB/Switches/leaf1/Ports/1");
	CHECK_STR(n.severity, "Warning");
	CHECK_STR(n.kind, "link_down");
	fbp_view_free(&v);
	/* the same event, a step on other nodes of the same leaf: not its cable */
	view(&v, "node002", "13");
	CHECK_EQ(fbp_route(&ev, &v, ALL_KINDS, &n), 0);
	fbp_view_free(&v);
}

static void switch_event_reaches_the_nodes_behind_it(void)
{
	struct fbp_view v;
	struct fbp_note n;
	view(&v, "node[001-002],node011", "12");
	CHECK_EQ(route("link_down", "\"LinkClass\":\"uplink\",\"SwitchName\":\"leaf1\",\"SwitchGUID\":\"0x0000000000200000\"",
		       &v, ALL_KINDS, &n), 1);
	CHECK_EQ(n.n_nodes, 2);
	CHECK_STR(n.nodes[0], "node001");
	CHECK_STR(n.nodes[1], "node002");
	/* an ISL whose far end is the job's leaf2: by the peer switch */
	CHECK_EQ(route("link_down", "\"LinkClass\":\"isl\",\"SwitchName\":\"spine1\",\"PeerGUID\":\"0x0000000000200001\"",
		       &v, ALL_KINDS, &n), 1);
	CHECK_EQ(n.n_nodes, 1);
	CHECK_STR(n.nodes[0], "node011");
	/* a switch none of the job's nodes hangs off */
	CHECK_EQ(route("switch_unreachable", "\"SwitchName\":\"leaf4\",\"SwitchGUID\":\"0x0000000000200003\"",
		       &v, ALL_KINDS, &n), 0);
	/* a host link's peer is a node, never a switch of the job */
	CHECK_EQ(route("link_down", "\"LinkClass\":\"host\",\"SwitchName\":\"leaf9\",\"PeerGUID\":\"0x0000000000200001\"",
		       &v, ALL_KINDS, &n), 0);
	fbp_view_free(&v);
}

/* A root cause names its blast radius: only the job's nodes left without a
 * path hear of it, not every node behind the switch (the broker's own
 * rendering: Oem.Fabricbus.NoPath and Degraded hostlists). */
static void root_cause_reaches_the_nodes_without_a_path(void)
{
	struct fbp_event ev;
	struct fbp_view v;
	struct fbp_note n;
	view(&v, "node[001-002],node011", "12");
	event(&ev, "switch_degraded", "\"SwitchName\":\"leaf1\",\"SwitchGUID\":\"0x0000000000200000\","
	      "\"NoPath\":\"node[002-010]\",\"Degraded\":\"node001\",\"Symptoms\":\"40-57\"");
	CHECK_EQ(ev.root_cause, 1);
	CHECK_EQ(fbp_route(&ev, &v, ALL_KINDS, &n), 1);
	CHECK_EQ(n.n_nodes, 1); /* node001 is behind leaf1 but still has a path */
	CHECK_STR(n.nodes[0], "node002");
	CHECK_STR(n.kind, "switch_degraded");
	/* a dead spine that cut nobody off: no job is told */
	CHECK_EQ(route("switch_failed", "\"SwitchName\":\"spine1\",\"NoPath\":\"\",\"Degraded\":\"node[001-324]\"",
		       &v, ALL_KINDS, &n), 0);
	/* off with Kinds=, and a list that does not parse names nobody */
	const char *leaf2 = "\"SwitchName\":\"leaf2\",\"NoPath\":\"node[010-012]\"";
	CHECK_EQ(route("switch_failed", leaf2, &v, ALL_KINDS, &n), 1);
	CHECK_STR(n.nodes[0], "node011");
	CHECK_EQ(route("switch_failed", leaf2, &v, FBP_KIND_LINK_DOWN, &n), 0);
	CHECK_EQ(route("switch_failed", "\"SwitchName\":\"leaf2\",\"NoPath\":\"node[012-010]\"",
		       &v, ALL_KINDS, &n), 0);
	/* recovery carries no lists: the nodes behind the switch hear it */
	event(&ev, "switch_recovered", "\"SwitchName\":\"leaf1\",\"SwitchGUID\":\"0x0000000000200000\"");
	CHECK_EQ(ev.root_cause, 0);
	CHECK_EQ(fbp_route(&ev, &v, FBP_KIND_SWITCH_RECOVERED, &n), 1);
	CHECK_EQ(n.n_nodes, 2);
	fbp_view_free(&v);
}

static void kinds_and_notices_are_filtered(void)
{
	struct fbp_event ev;
	struct fbp_view v;
	struct fbp_note n;
	view(&v, "node001", "12");
	CHECK_EQ(route("counter_threshold", "\"Node\":\"node001\"", &v, ALL_KINDS, &n), 0);
	CHECK_EQ(route("link_up", "\"Node\":\"node001\"", &v, ALL_KINDS, &n), 1);
	CHECK_EQ(route("link_up", "\"Node\":\"node001\"", &v, FBP_KIND_LINK_DOWN, &n), 0);
	const char *notice = "{\"Id\":\"missed-3\",\"Events\":[{\"MessageId\":\"Fabricbus.1.0.SubscriberEventsMissed\","
			     "\"Oem\":{\"Fabricbus\":{\"Kind\":\"link_down\",\"Node\":\"node001\"}}}]}";
	char err[128];
	CHECK_EQ(fbp_event_parse(notice, strlen(notice), &ev, err, sizeof(err)), 0);
	CHECK_EQ(fbp_route(&ev, &v, ALL_KINDS, &n), 0);
	CHECK(fbp_event_parse("[1]", 3, &ev, err, sizeof(err)) == FB_EMALFORMED);
	fbp_view_free(&v);
}

static void note_lines_round_trip(void)
{
	struct fbp_note n, m;
	memset(&n, 0, sizeof(n));
	n.event_id = 7;
	n.position = 9;
	n.code = -3001;
	n.range = FBP_RANGE_NODES;
	n.timestamp = 1700000000;
	snprintf(n.message, sizeof(n.message), "a \"quoted\"\nmessage");
	snprintf(n.nodes[0], sizeof(n.nodes[0]), "node001");
	snprintf(n.nodes[1], sizeof(n.nodes[1]), "node002");
	n.n_nodes = 2;
	char *line = NULL, err[256];
	CHECK_EQ(fbp_note_encode(&n, &line), 0);
	CHECK(strchr(line, '\n') == NULL); /* one line on the socket */
	int rc = fbp_note_decode(line, strlen(line), &m, err, sizeof(err));
	free(line);
	CHECK_EQ(rc, 1);
	CHECK_EQ(m.event_id, 7);
	CHECK_EQ(m.position, 9);
	CHECK_EQ(m.code, -3001);
	CHECK_EQ(m.range, FBP_RANGE_NODES);
	CHECK_STR(m.message, n.message);
	char joined[200];
	fbp_note_nodes_joined(&m, joined, sizeof(joined));
	CHECK_STR(joined, "node001,node002");
	CHECK_EQ(fbp_note_decode("{\"Position\":12}", 15, &m, err, sizeof(err)), 0);
	CHECK_EQ(m.position, 12);
	CHECK(fbp_note_decode("{\"EventId\":1,\"Code\":5,\"Range\":\"session\"}", 40, &m, err, sizeof(err)) < 0);
	CHECK(strstr(err, "Code") != NULL);
	CHECK(fbp_note_decode("{\"EventId\":1,\"Code\":-5,\"Range\":\"all\"}", 37, &m, err, sizeof(err)) < 0);
	CHECK(fbp_note_decode("nope", 4, &m, err, sizeof(err)) < 0);
}

static void hello_round_trips(void)
{
	struct fbp_hello h, g;
	memset(&h, 0, sizeof(h));
	snprintf(h.job_id, sizeof(h.job_id), "12");
	snprintf(h.step_id, sizeof(h.step_id), "0");
	snprintf(h.node, sizeof(h.node), "node001");
	snprintf(h.nspace, sizeof(h.nspace), "slurm.pmix.12.0");
	snprintf(h.step_nodes, sizeof(h.step_nodes), "node[001-002]");
	h.position = 118;
	h.pmix = 1;
	char *line = NULL, err[128];
	CHECK_EQ(fbp_hello_encode(&h, &line), 0);
	int rc = fbp_hello_decode(line, strlen(line), &g, err, sizeof(err));
	free(line);
	CHECK_EQ(rc, 0);
	CHECK_STR(g.nspace, "slurm.pmix.12.0");
	CHECK_STR(g.step_nodes, "node[001-002]");
	CHECK_EQ(g.position, 118);
	CHECK_EQ(g.pmix, 1);
	CHECK(fbp_hello_decode("{\"Fabricbus\":\"other/9\"}", 23, &g, err, sizeof(err)) < 0);
}

static void settings_name_the_key(void)
{
	struct fbp_config c;
	char err[512];
	fbp_conf_defaults(&c);
	CHECK_EQ(c.code, PMIX_FABRIC_UPDATED);
	CHECK_EQ(fbp_conf_set(&c, "Code", "-3001", "-o", err, sizeof(err)), 0);
	CHECK_EQ(c.code, PMIX_EXTERNAL_ERR_BASE - 1);
	CHECK_EQ(fbp_conf_set(&c, "code", "PMIX_FABRIC_UPDATED", "-o", err, sizeof(err)), 0);
	CHECK_EQ(c.code, PMIX_FABRIC_UPDATED);
	CHECK_EQ(fbp_conf_set(&c, "Code", "-175x", "f:3", err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "f:3: Code") != NULL);
	CHECK_EQ(fbp_conf_set(&c, "Code", "-2999", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(fbp_conf_set(&c, "NodeName", "node[1-2]", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(fbp_conf_set(&c, "ServerNodes", "n[3-1]", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(fbp_conf_set(&c, "StepDir", "relative", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(fbp_conf_set(&c, "Bogus", "1", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "unknown key 'Bogus'") != NULL);
	CHECK_EQ(fbp_conf_set(&c, "Kinds", "link_down, flap", "-o", err, sizeof(err)), 0);
	CHECK_EQ(c.kinds, FBP_KIND_LINK_DOWN | FBP_KIND_FLAP);
	CHECK_EQ(fbp_conf_set(&c, "Delivery", "server", "-o", err, sizeof(err)), 0);
	CHECK_EQ(fbp_conf_check(&c, err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "ServerUri") != NULL);
}

int main(void)
{
	RUN(node_event_reaches_its_step_only);
	RUN(switch_event_reaches_the_nodes_behind_it);
	RUN(root_cause_reaches_the_nodes_without_a_path);
	RUN(kinds_and_notices_are_filtered);
	RUN(note_lines_round_trip);
	RUN(hello_round_trips);
	RUN(settings_name_the_key);
	return TEST_DONE();
}

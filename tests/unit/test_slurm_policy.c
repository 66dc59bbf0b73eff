/* test_slurm_policy.c - fabricbus-slurm's decisions without Slurm: conditions,
 * hold-down, stability window, the cap, batching, routing, seeding, the
 * state file, the config, and the texts of the published events.
 *
 * FBS_BIN (set by meson when the adapter is built) is the fabricbus-slurm
 * binary: the refusal to start on a damaged state file is checked with it. */
#include "fb_test.h"

#include "fb_err.h"
#include "fb_log.h"
#include "slurm_cond.h"
#include "slurm_conf.h"
#include "slurm_map.h"
#include "slurm_policy.h"
#include "slurm_pub.h"
#include "slurm_state.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEAF1 0x0008f10400411a08ull
#define S 1000ull /* ms */


static const struct fbs_classify_cfg ccfg = {
	.drain_on = FBS_DRAIN_ON_DEFAULT | FBS_C_BIT(FBS_C_CONGESTION),
	.hold_ms = 2 * S,
	.congestion_ppm = 100000,
	.congestion_for_ms = 60 * S,
};

static struct fbs_policy *policy(uint64_t stable_ms, uint64_t max_nodes, uint64_t max_percent)
{
	struct fbs_policy_cfg c = { .stable_ms = stable_ms, .max_nodes = max_nodes,
				    .max_percent = max_percent, .reason_prefix = "fabric:" };
	struct fbs_policy *p = NULL;
	if (fbs_policy_new(&c, &p))
		abort();
	fbs_policy_set_cap_base(p, 100);
	return p;
}

/* A switch-side host-port event, as fabricbus-agent-ib sends them. */
static struct fb_event port_event(uint8_t kind, unsigned port, const char *node)
{
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.link_class = FB_LINK_HOST;
	ev.tech = FB_TECH_IB;
	strcpy(ev.subj.switch_name, "leaf1");
	ev.subj.switch_guid = LEAF1;
	ev.subj.port = (uint16_t)port;
	if (node)
		strcpy(ev.subj.node, node);
	return ev;
}

/* Classify kind at port for node, and apply it at time now. */
static int feed(struct fbs_policy *p, uint8_t kind, unsigned port, const char *node, uint64_t id,
		uint64_t now)
{
	struct fb_event ev = port_event(kind, port, node);
	struct fbs_obs o;
	if (fbs_classify(&ev, id, &ccfg, &o, NULL) == FBS_OP_NONE)
		return -100;
	return fbs_policy_observe(p, node, &o, now);
}

static size_t decide(struct fbs_policy *p, uint64_t now, struct fbs_decision *d)
{
	if (fbs_policy_decide(p, now, d))
		abort();
	return d->n_batches;
}

/* Settle every batch of d as Slurm would: drains drained, undrains done. */
static void settle(struct fbs_policy *p, const struct fbs_decision *d, uint64_t now)
{
	for (size_t i = 0; i < d->n_batches; i++)
		for (size_t k = 0; k < d->batches[i].n; k++) {
			const char *n = d->batches[i].t[k].node;
			if (d->batches[i].action == FBS_A_DRAIN)
				fbs_policy_drained(p, n, d->batches[i].reason, d->batches[i].event_id,
						   1700000000, 0, now);
			else
				fbs_policy_undrained(p, n, now);
		}
}

static int hold(struct fbs_policy *p, const char *node)
{
	const struct fbs_node *n = fbs_policy_node(p, node);
	return n ? n->hold : -1;
}

/* ---- policy ------------------------------------------------------------------- */

static void hold_down_is_respected(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	CHECK_EQ(feed(p, FB_KIND_LINK_DOWN, 3, "node003", 1234, 10 * S), 1);
	CHECK_EQ(decide(p, 10 * S + 1999, &d), 0);
	CHECK_EQ(fbs_policy_next_due(p, 10 * S + 1999), 12 * S);
	CHECK_EQ(decide(p, 12 * S, &d), 1);
	CHECK_EQ(d.batches[0].action, FBS_A_DRAIN);
	CHECK_EQ(d.batches[0].n, 1);
	CHECK_STR(d.batches[0].t[0].node, "node003");
	CHECK_STR(d.batches[0].reason, "fabric: link down leaf1/3 (EventId 1234)");
	CHECK_EQ(d.batches[0].event_id, 1234);
	CHECK_EQ(hold(p, "node003"), FBS_H_DRAINING);
	fbs_decision_free(&d);
	CHECK_EQ(decide(p, 13 * S, &d), 0); /* in flight: not decided twice */
	fbs_policy_free(p);
}

static void hold_down_is_cancelled_by_a_quick_clear(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	CHECK_EQ(feed(p, FB_KIND_LINK_DOWN, 3, "node003", 1, 0), 1);
	CHECK_EQ(feed(p, FB_KIND_LINK_UP, 3, "node003", 2, 1500), 1);
	CHECK_EQ(decide(p, 5 * S, &d), 0);
	CHECK(fbs_policy_node(p, "node003") == NULL); /* nothing left to remember */
	CHECK_EQ(fbs_policy_next_due(p, 5 * S), UINT64_MAX);
	fbs_policy_free(p);
}

/* node003's link down (EventId 1) at 0 s, drained at 2 s: where the
 * undrain tests start. */
static void drain_node003(struct fbs_policy *p)
{
	struct fbs_decision d;
	feed(p, FB_KIND_LINK_DOWN, 3, "node003", 1, 0);
	decide(p, 2 * S, &d);
	settle(p, &d, 2 * S);
	fbs_decision_free(&d);
}

static void hold_down_zero_drains_at_once(void)
{
	struct fbs_classify_cfg c = ccfg;
	c.hold_ms = 0;
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fb_event ev = port_event(FB_KIND_LINK_DOWN, 3, "node003");
	struct fbs_obs o;
	struct fbs_decision d;
	CHECK_EQ(fbs_classify(&ev, 5, &c, &o, NULL), FBS_OP_LINK_DOWN);
	CHECK_EQ(fbs_policy_observe(p, "node003", &o, 7 * S), 1);
	CHECK_EQ(decide(p, 7 * S, &d), 1);
	fbs_decision_free(&d);
	fbs_policy_free(p);
}

static void undrain_after_stable_window(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	drain_node003(p);
	CHECK_EQ(hold(p, "node003"), FBS_H_DRAINED);
	CHECK_EQ(feed(p, FB_KIND_LINK_UP, 3, "node003", 2, 10 * S), 1);
	CHECK_EQ(decide(p, 69 * S, &d), 0);
	CHECK_EQ(fbs_policy_next_due(p, 69 * S), 70 * S);
	CHECK_EQ(decide(p, 70 * S, &d), 1);
	CHECK_EQ(d.batches[0].action, FBS_A_UNDRAIN);
	CHECK_STR(d.batches[0].t[0].cause, "link down leaf1/3");
	CHECK_EQ(d.batches[0].t[0].event_id, 1);
	CHECK_EQ(hold(p, "node003"), FBS_H_UNDRAINING);
	settle(p, &d, 70 * S);
	fbs_decision_free(&d);
	CHECK(fbs_policy_node(p, "node003") == NULL);
	fbs_policy_free(p);
}

static void stability_window_resets_on_a_new_condition(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	drain_node003(p);
	feed(p, FB_KIND_LINK_UP, 3, "node003", 2, 10 * S);     /* window starts at 10 s */
	CHECK_EQ(feed(p, FB_KIND_COUNTER_THRESHOLD, 3, "node003", 3, 40 * S), 1);
	CHECK_EQ(feed(p, FB_KIND_COUNTER_CLEARED, 3, "node003", 4, 50 * S), 1); /* again at 50 s */
	CHECK_EQ(decide(p, 70 * S, &d), 0); /* 10 s + 60 s is not enough any more */
	CHECK_EQ(decide(p, 109 * S, &d), 0);
	CHECK_EQ(decide(p, 110 * S, &d), 1);
	CHECK_EQ(d.batches[0].action, FBS_A_UNDRAIN);
	fbs_decision_free(&d);
	fbs_policy_free(p);
}

static void multiple_conditions_on_one_node(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	feed(p, FB_KIND_LINK_DOWN, 3, "node003", 1, 0);
	feed(p, FB_KIND_COUNTER_THRESHOLD, 3, "node003", 2, S);
	CHECK_EQ(fbs_policy_node(p, "node003")->n_conds, 2);
	CHECK_EQ(decide(p, 3 * S, &d), 1);
	/* the oldest condition names the cause */
	CHECK_STR(d.batches[0].reason, "fabric: link down leaf1/3 (EventId 1)");
	settle(p, &d, 3 * S);
	fbs_decision_free(&d);
	feed(p, FB_KIND_LINK_UP, 3, "node003", 3, 10 * S);
	CHECK_EQ(decide(p, 100 * S, &d), 0); /* the counter condition holds it */
	feed(p, FB_KIND_COUNTER_CLEARED, 3, "node003", 4, 100 * S);
	CHECK_EQ(decide(p, 159 * S, &d), 0);
	CHECK_EQ(decide(p, 160 * S, &d), 1);
	fbs_decision_free(&d);
	fbs_policy_free(p);
}

static void flap_clears_with_the_first_link_up_after_its_window(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	struct fb_event ev = port_event(FB_KIND_FLAP, 3, "node003");
	struct fbs_obs o;
	fb_event_add_counter(&ev, FB_CTR_FLAP_COUNT, 3);
	fb_event_add_counter(&ev, FB_CTR_FLAP_WINDOW_S, 30);
	CHECK_EQ(fbs_classify(&ev, 9, &ccfg, &o, NULL), FBS_OP_START);
	CHECK_STR(o.cause, "link flapping leaf1/3");
	CHECK_EQ(o.window_ms, 30 * S);
	feed(p, FB_KIND_LINK_DOWN, 3, "node003", 8, 0);
	fbs_policy_observe(p, "node003", &o, 0);
	decide(p, 2 * S, &d);
	settle(p, &d, 2 * S);
	fbs_decision_free(&d);
	feed(p, FB_KIND_LINK_UP, 3, "node003", 10, 5 * S);  /* inside the window */
	feed(p, FB_KIND_LINK_DOWN, 3, "node003", 11, 6 * S);
	feed(p, FB_KIND_LINK_UP, 3, "node003", 12, 7 * S);
	CHECK_EQ(fbs_policy_node(p, "node003")->n_conds, 1); /* the flap stays */
	feed(p, FB_KIND_LINK_DOWN, 3, "node003", 13, 29 * S);
	CHECK_EQ(decide(p, 40 * S, &d), 0);
	CHECK_EQ(fbs_policy_node(p, "node003")->n_conds, 2);
	feed(p, FB_KIND_LINK_UP, 3, "node003", 14, 41 * S); /* after the window: clears both */
	CHECK_EQ(fbs_policy_node(p, "node003")->n_conds, 0);
	CHECK_EQ(decide(p, 101 * S, &d), 1);
	fbs_decision_free(&d);
	/* a link that came up within the window and stayed up clears at its end */
	feed(p, FB_KIND_LINK_DOWN, 3, "node004", 20, 200 * S);
	fbs_policy_observe(p, "node004", &o, 200 * S);
	feed(p, FB_KIND_LINK_UP, 3, "node004", 21, 201 * S);
	CHECK_EQ(fbs_policy_next_due(p, 201 * S), 202 * S); /* hold-down of the flap */
	decide(p, 202 * S, &d);
	settle(p, &d, 202 * S);
	fbs_decision_free(&d);
	CHECK_EQ(fbs_policy_next_due(p, 203 * S), 230 * S);
	decide(p, 230 * S, &d);
	CHECK_EQ(fbs_policy_node(p, "node004")->n_conds, 0);
	fbs_decision_free(&d);
	fbs_policy_free(p);
}

static void congestion_drains_only_when_high_for_long(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	struct fb_event ev = port_event(FB_KIND_CONGESTION, 3, "node003");
	struct fbs_obs o;
	fb_event_add_counter(&ev, FB_CTR_CONGESTION_PPM, 50000);
	CHECK_EQ(fbs_classify(&ev, 1, &ccfg, &o, NULL), FBS_OP_CLEAR); /* under CongestionPpm */
	ev.counters[0].value = 250000;
	CHECK_EQ(fbs_classify(&ev, 2, &ccfg, &o, NULL), FBS_OP_START);
	CHECK_STR(o.cause, "congestion leaf1/3 250000 ppm");
	CHECK_EQ(o.hold_ms, 60 * S);
	fbs_policy_observe(p, "node003", &o, 0);
	CHECK_EQ(decide(p, 59 * S, &d), 0);
	CHECK_EQ(decide(p, 60 * S, &d), 1);
	CHECK_STR(d.batches[0].reason, "fabric: congestion leaf1/3 250000 ppm (EventId 2)");
	fbs_decision_free(&d);
	fbs_policy_free(p);
}

static void a_foreign_reason_is_not_retried_until_a_new_condition(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	feed(p, FB_KIND_LINK_DOWN, 3, "node003", 1, 0);
	CHECK_EQ(decide(p, 2 * S, &d), 1);
	fbs_decision_free(&d);
	fbs_policy_released(p, "node003", 2 * S); /* Slurm: reason 'maintenance' */
	CHECK_EQ(decide(p, 3 * S, &d), 0);
	CHECK_EQ(fbs_policy_next_due(p, 3 * S), UINT64_MAX);
	feed(p, FB_KIND_COUNTER_THRESHOLD, 3, "node003", 2, 10 * S);
	CHECK_EQ(decide(p, 12 * S, &d), 1); /* asked again */
	fbs_decision_free(&d);
	fbs_policy_free(p);
}

static void isl_and_uplink_events_drain_nothing(void)
{
	struct fb_event ev = port_event(FB_KIND_LINK_DOWN, 3, "node003");
	struct fbs_obs o;
	const char *why;
	ev.link_class = FB_LINK_ISL;
	CHECK_EQ(fbs_classify(&ev, 1, &ccfg, &o, &why), FBS_OP_NONE);
	CHECK(why != NULL);
	ev.link_class = FB_LINK_UPLINK;
	CHECK_EQ(fbs_classify(&ev, 1, &ccfg, &o, &why), FBS_OP_NONE);
	ev.kind = FB_KIND_ACTION;
	ev.link_class = FB_LINK_HOST;
	CHECK_EQ(fbs_classify(&ev, 1, &ccfg, &o, &why), FBS_OP_NONE);
	ev.kind = FB_KIND_LINK_DEGRADED; /* not in DrainOn */
	CHECK_EQ(fbs_classify(&ev, 1, &ccfg, &o, &why), FBS_OP_NONE);
}

/* ---- routing, switches, seeding ----------------------------------------------- */

static const char fabmap_json[] =
	"{\"Fabric\":\"IB\",\"LastEventId\":77,\"Nodes\":{"
	"\"node001\":{\"Ports\":[{\"Technology\":\"IB\",\"Device\":\"mlx5_0\",\"Port\":1,"
	"\"PortGUID\":\"0x0002c90300000001\",\"NodeGUID\":\"0x0002c90300000000\",\"LID\":5,"
	"\"Switch\":\"leaf1\",\"SwitchGUID\":\"0x0008f10400411a08\",\"SwitchPort\":1,"
	"\"LinkState\":\"up\"}],\"Jobs\":[]},"
	"\"node002\":{\"Ports\":[{\"PortGUID\":\"0x0002c90300000002\",\"Switch\":\"leaf1\","
	"\"SwitchGUID\":\"0x0008f10400411a08\",\"SwitchPort\":2,\"LinkState\":\"down\"}]},"
	"\"node003\":{\"Ports\":[{\"PortGUID\":\"0x0002c90300000003\",\"Switch\":\"leaf1\","
	"\"SwitchGUID\":\"0x0008f10400411a08\",\"SwitchPort\":3,\"LinkState\":\"up\"}]},"
	"\"bad,name\":{\"Ports\":[]}},"
	"\"Switches\":{\"0x0008f10400411a08\":{\"Name\":\"leaf1\",\"Reachable\":true,"
	"\"Hosts\":[\"node001\",\"node002\",\"node003\"]}}}";

static void switch_condition_covers_every_host(void)
{
	struct fbs_fabmap m;
	char err[128];
	memset(&m, 0, sizeof(m));
	CHECK_EQ(fbs_fabmap_parse(fabmap_json, sizeof(fabmap_json) - 1, &m, err, sizeof(err)), 0);
	CHECK_EQ(m.n_nodes, 3);
	CHECK_EQ(m.skipped, 1);
	CHECK_EQ(m.last_event_id, 77);
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fb_event ev = port_event(FB_KIND_SWITCH_UNREACHABLE, 0, NULL);
	ev.link_class = FB_LINK_UNKNOWN;
	struct fbs_obs o;
	char nodes[8][FB_NAME_MAX];
	size_t n;
	const char *how;
	CHECK_EQ(fbs_classify(&ev, 90, &ccfg, &o, NULL), FBS_OP_START);
	CHECK_EQ(fbs_route(&ev, &o, NULL, NULL, nodes, 8, &n, &how), FBS_ROUTE_NEED_MAP);
	CHECK_EQ(fbs_route(&ev, &o, NULL, &m, nodes, 8, &n, &how), 0);
	CHECK_EQ(n, 3);
	for (size_t i = 0; i < n; i++)
		CHECK_EQ(fbs_policy_observe(p, nodes[i], &o, 0), 1);
	struct fbs_decision d;
	CHECK_EQ(decide(p, 2 * S, &d), 1);
	CHECK_EQ(d.batches[0].n, 3);
	CHECK_STR(d.batches[0].reason, "fabric: switch leaf1 unreachable (EventId 90)");
	settle(p, &d, 2 * S);
	fbs_decision_free(&d);
	/* reachable again: cleared on every host, whatever the map says now */
	ev.kind = FB_KIND_SWITCH_REACHABLE;
	CHECK_EQ(fbs_classify(&ev, 91, &ccfg, &o, NULL), FBS_OP_CLEAR);
	CHECK_EQ(fbs_policy_observe_all(p, &o, 5 * S), 1);
	CHECK_EQ(decide(p, 65 * S, &d), 1);
	CHECK_EQ(d.batches[0].action, FBS_A_UNDRAIN);
	CHECK_EQ(d.batches[0].n, 3);
	fbs_decision_free(&d);
	fbs_policy_free(p);
	fbs_fabmap_free(&m);
}

/* The broker's root cause (kind switch_degraded, agent fabricbusd): the
 * hosts it left without a path are drained, no map needed, with a reason
 * naming the switch; its degraded hosts only with DrainDegraded; a dead
 * spine that cuts nobody off drains nothing (it clears); switch_recovered
 * undrains only what it drained. */
static struct fb_event root_cause_event(uint8_t kind, const char *no_path, const char *degraded)
{
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	strcpy(ev.agent_id, "fabricbusd");
	ev.kind = kind;
	ev.tech = FB_TECH_IB;
	strcpy(ev.subj.switch_name, "leaf1");
	ev.subj.switch_guid = LEAF1;
	strcpy(ev.text, no_path);
	strcpy(ev.subj.peer_name, degraded);
	return ev;
}

static void root_cause_drains_exactly_its_hosts_without_a_path(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fb_event ev = root_cause_event(FB_KIND_SWITCH_DEGRADED, "node[001-003]", "node[004-005]");
	struct fbs_obs o;
	char nodes[8][FB_NAME_MAX];
	size_t n;
	const char *how, *why;
	CHECK_EQ(fbs_classify(&ev, 300, &ccfg, &o, NULL), FBS_OP_START);
	CHECK_EQ(fbs_route(&ev, &o, NULL, NULL, nodes, 8, &n, &how), 0); /* no map needed */
	CHECK_EQ(n, 3);
	CHECK_STR(nodes[0], "node001");
	CHECK_STR(nodes[2], "node003");
	for (size_t i = 0; i < n; i++)
		CHECK_EQ(fbs_policy_observe(p, nodes[i], &o, 0), 1);
	/* DrainDegraded: the degraded ones too */
	struct fbs_classify_cfg c = ccfg;
	c.drain_degraded = 1;
	struct fbs_obs o2;
	CHECK_EQ(fbs_classify(&ev, 300, &c, &o2, NULL), FBS_OP_START);
	CHECK_EQ(fbs_route(&ev, &o2, NULL, NULL, nodes, 8, &n, &how), 0);
	CHECK_EQ(n, 5);
	CHECK_STR(nodes[4], "node005");
	struct fbs_decision d;
	CHECK_EQ(decide(p, 2 * S, &d), 1);
	CHECK_EQ(d.batches[0].n, 3);
	CHECK_STR(d.batches[0].reason, "fabric: switch leaf1 degraded, hosts without a path (EventId 300)");
	settle(p, &d, 2 * S);
	fbs_decision_free(&d);
	/* An update of the incident (same switch): the same condition, so the
	 * held nodes keep theirs and a new host joins. */
	ev = root_cause_event(FB_KIND_SWITCH_FAILED, "node[001-004]", "");
	CHECK_EQ(fbs_classify(&ev, 310, &ccfg, &o, NULL), FBS_OP_START);
	CHECK_EQ(fbs_route(&ev, &o, NULL, NULL, nodes, 8, &n, &how), 0);
	CHECK_EQ(n, 4);
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ(fbs_policy_observe(p, nodes[i], &o, 3 * S), 0);
	CHECK_EQ(fbs_policy_observe(p, nodes[3], &o, 3 * S), 1);
	/* A link condition on a node the root cause does not hold. */
	CHECK_EQ(feed(p, FB_KIND_LINK_DOWN, 9, "node009", 320, 3 * S), 1);
	CHECK_EQ(decide(p, 5 * S, &d), 2);
	settle(p, &d, 5 * S);
	fbs_decision_free(&d);
	CHECK_EQ(fbs_policy_held(p), 5);
	/* Every cable back: the root cause clears wherever it was. */
	ev = root_cause_event(FB_KIND_SWITCH_RECOVERED, "", "");
	CHECK_EQ(fbs_classify(&ev, 330, &ccfg, &o, NULL), FBS_OP_CLEAR);
	CHECK_EQ(fbs_policy_observe_all(p, &o, 6 * S), 1);
	CHECK_EQ(decide(p, 66 * S, &d), 1);
	CHECK_EQ(d.batches[0].action, FBS_A_UNDRAIN);
	CHECK_EQ(d.batches[0].n, 4); /* node009's link is still down */
	fbs_decision_free(&d);
	/* Nobody cut off (a dead spine, or an update once every host has a
	 * path again): the condition ends wherever it is, nothing drains. */
	ev = root_cause_event(FB_KIND_SWITCH_FAILED, "", "node[001-324]");
	CHECK_EQ(fbs_classify(&ev, 340, &ccfg, &o, &why), FBS_OP_CLEAR);
	CHECK_EQ(fbs_policy_observe_all(p, &o, 70 * S), 0); /* nothing holds it any more */
	/* Not in DrainOn: nothing either. */
	c = ccfg;
	c.drain_on &= ~FBS_C_BIT(FBS_C_ROOT_CAUSE);
	ev = root_cause_event(FB_KIND_SWITCH_DEGRADED, "node[001-003]", "");
	CHECK_EQ(fbs_classify(&ev, 350, &c, &o, &why), FBS_OP_NONE);
	fbs_policy_free(p);
}

static void routing_prefers_the_event_node_then_mapfile_then_the_map(void)
{
	char path[128], err[256];
	snprintf(path, sizeof(path), "%s/map", fbt_dir());
	FILE *f = fopen(path, "w");
	fputs("# port GUIDs and MACs\n0x0002c903000000aa node010\n"
	      "AA-BB-CC-DD-EE-FF node011   # a MAC\n", f);
	fclose(f);
	struct fbs_mapfile *mf = NULL;
	CHECK_EQ(fbs_mapfile_load(path, &mf, err, sizeof(err)), 0);
	struct fbs_fabmap m;
	memset(&m, 0, sizeof(m));
	CHECK_EQ(fbs_fabmap_parse(fabmap_json, sizeof(fabmap_json) - 1, &m, err, sizeof(err)), 0);
	struct fb_event ev = port_event(FB_KIND_LINK_DOWN, 3, NULL);
	struct fbs_obs o;
	char nodes[4][FB_NAME_MAX];
	size_t n;
	const char *how;
	fbs_classify(&ev, 1, &ccfg, &o, NULL);
	fbs_route(&ev, &o, mf, &m, nodes, 4, &n, &how); /* switch port 3 in the map */
	CHECK_EQ(n, 1);
	CHECK_STR(nodes[0], "node003");
	ev.subj.peer_guid = 0x0002c903000000aaull;
	fbs_route(&ev, &o, mf, &m, nodes, 4, &n, &how);
	CHECK_STR(nodes[0], "node010");
	CHECK_STR(how, "MapFile PeerGUID");
	strcpy(ev.subj.node, "node020");
	fbs_route(&ev, &o, mf, &m, nodes, 4, &n, &how);
	CHECK_STR(nodes[0], "node020");
	strcpy(ev.subj.node, "node[1-9]"); /* never handed to Slurm as a hostlist */
	ev.subj.peer_guid = 0;
	ev.subj.port = 9;
	fbs_route(&ev, &o, mf, &m, nodes, 4, &n, &how);
	CHECK_EQ(n, 0);
	ev.link_class = FB_LINK_NODE;
	ev.subj.node[0] = '\0';
	strcpy(ev.subj.addr, "aa:bb:cc:dd:ee:ff");
	fbs_classify(&ev, 1, &ccfg, &o, NULL);
	fbs_route(&ev, &o, mf, &m, nodes, 4, &n, &how);
	CHECK_EQ(n, 1);
	CHECK_STR(nodes[0], "node011");
	fbs_mapfile_free(mf);
	fbs_fabmap_free(&m);
	/* a bad line names file and line */
	f = fopen(path, "w");
	fputs("0x1 node001\n0x1 node002\n", f);
	fclose(f);
	CHECK(fbs_mapfile_load(path, &mf, err, sizeof(err)) == FB_ECONFIG);
	CHECK(strstr(err, ":2: address is mapped twice (first at line 1") != NULL);
}

static void seeding_restores_conditions_from_link_states(void)
{
	struct fbs_fabmap m;
	char err[128];
	memset(&m, 0, sizeof(m));
	CHECK_EQ(fbs_fabmap_parse(fabmap_json, sizeof(fabmap_json) - 1, &m, err, sizeof(err)), 0);
	struct fbs_policy *p = policy(60 * S, 0, 0);
	/* restarted while node001 (link now up) and node003 (adopted) were drained */
	feed(p, FB_KIND_LINK_DOWN, 1, "node001", 5, 0);
	fbs_policy_drained(p, "node001", "fabric: link down leaf1/1 (EventId 5)", 5, 1, 0, 0);
	fbs_policy_drained(p, "node003", "fabric: link down leaf1/3 (EventId 6)", 6, 1, 0, 100 * S);
	CHECK_STR(fbs_policy_node(p, "node003")->cause, "link down leaf1/3");
	CHECK(fbs_map_seed(p, &m, &ccfg, 100 * S) >= 2);
	CHECK_EQ(fbs_policy_node(p, "node001")->n_conds, 0); /* up: stable timer runs */
	CHECK_EQ(fbs_policy_node(p, "node002")->n_conds, 1); /* down: a condition */
	CHECK_STR(fbs_policy_node(p, "node002")->conds[0].cause, "link down leaf1/2");
	CHECK_EQ(fbs_policy_node(p, "node002")->conds[0].event_id, 77);
	struct fbs_decision d;
	CHECK_EQ(decide(p, 102 * S, &d), 1); /* node002 after its hold-down */
	CHECK_STR(d.batches[0].t[0].node, "node002");
	fbs_decision_free(&d);
	CHECK_EQ(decide(p, 160 * S, &d), 1); /* node001 and node003, stable */
	CHECK_EQ(d.batches[0].action, FBS_A_UNDRAIN);
	CHECK_EQ(d.batches[0].n, 2);
	fbs_decision_free(&d);
	fbs_policy_free(p);
	fbs_fabmap_free(&m);
}

/* The broker keys an Ethernet switch (no GUID) by a made-up 0xe7... one;
 * the SNMP agent's live events name it by name: a condition seeded from
 * the map must have the live events' key, or a link_up would never clear
 * it. */
static size_t n_conds(struct fbs_policy *p, const char *node)
{
	const struct fbs_node *n = fbs_policy_node(p, node);
	return n ? n->n_conds : 0; /* a node with nothing held is forgotten */
}

/* opensm's trap 65 through libfabricbus_osm.so names only the host's port
 * GUID (the broker adds the node): keyed by that port, as the node agent's
 * event of the same port, and named for people; two hosts never share it. */
static void sm_trap_keys_the_host_port(void)
{
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_HOST;
	ev.tech = FB_TECH_IB;
	ev.subj.port_guid = 0x100005;
	strcpy(ev.subj.node, "node003");
	struct fbs_obs o, other, nic;
	CHECK_EQ(fbs_classify(&ev, 7, &ccfg, &o, NULL), FBS_OP_LINK_DOWN);
	CHECK_STR(o.key, "pg:0x0000000000100005");
	CHECK_STR(o.cause, "link down node003 port 0x0000000000100005");
	ev.subj.port_guid = 0x100007;
	strcpy(ev.subj.node, "node005");
	CHECK_EQ(fbs_classify(&ev, 8, &ccfg, &other, NULL), FBS_OP_LINK_DOWN);
	CHECK(strcmp(o.key, other.key) != 0);
	ev.link_class = FB_LINK_NODE; /* fabricbus-agent-node, same port */
	ev.subj.port_guid = 0x100005;
	ev.subj.port = 1;
	strcpy(ev.subj.device, "ibsim0");
	CHECK_EQ(fbs_classify(&ev, 9, &ccfg, &nic, NULL), FBS_OP_LINK_DOWN);
	CHECK_STR(nic.key, o.key);
}

static void ethernet_switch_conditions_have_one_key(void)
{
	static const char eth_map[] =
		"{\"Fabric\":\"ETH\",\"LastEventId\":40,\"Nodes\":{"
		"\"node005\":{\"Ports\":[{\"Device\":\"eth0\",\"MAC\":\"02:00:00:00:00:0a\","
		"\"LinkState\":\"%s\",\"Switch\":\"sw1\",\"SwitchGUID\":\"0xe7a1b2c3d4e5f607\","
		"\"SwitchPort\":3,\"Technology\":\"Ethernet\"}]}},"
		"\"Switches\":{\"0xe7a1b2c3d4e5f607\":{\"Name\":\"sw1\",\"Reachable\":%s,"
		"\"Hosts\":[\"node005\"]}}}";
	char json[1024], err[128];
	struct fbs_fabmap m;
	memset(&m, 0, sizeof(m));
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fb_event ev = port_event(FB_KIND_LINK_DOWN, 0, "node005");
	ev.tech = FB_TECH_ETH; /* as fabricbus-agent-snmp: no GUID, ports by ifIndex */
	ev.subj.switch_guid = 0;
	strcpy(ev.subj.switch_name, "sw1");
	strcpy(ev.subj.addr, "10.77.1.2");
	ev.subj.ifindex = 3;
	struct fbs_obs o;
	CHECK_EQ(fbs_classify(&ev, 10, &ccfg, &o, NULL), FBS_OP_LINK_DOWN);
	CHECK_STR(o.key, "sw:sw1/3");
	CHECK_EQ(fbs_policy_observe(p, "node005", &o, 0), 1);
	/* the map says the same: the same condition, not a second one */
	snprintf(json, sizeof(json), eth_map, "down", "true");
	CHECK_EQ(fbs_fabmap_parse(json, strlen(json), &m, err, sizeof(err)), 0);
	CHECK_EQ(m.switches[0].guid, 0); /* known by name */
	fbs_map_seed(p, &m, &ccfg, 1 * S);
	CHECK_EQ(n_conds(p, "node005"), 1);
	CHECK_STR(fbs_policy_node(p, "node005")->conds[0].key, "sw:sw1/3");
	/* the live link_up clears it */
	ev.kind = FB_KIND_LINK_UP;
	CHECK_EQ(fbs_classify(&ev, 11, &ccfg, &o, NULL), FBS_OP_LINK_UP);
	fbs_policy_observe(p, "node005", &o, 2 * S);
	CHECK_EQ(n_conds(p, "node005"), 0);
	/* an unreachable switch seeded from the map is cleared by the live
	 * switch_reachable of the SNMP agent */
	snprintf(json, sizeof(json), eth_map, "up", "false");
	CHECK_EQ(fbs_fabmap_parse(json, strlen(json), &m, err, sizeof(err)), 0);
	fbs_map_seed(p, &m, &ccfg, 3 * S);
	CHECK_EQ(n_conds(p, "node005"), 1);
	ev.kind = FB_KIND_SWITCH_REACHABLE;
	ev.subj.node[0] = '\0';
	CHECK_EQ(fbs_classify(&ev, 12, &ccfg, &o, NULL), FBS_OP_CLEAR);
	CHECK_EQ(fbs_policy_observe_all(p, &o, 4 * S), 1);
	CHECK_EQ(n_conds(p, "node005"), 0);
	fbs_policy_free(p);
	fbs_fabmap_free(&m);
}

/* ---- cap and batching --------------------------------------------------------- */

static void cap_sends_one_event_per_episode(void)
{
	struct fbs_policy *p = policy(60 * S, 2, 0);
	struct fbs_decision d;
	const char *nodes[] = { "node001", "node002", "node003", "node004" };
	for (unsigned i = 0; i < 4; i++)
		feed(p, FB_KIND_LINK_DOWN, i + 1, nodes[i], 10 + i, i); /* oldest first */
	CHECK_EQ(decide(p, 5 * S, &d), 2);
	CHECK_STR(d.batches[0].t[0].node, "node001");
	CHECK_STR(d.batches[1].t[0].node, "node002");
	CHECK_EQ(d.cap_event, 1);
	CHECK_EQ(d.cap_count, 2);
	CHECK_EQ(d.cap_limit, 2);
	CHECK_EQ(d.n_refused, 2);
	CHECK_STR(d.refused[0], "node003");
	settle(p, &d, 5 * S);
	fbs_decision_free(&d);
	CHECK_EQ(decide(p, 6 * S, &d), 0);
	CHECK_EQ(d.cap_event, 0); /* same episode */
	CHECK_EQ(d.n_refused, 2);
	CHECK_EQ(d.n_newly_refused, 0);
	fbs_decision_free(&d);
	CHECK_EQ(fbs_policy_held(p), 2);
	/* node001 recovers: below the cap, node003 takes its place, no event */
	feed(p, FB_KIND_LINK_UP, 1, "node001", 20, 7 * S);
	CHECK_EQ(decide(p, 67 * S, &d), 1);
	settle(p, &d, 67 * S);
	fbs_decision_free(&d);
	CHECK_EQ(decide(p, 67 * S, &d), 1);
	CHECK_STR(d.batches[0].t[0].node, "node003");
	CHECK_EQ(d.cap_event, 1); /* node004 still refused: the count went below and hit again */
	settle(p, &d, 67 * S);
	fbs_decision_free(&d);
	CHECK_EQ(fbs_policy_held(p), 2);
	fbs_policy_free(p);
}

/* Issue 10: 8 hosts behind a failed switch, 4 of them Slurm nodes, cap 6:
 * the others neither count nor appear in a cap event, and once slurmctld
 * knows one of them it is drained like any other. */
static void cap_counts_only_slurm_nodes(void)
{
	struct fbs_policy *p = policy(60 * S, 6, 0);
	struct fbs_decision d;
	const char *slurm[] = { "node004", "node002", "node003", "node001" }; /* any order */
	CHECK_EQ(fbs_policy_set_slurm_nodes(p, slurm, 4), 0);
	for (unsigned i = 1; i <= 8; i++) {
		char node[16];
		snprintf(node, sizeof(node), "node%03u", i);
		feed(p, FB_KIND_LINK_DOWN, i, node, 10 + i, i);
	}
	CHECK_EQ(decide(p, 5 * S, &d), 4);
	CHECK_EQ(d.cap_event, 0);
	CHECK_EQ(d.n_refused, 0);
	CHECK_EQ(d.n_not_slurm, 4);
	CHECK_STR(d.not_slurm[0], "node005");
	CHECK_STR(d.not_slurm[3], "node008");
	settle(p, &d, 5 * S);
	fbs_decision_free(&d);
	CHECK_EQ(fbs_policy_held(p), 4);
	CHECK_EQ(decide(p, 6 * S, &d), 0);
	CHECK_EQ(d.n_not_slurm, 0); /* reported once */
	fbs_decision_free(&d);
	/* node007 joins the cluster: drained now, within the cap */
	const char *more[] = { "node001", "node002", "node003", "node004", "node007" };
	CHECK_EQ(fbs_policy_set_slurm_nodes(p, more, 5), 0);
	CHECK_EQ(decide(p, 7 * S, &d), 1);
	CHECK_STR(d.batches[0].t[0].node, "node007");
	CHECK_EQ(d.cap_event, 0);
	fbs_decision_free(&d);
	fbs_policy_free(p);
}

static void percentage_cap_rounds_up(void)
{
	struct fbs_policy *p = policy(60 * S, 16, 10);
	fbs_policy_set_cap_base(p, 8);
	CHECK_EQ(fbs_policy_limit(p), 1);
	fbs_policy_set_cap_base(p, 100);
	CHECK_EQ(fbs_policy_limit(p), 10);
	fbs_policy_set_cap_base(p, 1000);
	CHECK_EQ(fbs_policy_limit(p), 16);
	fbs_policy_free(p);
	p = policy(60 * S, 0, 0);
	CHECK_EQ(fbs_policy_limit(p), UINT32_MAX);
	fbs_policy_free(p);
}

static void batching_groups_by_reason(void)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	struct fb_event ev = port_event(FB_KIND_SWITCH_UNREACHABLE, 0, NULL);
	struct fbs_obs o;
	fbs_classify(&ev, 50, &ccfg, &o, NULL);
	fbs_policy_observe(p, "node001", &o, 0);
	fbs_policy_observe(p, "node002", &o, 0);
	feed(p, FB_KIND_LINK_DOWN, 7, "node007", 51, 0);
	fbs_policy_observe(p, "node003", &o, 0);
	CHECK_EQ(decide(p, 2 * S, &d), 2);
	size_t sw = d.batches[0].n == 3 ? 0 : 1;
	CHECK_EQ(d.batches[sw].n, 3);
	CHECK_STR(d.batches[sw].reason, "fabric: switch leaf1 unreachable (EventId 50)");
	CHECK_EQ(d.batches[1 - sw].n, 1);
	CHECK_STR(d.batches[1 - sw].reason, "fabric: link down leaf1/7 (EventId 51)");
	settle(p, &d, 2 * S);
	fbs_decision_free(&d);
	/* undrains of different causes go in one batch */
	ev.kind = FB_KIND_SWITCH_REACHABLE;
	fbs_classify(&ev, 52, &ccfg, &o, NULL);
	fbs_policy_observe_all(p, &o, 3 * S);
	feed(p, FB_KIND_LINK_UP, 7, "node007", 53, 3 * S);
	CHECK_EQ(decide(p, 63 * S, &d), 1);
	CHECK_EQ(d.batches[0].action, FBS_A_UNDRAIN);
	CHECK_EQ(d.batches[0].n, 4);
	fbs_decision_free(&d);
	fbs_policy_free(p);
}

/* ---- state file --------------------------------------------------------------- */

static struct fbs_policy *busy_policy(struct fbs_state *st)
{
	struct fbs_policy *p = policy(60 * S, 0, 0);
	struct fbs_decision d;
	feed(p, FB_KIND_LINK_DOWN, 3, "node003", 1234, 0);
	struct fb_event ev = port_event(FB_KIND_FLAP, 3, "node003");
	struct fbs_obs o;
	fbs_classify(&ev, 1235, &ccfg, &o, NULL);
	fbs_policy_observe(p, "node003", &o, S);
	feed(p, FB_KIND_COUNTER_THRESHOLD, 4, "node004", 1236, S);
	decide(p, 3 * S, &d);
	fbs_state_init(st);
	st->last_event_id = 1240;
	for (size_t i = 0; i < d.n_batches; i++)
		fbs_state_push(st, &d.batches[i]);
	fbs_decision_free(&d);
	fbs_policy_drained(p, "node009", "fabric: link down leaf2/9 (EventId 99)", 99, 1700000000,
			   0, 3 * S);
	fbs_policy_set_cap_episode(p, 1);
	return p;
}

static void state_file_round_trip(void)
{
	struct fbs_state st, st2;
	struct fbs_policy *p = busy_policy(&st), *p2 = policy(60 * S, 0, 0);
	char path[128], err[512], *a = NULL, *b = NULL;
	int exists;
	snprintf(path, sizeof(path), "%s/state.json", fbt_dir());
	CHECK_EQ(fbs_state_save(path, &st, p, err, sizeof(err)), 0);
	fbs_state_init(&st2);
	CHECK_EQ(fbs_state_load(path, &st2, p2, &exists, err, sizeof(err)), 0);
	CHECK_EQ(exists, 1);
	CHECK_EQ(st2.last_event_id, 1240);
	CHECK_EQ(st2.n_pending, st.n_pending);
	CHECK_EQ(st2.next_batch_id, st.next_batch_id);
	CHECK_EQ(fbs_policy_cap_episode(p2), 1);
	CHECK_EQ(fbs_policy_node(p2, "node003")->n_conds, 2);
	CHECK_EQ(fbs_policy_node(p2, "node003")->hold, FBS_H_DRAINING);
	CHECK_EQ(fbs_policy_node(p2, "node009")->hold, FBS_H_DRAINED);
	CHECK_EQ(fbs_state_dump(&st, p, 1, &a), 0);
	CHECK_EQ(fbs_state_dump(&st2, p2, 1, &b), 0);
	CHECK_STR(a, b);
	free(a);
	free(b);
	CHECK(access(path, F_OK) == 0);
	snprintf(err, sizeof(err), "%s.tmp", path);
	CHECK(access(err, F_OK) != 0); /* renamed, not left behind */
	fbs_state_free(&st);
	fbs_state_free(&st2);
	fbs_policy_free(p);
	fbs_policy_free(p2);
	/* no file at all: a first start */
	snprintf(path, sizeof(path), "%s/none.json", fbt_dir());
	p2 = policy(60 * S, 0, 0);
	fbs_state_init(&st2);
	CHECK_EQ(fbs_state_load(path, &st2, p2, &exists, err, sizeof(err)), 0);
	CHECK_EQ(exists, 0);
	fbs_policy_free(p2);
}

/* Source=kafka keeps, per partition, the newest message handled; a
 * WebSocket adapter's file does not change (no KafkaOffsets key). */
static void kafka_offsets_round_trip_and_are_absent_without_kafka(void)
{
	struct fbs_state st, st2;
	struct fbs_policy *p = busy_policy(&st), *p2 = policy(60 * S, 0, 0);
	char path[128], err[512], *doc = NULL;
	int exists;
	CHECK_EQ(fbs_state_dump(&st, p, 1, &doc), 0);
	CHECK(strstr(doc, "KafkaOffsets") == NULL);
	free(doc);
	CHECK(fbs_state_koff(&st, "fabric.events", 2, 0) == NULL);
	struct fbs_koff *k = fbs_state_koff(&st, "fabric.events", 2, 1);
	CHECK(k != NULL);
	CHECK_EQ(k->offset, -1);
	k->offset = 41;
	k->event_id = 1240;
	strcpy(k->broker, "00000000deadbeef");
	k = fbs_state_koff(&st, "fabric.netdev", 0, 1);
	k->offset = 7;
	CHECK(fbs_state_koff(&st, "fabric.events", 2, 1) == &st.koffs[0]);
	snprintf(path, sizeof(path), "%s/kstate.json", fbt_dir());
	CHECK_EQ(fbs_state_save(path, &st, p, err, sizeof(err)), 0);
	fbs_state_init(&st2);
	CHECK_EQ(fbs_state_load(path, &st2, p2, &exists, err, sizeof(err)), 0);
	CHECK_EQ(st2.n_koffs, 2);
	k = fbs_state_koff(&st2, "fabric.events", 2, 0);
	CHECK(k != NULL);
	CHECK_EQ(k->offset, 41);
	CHECK_EQ(k->event_id, 1240);
	CHECK_STR(k->broker, "00000000deadbeef");
	CHECK_EQ(fbs_state_koff(&st2, "fabric.netdev", 0, 0)->offset, 7);
	CHECK_EQ(st2.last_event_id, st.last_event_id);
	fbs_state_free(&st2);
	fbs_policy_free(p2);
	/* A damaged entry is refused like any other field. */
	CHECK_EQ(fbs_state_dump(&st, p, 1, &doc), 0);
	char *h = strstr(doc, "\"Partition\": 2"), *bad = malloc(strlen(doc) + 8);
	CHECK(h != NULL && bad != NULL);
	sprintf(bad, "%.*s\"Partition\": -2%s", (int)(h - doc), doc, h + 14);
	free(doc);
	p2 = policy(60 * S, 0, 0);
	fbs_state_init(&st2);
	CHECK(fbs_state_parse(bad, strlen(bad), &st2, p2, err, sizeof(err)) == FB_EMALFORMED);
	CHECK(strstr(err, "KafkaOffsets[0].Partition: expected a non-negative integer") != NULL);
	free(bad);
	fbs_state_free(&st2);
	fbs_policy_free(p2);
	fbs_state_free(&st);
	fbs_policy_free(p);
}

static int load_fails(const char *text, size_t len, const char *needle)
{
	char path[128], err[512];
	snprintf(path, sizeof(path), "%s/bad.json", fbt_dir());
	FILE *f = fopen(path, "w");
	fwrite(text, 1, len, f);
	fclose(f);
	struct fbs_state st;
	struct fbs_policy *p = policy(60 * S, 0, 0);
	int exists;
	fbs_state_init(&st);
	int rc = fbs_state_load(path, &st, p, &exists, err, sizeof(err));
	fbs_state_free(&st);
	fbs_policy_free(p);
	if (rc != FB_ECORRUPT || strncmp(err, path, strlen(path)) != 0 || !strstr(err, needle)) {
		fprintf(stderr, "  rc %d, err: %s\n", rc, err);
		return 0;
	}
	return 1;
}

static void torn_or_garbage_state_file_is_refused(void)
{
	struct fbs_state st;
	struct fbs_policy *p = busy_policy(&st);
	char *doc = NULL;
	CHECK_EQ(fbs_state_dump(&st, p, 1, &doc), 0);
	CHECK(load_fails(doc, strlen(doc) / 2, "not valid JSON (torn or damaged?)"));
	CHECK(load_fails("\x7f" "ELF\x02\x01", 6, "not valid JSON"));
	CHECK(load_fails("", 0, "not valid JSON"));
	CHECK(load_fails("[]", 2, "expected a JSON object"));
	char *bad = strdup(doc), *h = strstr(bad, "\"drained\"");
	CHECK(h != NULL);
	memcpy(h, "\"drainex\"", 9);
	CHECK(load_fails(bad, strlen(bad), "Nodes[2].Hold: expected none, draining"));
	free(bad);
	bad = strdup(doc);
	h = strstr(bad, "\"flap\"");
	memcpy(h, "\"flop\"", 6);
	CHECK(load_fails(bad, strlen(bad), "Nodes[0].Conditions[1].Type: unknown condition type"));
	free(bad);
	free(doc);
	fbs_state_free(&st);
	fbs_policy_free(p);
}

/* The adapter refuses to start on such a file, and says which file. */
static void adapter_refuses_to_start_on_a_torn_state_file(void)
{
	const char *bin = getenv("FBS_BIN");
	if (!bin || access(bin, X_OK) != 0) {
		fprintf(stderr, "  (skipped: FBS_BIN not set, fabricbus-slurm not built)\n");
		return;
	}
	char path[128], cmd[1024], out[2048];
	snprintf(path, sizeof(path), "%s/torn.json", fbt_dir());
	FILE *f = fopen(path, "w");
	fputs("{\"Version\":1,\"LastEventId\":12,\"Nodes\":[{\"Na", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' -o StateFile=%s -o Broker=127.0.0.1:9 "
		 "-o BrokerAgent=127.0.0.1:10 2>&1; echo \"exit=$?\"", bin, path);
	FILE *p = popen(cmd, "r");
	CHECK(p != NULL);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	if (!strstr(out, "exit=1") || !strstr(out, path) || !strstr(out, "refusing to start"))
		fprintf(stderr, "  output: %s\n", out);
	CHECK(strstr(out, "exit=1") != NULL);
	CHECK(strstr(out, path) != NULL);
	CHECK(strstr(out, "refusing to start") != NULL);
	f = fopen(path, "r");
	CHECK(f != NULL); /* left where it was, for the admin */
	fclose(f);
}

/* ---- config and events -------------------------------------------------------- */

static void config_defaults_and_errors_name_the_line(void)
{
	struct fbs_config c;
	char path[128], err[512];
	fbs_config_defaults(&c);
	CHECK_EQ(fbs_config_check(&c, err, sizeof(err)), 0);
	CHECK_EQ(c.broker_port, 7412);
	CHECK_EQ(c.agent_port, 7411);
	CHECK_EQ(c.hold_ms, 2 * S);
	CHECK_EQ(c.stable_ms, 60 * S);
	CHECK_EQ(c.drain_on, FBS_DRAIN_ON_DEFAULT);
	CHECK_EQ(c.max_drain_nodes, 16);
	CHECK_EQ(c.max_drain_percent, 10);
	CHECK_STR(c.reason_prefix, "fabric:");
	CHECK_STR(c.state_file, "/var/lib/fabricbus/slurm-adapter.json");
	snprintf(path, sizeof(path), "%s/slurm.conf", fbt_dir());
	FILE *f = fopen(path, "w");
	fputs("# adapter\nHoldDown = 500ms\nstablefor=1m  # comment\nDrainOn=link_down, congestion\n"
	      "DryRun=yes\nMaxDrainNodes=0\n", f);
	fclose(f);
	CHECK_EQ(fbs_config_load_file(&c, path, err, sizeof(err)), 0);
	CHECK_EQ(c.hold_ms, 500);
	CHECK_EQ(c.stable_ms, 60 * S);
	CHECK_EQ(c.drain_on, FBS_C_BIT(FBS_C_LINK_DOWN) | FBS_C_BIT(FBS_C_CONGESTION));
	CHECK_EQ(c.dry_run, 1);
	f = fopen(path, "w");
	fputs("HoldDown=2s\nDrainOn=link_down,melting\n", f);
	fclose(f);
	CHECK(fbs_config_load_file(&c, path, err, sizeof(err)) == FB_ECONFIG);
	CHECK(strstr(err, ":2: DrainOn: bad value 'link_down,melting': 'melting' is not one of") != NULL);
	f = fopen(path, "w");
	fputs("HoldDown=2s\nholddown=3s\n", f);
	fclose(f);
	CHECK(fbs_config_load_file(&c, path, err, sizeof(err)) == FB_ECONFIG);
	CHECK(strstr(err, ":2: HoldDown is set twice (first at line 1)") != NULL);
	f = fopen(path, "w");
	fputs("Bogus=1\n", f);
	fclose(f);
	CHECK(fbs_config_load_file(&c, path, err, sizeof(err)) == FB_ECONFIG);
	CHECK(strstr(err, ":1: unknown key 'Bogus'") != NULL);
	CHECK(fbs_config_set(&c, "ReasonPrefix=", err, sizeof(err)) == FB_ECONFIG);
	CHECK(strncmp(err, "-o ReasonPrefix: bad value", 26) == 0);
	CHECK(fbs_config_set(&c, "StableFor=soon", err, sizeof(err)) == FB_ECONFIG);
	CHECK(strncmp(err, "-o StableFor: bad value 'soon': expected a duration", 50) == 0);
	CHECK(fbs_config_set(&c, "MaxDrainPercent=101", err, sizeof(err)) == FB_ECONFIG);
	CHECK(fbs_config_set(&c, "Nope=1", err, sizeof(err)) == FB_ECONFIG);
	CHECK(strncmp(err, "-o Nope: unknown key", 20) == 0);
	CHECK_EQ(fbs_config_set(&c, "Broker=[::1]:8000", err, sizeof(err)), 0);
	CHECK_STR(c.broker_host, "::1");
	CHECK(fbs_config_set(&c, "BrokerAgent=[::1]:8000", err, sizeof(err)) == 0);
	CHECK(fbs_config_check(&c, err, sizeof(err)) == FB_ECONFIG);
}

static void kafka_source_keys_are_checked(void)
{
	struct fbs_config c;
	char path[128], err[512], buf[256];
	const char *t[FBS_KAFKA_TOPICS_MAX];
	fbs_config_defaults(&c);
	CHECK_EQ(c.source, FBS_SRC_WEBSOCKET);
	CHECK_STR(c.kafka_group, "fabricbus-slurm");
	CHECK_STR(c.kafka_topics, "fabric.events,fabric.netdev,fabric.resource,fabric.other");
	CHECK_EQ(fbs_kafka_topics_split(c.kafka_topics, buf, sizeof(buf), t, FBS_KAFKA_TOPICS_MAX), 4);
	CHECK_STR(t[3], "fabric.other");
	CHECK_EQ(fbs_config_set(&c, "Source=kafka", err, sizeof(err)), 0);
	CHECK(fbs_config_check(&c, err, sizeof(err)) == FB_ECONFIG);
	CHECK(strstr(err, "KafkaBrokers") != NULL);
	CHECK_EQ(fbs_config_set(&c, "KafkaBrokers=k1:9092, k2:9092", err, sizeof(err)), 0);
	CHECK_EQ(fbs_config_check(&c, err, sizeof(err)), 0);
	CHECK(fbs_config_set(&c, "KafkaBrokers=k1", err, sizeof(err)) == FB_ECONFIG);
	CHECK(fbs_config_set(&c, "Source=kafak", err, sizeof(err)) == FB_ECONFIG);
	CHECK(fbs_config_set(&c, "KafkaGroup=two words", err, sizeof(err)) == FB_ECONFIG);
	CHECK_EQ(fbs_config_set(&c, "KafkaTopics=fabric.events, ops.fabric", err, sizeof(err)), 0);
	CHECK_STR(c.kafka_topics, "fabric.events,ops.fabric");
	CHECK(fbs_config_set(&c, "KafkaTopics=a,a", err, sizeof(err)) == FB_ECONFIG);
	CHECK(fbs_config_set(&c, "KafkaTopics=bad topic!", err, sizeof(err)) == FB_ECONFIG);
	CHECK(fbs_config_set(&c, "KafkaTopics=", err, sizeof(err)) == FB_ECONFIG);
	CHECK_EQ(fbs_config_set(&c, "kafka.session.timeout.ms=6000", err, sizeof(err)), 0);
	CHECK_EQ(fbs_config_set(&c, "kafka.session.timeout.ms=7000", err, sizeof(err)), 0);
	CHECK_EQ(c.n_kafka_props, 1); /* -o replaces */
	CHECK_STR(c.kafka_props[0].value, "7000");
	CHECK(fbs_config_set(&c, "kafka.no.such.property=1", err, sizeof(err)) == FB_ECONFIG);
	CHECK(strncmp(err, "-o kafka.no.such.property: ", 27) == 0);
	CHECK(fbs_config_set(&c, "kafka.enable.auto.commit=true", err, sizeof(err)) == FB_ECONFIG);
	CHECK(fbs_config_set(&c, "kafka.group.id=x", err, sizeof(err)) == FB_ECONFIG);
	CHECK(strstr(err, "KafkaGroup") != NULL);
	snprintf(path, sizeof(path), "%s/kafka.conf", fbt_dir());
	FILE *f = fopen(path, "w");
	fputs("Source=kafka\nKafkaBrokers=k1:9092\nkafka.fetch.wait.max.ms=100\n"
	      "kafka.fetch.wait.max.ms=200\n", f);
	fclose(f);
	fbs_config_defaults(&c);
	CHECK(fbs_config_load_file(&c, path, err, sizeof(err)) == FB_ECONFIG);
	CHECK(strstr(err, ":4: kafka.fetch.wait.max.ms is set twice") != NULL);
}

static void published_texts_are_exact(void)
{
	struct fb_event ev;
	fbs_pub_drain(&ev, "node003", "fabric: link down leaf1/3 (EventId 1234)", 1234, "12,13", 0);
	CHECK_EQ(ev.kind, FB_KIND_ACTION);
	CHECK_EQ(ev.severity, FB_SEV_WARNING);
	CHECK_STR(ev.subj.node, "node003");
	CHECK_STR(ev.text, "drain: fabric: link down leaf1/3 (EventId 1234)");
	CHECK_STR(ev.jobs, "12,13");
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_CAUSE_EVENT_ID, 0), 1234);
	fbs_pub_undrain(&ev, "node003", "link down leaf1/3", 60 * S, 1234, "", 0);
	CHECK_EQ(ev.severity, FB_SEV_OK);
	CHECK_STR(ev.text, "undrain: link down leaf1/3 stable for 60s");
	fbs_pub_skip(&ev, "node003", "maintenance", 1234, NULL, 1);
	CHECK_STR(ev.text, "dry-run skip: node003 keeps reason 'maintenance'");
	fbs_pub_cap(&ev, 16, 16, "node[017-020]", 4, 1234, 0);
	CHECK_EQ(ev.severity, FB_SEV_CRITICAL);
	CHECK_STR(ev.subj.node, "");
	CHECK_STR(ev.text, "cap: 16 nodes drained by fabricbus, limit 16; not draining node[017-020]");
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_NODE_COUNT, 0), 4);
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_NODE_LIMIT, 0), 16);
	fbs_pub_cap(&ev, 1, 1, "node002", 1, 1234, 0);
	CHECK_STR(ev.text, "cap: 1 node drained by fabricbus, limit 1; not draining node002");
	char jobs[FB_JOBS_MAX] = "";
	int added = 0;
	while (fbs_jobs_add(jobs, 1234567) == 0)
		added++;
	CHECK_EQ(added, 12); /* 12 * 8 - 1 = 95 bytes, the most a jobs list holds */
	CHECK_EQ(fb_event_jobs_check(jobs, strlen(jobs), NULL), 0);
	char reason[200];
	memset(reason, 'x', sizeof(reason) - 1);
	reason[sizeof(reason) - 1] = '\0';
	fbs_pub_drain(&ev, "node003", reason, 1, NULL, 0);
	CHECK_EQ(strlen(ev.text), FB_TEXT_MAX - 1);
	CHECK(strcmp(ev.text + FB_TEXT_MAX - 4, "...") == 0);
	const char *why;
	ev.seq = 1;
	CHECK_EQ(fb_event_check(&ev, &why), 0);
}

int main(void)
{
	fb_log_init("test_slurm_policy", 0, FB_LOG_ERR);
	RUN(hold_down_is_respected);
	RUN(hold_down_is_cancelled_by_a_quick_clear);
	RUN(hold_down_zero_drains_at_once);
	RUN(undrain_after_stable_window);
	RUN(stability_window_resets_on_a_new_condition);
	RUN(multiple_conditions_on_one_node);
	RUN(flap_clears_with_the_first_link_up_after_its_window);
	RUN(congestion_drains_only_when_high_for_long);
	RUN(a_foreign_reason_is_not_retried_until_a_new_condition);
	RUN(isl_and_uplink_events_drain_nothing);
	RUN(switch_condition_covers_every_host);
	RUN(root_cause_drains_exactly_its_hosts_without_a_path);
	RUN(routing_prefers_the_event_node_then_mapfile_then_the_map);
	RUN(seeding_restores_conditions_from_link_states);
	RUN(sm_trap_keys_the_host_port);
	RUN(ethernet_switch_conditions_have_one_key);
	RUN(cap_sends_one_event_per_episode);
	RUN(cap_counts_only_slurm_nodes);
	RUN(percentage_cap_rounds_up);
	RUN(batching_groups_by_reason);
	RUN(state_file_round_trip);
	RUN(kafka_offsets_round_trip_and_are_absent_without_kafka);
	RUN(torn_or_garbage_state_file_is_refused);
	RUN(adapter_refuses_to_start_on_a_torn_state_file);
	RUN(config_defaults_and_errors_name_the_line);
	RUN(kafka_source_keys_are_checked);
	RUN(published_texts_are_exact);
	return TEST_DONE();
}

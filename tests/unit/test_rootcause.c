/* test_rootcause.c - broker/fabric/rootcause.c on fattree46's shape (4
 * leaves of 10 hosts, 2 spines, 2 cables from each leaf to each spine; the
 * ibsim file's port numbers), fed the events the IB agent sends, on an
 * explicit clock: a dead spine is one SwitchFailed with no host cut off; a
 * leaf without uplinks is one SwitchDegraded with exactly its 10 hosts
 * without a path; a single cable is no switch's story; reports a cause does
 * not explain stay for the next window. The verdict as the broker's event
 * (rc_event.c), and the incident that a second verdict on the same switch
 * updates and the switch's cables coming back close (incident.c). A
 * cable-down report of a kind outside FB_STORM_KINDS would be skipped by the
 * output (storm.c): no such kind is ever observed. */
#include "fb_test.h"
#include "fb_test_fabric.h"
#include "incident.h"
#include "inventory.h"
#include "rc_event.h"
#include "rootcause.h"
#include "storm.h"
#include "topology.h"

#define LEAF(l) (0x0008f10400500000ULL + (l))
#define SPINE(s) (0x0008f10400600000ULL + (s))
#define MS 1000000ULL

static char leaf_name[5][8], spine_name[3][8];

/* The leaf port of uplink u (0..3) of a leaf, and the spine port it meets. */
static unsigned up_port(int u) { return 33 + (unsigned)u; }
static int up_spine(int u) { return u < 2 ? 1 : 2; }
static unsigned spine_port(int l, int u) { return (unsigned)(2 * (l - 1) + 1 + (u % 2)); }

static struct fb_topology *fattree46(void)
{
	struct fb_topology *t = fb_topology_new(0, 0);
	if (!t)
		return NULL;
	for (int l = 1; l <= 4; l++) {
		snprintf(leaf_name[l], sizeof(leaf_name[l]), "leaf%d", l);
		for (int h = 1; h <= 10; h++) {
			struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF(l), leaf_name[l], (unsigned)h,
							10 * (l - 1) + h, 4, 5);
			fb_topology_learn(t, &ev);
		}
	}
	for (int s = 1; s <= 2; s++)
		snprintf(spine_name[s], sizeof(spine_name[s]), "spine%d", s);
	for (int l = 1; l <= 4; l++)
		for (int u = 0; u < 4; u++) {
			int s = up_spine(u);
			struct fb_event ev = isl_event(FB_KIND_TOPOLOGY, LEAF(l), leaf_name[l], up_port(u), SPINE(s),
						       spine_port(l, u), 4);
			fb_topology_learn(t, &ev);
			ev = isl_event(FB_KIND_TOPOLOGY, SPINE(s), spine_name[s], spine_port(l, u), LEAF(l),
				       up_port(u), 4);
			fb_topology_learn(t, &ev);
		}
	return t;
}

/* One report: learned by the topology first (as ingest does), then seen. */
static int report(struct fb_rootcause *rc, struct fb_topology *t, struct fb_event ev, uint64_t id, uint64_t now)
{
	fb_topology_learn(t, &ev);
	return fb_rootcause_observe(rc, t, &ev, id, now);
}

/* The verdict's cause, its cables and what it explains. */
#define CHECK_VERDICT(v, want_kind, name, n_cables, n_down, n_symptoms_, no_path_, degraded_) \
	do {                                                                                 \
		CHECK_EQ((v).kind, want_kind);                                               \
		CHECK_STR((v).switch_name, name);                                            \
		CHECK_EQ((v).cables, n_cables);                                              \
		CHECK_EQ((v).cables_down, n_down);                                           \
		CHECK_EQ((v).n_symptoms, n_symptoms_);                                       \
		CHECK_EQ((v).blast.no_path, no_path_);                                       \
		CHECK_EQ((v).blast.degraded, degraded_);                                     \
	} while (0)

static void a_dead_spine_is_one_switch_failed_and_cuts_off_nobody(void)
{
	struct fb_topology *t = fattree46();
	struct fb_rootcause *rc = fb_rootcause_new(500 * MS);
	CHECK(t && rc);
	uint64_t id = 100, now = 1000 * MS;
	/* Both ends of every spine1 cable go down: 16 reports in 40 ms. */
	for (int l = 1; l <= 4; l++)
		for (int u = 0; u < 2; u++) {
			CHECK_EQ(report(rc, t, isl_event(FB_KIND_LINK_DOWN, SPINE(1), "spine1", spine_port(l, u),
							 LEAF(l), up_port(u), 1), ++id, now), 1);
			CHECK_EQ(report(rc, t, isl_event(FB_KIND_LINK_DOWN, LEAF(l), leaf_name[l], up_port(u),
							 SPINE(1), spine_port(l, u), 1), ++id, now + 5 * MS), 1);
			now += 5 * MS;
		}
	struct fb_rc_verdict v;
	/* The window closes a quiet period after the last report (1040 ms). */
	CHECK_EQ(fb_rootcause_deadline(rc), 1540 * MS);
	CHECK_EQ(fb_rootcause_decide(rc, t, NULL, 1539 * MS, &v), 0);
	CHECK_EQ(fb_rootcause_decide(rc, t, NULL, 1540 * MS, &v), 1);
	CHECK_VERDICT(v, FB_RC_SWITCH_FAILED, "spine1", 8, 8, 16, 0, 40);
	CHECK_EQ(v.symptoms[0], 101);
	CHECK_EQ(v.others, 0);
	CHECK_EQ(v.n_degraded, 40);
	fb_rc_verdict_free(&v);
	CHECK_EQ(fb_rootcause_deadline(rc), 0);
	CHECK_EQ(fb_rootcause_decide(rc, t, NULL, 9000 * MS, &v), 0);
	fb_rootcause_free(rc);
	fb_topology_free(t);
}

static void a_leaf_without_uplinks_is_degraded_with_exactly_its_hosts_cut_off(void)
{
	struct fb_topology *t = fattree46();
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_rootcause *rc = fb_rootcause_new(0);
	CHECK(t && inv && rc);
	for (int k = 21; k <= 30; k++) { /* leaf3's hosts have node agents */
		struct fb_event ev = inventory_event(k);
		fb_inventory_learn(inv, &ev);
	}
	uint64_t id = 0;
	for (int u = 0; u < 4; u++) {
		int s = up_spine(u);
		CHECK_EQ(report(rc, t, isl_event(FB_KIND_PORT_STATE, SPINE(s), spine_name[s], spine_port(3, u),
						 LEAF(3), up_port(u), 1), ++id, 0), 1);
		CHECK_EQ(report(rc, t, isl_event(FB_KIND_LINK_DOWN, LEAF(3), "leaf3", up_port(u), SPINE(s),
						 spine_port(3, u), 1), ++id, MS), 1);
	}
	/* Not reports: a link up, a counter, a port with no peer. */
	struct fb_event ev = isl_event(FB_KIND_LINK_UP, LEAF(1), "leaf1", 33, SPINE(1), 1, 4);
	CHECK_EQ(report(rc, t, ev, ++id, MS), 0);
	ev = sw_event(FB_KIND_LINK_DOWN, LEAF(1), "leaf1", 20);
	CHECK_EQ(report(rc, t, ev, ++id, MS), 0);
	struct fb_rc_verdict v;
	CHECK_EQ(fb_rootcause_decide(rc, t, inv, 500 * MS, &v), 0);
	CHECK_EQ(fb_rootcause_decide(rc, t, inv, 501 * MS, &v), 1);
	CHECK_VERDICT(v, FB_RC_SWITCH_DEGRADED, "leaf3", 14, 4, 8, 10, 0);
	CHECK_EQ(v.n_no_path, 10);
	CHECK_STR(v.no_path[0], "node021");
	CHECK_STR(v.no_path[9], "node030");
	fb_rc_verdict_free(&v);
	fb_rootcause_free(rc);
	fb_inventory_free(inv);
	fb_topology_free(t);
}

/* Reports whose cables are all up again when the window closes (left over
 * from a fault that is over, or a blip): no root cause with nothing down.
 * Seen in CI: two spine2 reports left from a leaf's cut-off gave a
 * SwitchDegraded spine2 with 0 of 8 cables down. */
static void a_switch_with_every_cable_back_gets_no_verdict(void)
{
	struct fb_topology *t = fattree46();
	struct fb_rootcause *rc = fb_rootcause_new(500 * MS);
	CHECK(t && rc);
	uint64_t id = 0;
	for (int l = 1; l <= 2; l++) /* two spine2 cables down ... */
		CHECK_EQ(report(rc, t, isl_event(FB_KIND_LINK_DOWN, SPINE(2), "spine2", spine_port(l, 2),
						 LEAF(l), up_port(2), 1), ++id, 0), 1);
	for (int l = 1; l <= 2; l++) { /* ... and back before the window closes */
		struct fb_event up = isl_event(FB_KIND_LINK_UP, SPINE(2), "spine2", spine_port(l, 2), LEAF(l),
					       up_port(2), 4);
		CHECK_EQ(report(rc, t, up, ++id, MS), 0);
	}
	struct fb_rc_verdict v;
	CHECK_EQ(fb_rootcause_decide(rc, t, NULL, 600 * MS, &v), 1);
	CHECK_EQ(v.kind, FB_RC_NONE);
	CHECK_EQ(v.cables_down, 0);
	CHECK_EQ(v.others, 0); /* the stale reports left the window */
	fb_rc_verdict_free(&v);
	CHECK_EQ(fb_rootcause_deadline(rc), 0);
	fb_rootcause_free(rc);
	fb_topology_free(t);
}

static void one_cable_is_no_switch_s_story_and_leftovers_wait(void)
{
	struct fb_topology *t = fattree46();
	struct fb_rootcause *rc = fb_rootcause_new(500 * MS);
	CHECK(t && rc);
	/* One host cable, reported once: nothing in common to find. */
	CHECK_EQ(report(rc, t, host_event(FB_KIND_LINK_DOWN, LEAF(2), "leaf2", 4, 14, 1, 2), 1, 0), 1);
	struct fb_rc_verdict v;
	CHECK_EQ(fb_rootcause_decide(rc, t, NULL, 500 * MS, &v), 1);
	CHECK_EQ(v.kind, FB_RC_NONE);
	CHECK_EQ(v.others, 1);
	fb_rc_verdict_free(&v);
	CHECK_EQ(fb_rootcause_deadline(rc), 0);
	/* spine2 dies while a host cable on leaf4 drops: spine2 explains its 8
	 * reports; the host's stays, in a new window, and is then no one's. */
	uint64_t id = 10;
	for (int l = 1; l <= 4; l++)
		for (int u = 2; u < 4; u++)
			CHECK_EQ(report(rc, t, isl_event(FB_KIND_LINK_DOWN, SPINE(2), "spine2", spine_port(l, u),
							 LEAF(l), up_port(u), 1), ++id, 1000 * MS), 1);
	CHECK_EQ(report(rc, t, host_event(FB_KIND_LINK_DOWN, LEAF(4), "leaf4", 7, 37, 1, 2), 99, 1001 * MS), 1);
	CHECK_EQ(fb_rootcause_decide(rc, t, NULL, 1501 * MS, &v), 1);
	/* No path: h14 (earlier) and h37, by their own cables. */
	CHECK_VERDICT(v, FB_RC_SWITCH_FAILED, "spine2", 8, 8, 8, 2, 38);
	CHECK_EQ(v.others, 1);
	fb_rc_verdict_free(&v);
	CHECK_EQ(fb_rootcause_deadline(rc), 2001 * MS);
	CHECK_EQ(fb_rootcause_decide(rc, t, NULL, 2001 * MS, &v), 1);
	CHECK_EQ(v.kind, FB_RC_NONE);
	CHECK_EQ(v.others, 1);
	fb_rc_verdict_free(&v);
	fb_rootcause_free(rc);
	fb_topology_free(t);
}

/* A dying spine's reports that trickle in slower than the quiet period
 * would split into two verdicts; spread within it, they stay one. The window
 * still closes after 8 quiet periods however long the drizzle lasts. */
static void reports_that_keep_coming_keep_the_window_open_up_to_a_cap(void)
{
	struct fb_topology *t = fattree46();
	struct fb_rootcause *rc = fb_rootcause_new(500 * MS);
	CHECK(t && rc);
	uint64_t id = 0, now = 0;
	for (int l = 1; l <= 4; l++)
		for (int u = 0; u < 2; u++) {
			CHECK_EQ(report(rc, t, isl_event(FB_KIND_LINK_DOWN, SPINE(1), "spine1", spine_port(l, u),
							 LEAF(l), up_port(u), 1), ++id, now), 1);
			struct fb_rc_verdict none;
			CHECK_EQ(fb_rootcause_decide(rc, t, NULL, now + 499 * MS, &none), 0);
			now += 450 * MS;
		}
	struct fb_rc_verdict v;
	CHECK_EQ(fb_rootcause_deadline(rc), 3150 * MS + 500 * MS);
	CHECK_EQ(fb_rootcause_decide(rc, t, NULL, 3650 * MS, &v), 1);
	CHECK_VERDICT(v, FB_RC_SWITCH_FAILED, "spine1", 8, 8, 8, 0, 40);
	fb_rc_verdict_free(&v);
	/* A report every 400 ms forever: decided at 8 x 500 ms after the first. */
	now = 10000 * MS;
	for (int i = 0; i < 12; i++, now += 400 * MS)
		CHECK_EQ(report(rc, t, isl_event(FB_KIND_LINK_DOWN, SPINE(2), "spine2", spine_port(1 + i % 4, 2 + i / 4 % 2),
						 LEAF(1 + i % 4), up_port(2 + i / 4 % 2), 1), ++id, now), 1);
	CHECK_EQ(fb_rootcause_deadline(rc), 14000 * MS);
	fb_rootcause_free(rc);
	fb_topology_free(t);
}

/* leaf3 loses its 4 uplinks: the event names it, cuts off node[021-030],
 * lists the 8 symptoms, opens an incident; 2 more reports later are an
 * update of it (same group); the cables back close it. */
static void a_verdict_becomes_one_incident_event_and_updates_keep_its_group(void)
{
	struct fb_topology *t = fattree46();
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_rootcause *rc = fb_rootcause_new(0);
	struct fb_incidents *in = fb_incidents_new(0);
	CHECK(t && inv && rc && in);
	for (int k = 21; k <= 30; k++) {
		struct fb_event ev = inventory_event(k);
		fb_inventory_learn(inv, &ev);
	}
	uint64_t id = 1000;
	for (int u = 0; u < 3; u++) {
		int s = up_spine(u);
		report(rc, t, isl_event(FB_KIND_LINK_DOWN, LEAF(3), "leaf3", up_port(u), SPINE(s), spine_port(3, u), 1),
		       ++id, 0);
		id += 2; /* other agents' events in between */
	}
	struct fb_rc_verdict v;
	CHECK_EQ(fb_rootcause_decide(rc, t, inv, 600 * MS, &v), 1);
	CHECK_VERDICT(v, FB_RC_SWITCH_DEGRADED, "leaf3", 14, 3, 3, 0, 10);
	const struct fb_incident *inc = fb_incidents_verdict(in, v.switch_guid, 2000, 600 * MS, v.n_no_path);
	CHECK_EQ(inc->group, 2000);
	CHECK_EQ(inc->updates, 0);
	struct fb_event ev;
	CHECK_EQ(fb_rc_event_fill(&v, inc, &ev), 0);
	ev.seq = 1; /* the broker's emit numbers it */
	const char *why = NULL;
	CHECK_EQ(fb_event_check(&ev, &why), 0);
	CHECK_EQ(ev.kind, FB_KIND_SWITCH_DEGRADED);
	CHECK_EQ(ev.severity, FB_SEV_WARNING); /* nobody cut off yet: one uplink left */
	CHECK_STR(ev.agent_id, FB_BROKER_AGENT_ID);
	CHECK_STR(ev.subj.switch_name, "leaf3");
	CHECK_EQ(ev.subj.switch_guid, LEAF(3));
	CHECK_STR(ev.text, "");
	CHECK_STR(ev.subj.peer_name, "node[021-030]");
	CHECK_STR(ev.subj.device, "1001,1004,1007");
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_EVENT_GROUP_ID, 0), 2000);
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_SYMPTOMS, 0), 3);
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_FIRST_SYMPTOM_ID, 0), 1001);
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_LAST_SYMPTOM_ID, 0), 1007);
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_HOSTS_DEGRADED, 0), 10);
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_LISTS_CUT, 0), 0);
	fb_rc_verdict_free(&v);

	/* The last uplink trickles in after the window closed: the same
	 * incident, now with leaf3's hosts cut off. */
	report(rc, t, isl_event(FB_KIND_LINK_DOWN, LEAF(3), "leaf3", up_port(3), SPINE(2), spine_port(3, 3), 1),
	       3001, 2000 * MS);
	report(rc, t, isl_event(FB_KIND_LINK_DOWN, SPINE(2), "spine2", spine_port(3, 3), LEAF(3), up_port(3), 1),
	       3002, 2000 * MS);
	/* Two reports of one cable: spine2 and leaf3 both touch it once; the
	 * tie goes to the larger share of its own cables. */
	CHECK_EQ(fb_rootcause_decide(rc, t, inv, 2600 * MS, &v), 1);
	CHECK_EQ(v.kind, FB_RC_NONE); /* one cable: no switch's story on its own */
	fb_rc_verdict_free(&v);
	size_t cables, down;
	CHECK_EQ(fb_rootcause_switch_cables(t, inv, LEAF(3), &cables, &down), 0);
	CHECK_EQ(cables, 14);
	CHECK_EQ(down, 4);
	inc = fb_incidents_verdict(in, LEAF(3), 4000, 2600 * MS, 10);
	CHECK_EQ(inc->group, 2000);
	CHECK_EQ(inc->updates, 1);
	CHECK_EQ(fb_incidents_count(in), 1);

	/* Weighed again while it is open: all 10 hosts cut off. */
	CHECK_EQ(fb_rootcause_reweigh(t, inv, LEAF(3), &v), 1);
	CHECK_VERDICT(v, FB_RC_SWITCH_DEGRADED, "leaf3", 14, 4, 0, 10, 0);
	fb_rc_verdict_free(&v);
	/* Every uplink back: the incident closes with a switch_recovered; one
	 * back already gives every host its path (an update with nobody). */
	for (int u = 0; u < 4; u++) {
		int s = up_spine(u);
		struct fb_event up = isl_event(FB_KIND_LINK_UP, LEAF(3), "leaf3", up_port(u), SPINE(s), spine_port(3, u), 4);
		fb_topology_learn(t, &up);
		/* a cable is down while either end says so */
		up = isl_event(FB_KIND_LINK_UP, SPINE(s), spine_name[s], spine_port(3, u), LEAF(3), up_port(u), 4);
		fb_topology_learn(t, &up);
		CHECK_EQ(fb_rootcause_switch_cables(t, inv, LEAF(3), &cables, &down), 0);
		CHECK_EQ(down, (size_t)(3 - u));
		CHECK_EQ(fb_rootcause_reweigh(t, inv, LEAF(3), &v), 1);
		CHECK_EQ(v.cables_down, (size_t)(3 - u));
		CHECK_EQ(v.n_no_path, 0);
		CHECK_EQ(v.n_degraded, u < 3 ? 10 : 0);
		fb_rc_verdict_free(&v);
	}
	CHECK_EQ(fb_rootcause_reweigh(t, inv, 0x42, &v), 0); /* unknown switch */
	struct fb_incident done;
	CHECK_EQ(fb_incidents_close(in, LEAF(3), &done), 1);
	CHECK_EQ(fb_incidents_close(in, LEAF(3), &done), 0);
	fb_rc_event_recovered(&done, "leaf3", cables, &ev);
	ev.seq = 2;
	CHECK_EQ(fb_event_check(&ev, &why), 0);
	CHECK_EQ(ev.kind, FB_KIND_SWITCH_RECOVERED);
	CHECK_EQ(fb_event_counter(&ev, FB_CTR_EVENT_GROUP_ID, 0), 2000);
	/* A later verdict on it is a new story. */
	inc = fb_incidents_verdict(in, LEAF(3), 5000, 9000 * MS, 0);
	CHECK_EQ(inc->group, 5000);
	fb_incidents_free(in);
	fb_rootcause_free(rc);
	fb_inventory_free(inv);
	fb_topology_free(t);
}

/* Lists longer than their field keep what fits, and say so. */
static void lists_that_do_not_fit_are_cut_whole_names_first(void)
{
	char buf[16];
	const char *names[] = { "node001", "node002", "node003", "nodeX", "h1", "h7" };
	CHECK_EQ(fb_rc_hostlist_fit(names, 3, buf, sizeof(buf)), 1);
	CHECK_STR(buf, "node[001-003]");
	CHECK_EQ(fb_rc_hostlist_fit(names, 6, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "node[001-003]"); /* the first 3 fit, the 4th not: "node[001-003],nodeX" */
	CHECK_EQ(fb_rc_hostlist_fit(names, 0, buf, sizeof(buf)), 1);
	CHECK_STR(buf, "");
	uint64_t ids[] = { 5, 6, 7, 9, 11, 12, 100000, 100001 };
	CHECK_EQ(fb_rc_ranges_fit(ids, 6, buf, sizeof(buf)), 1);
	CHECK_STR(buf, "5-7,9,11-12");
	CHECK_EQ(fb_rc_ranges_fit(ids, 8, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "5-7,9,11-12");
	/* The incident table forgets the oldest past its bound. */
	struct fb_incidents *in = fb_incidents_new(2);
	CHECK(in);
	fb_incidents_verdict(in, 1, 10, 1, 0);
	fb_incidents_verdict(in, 2, 20, 2, 0);
	fb_incidents_verdict(in, 3, 30, 3, 0);
	CHECK_EQ(fb_incidents_count(in), 2);
	CHECK(!fb_incidents_find(in, 1));
	CHECK_EQ(fb_incidents_find(in, 3)->group, 30);
	fb_incidents_free(in);
}

static void only_kinds_in_fb_storm_kinds_are_observed(void)
{
	struct fb_topology *t = fattree46();
	struct fb_rootcause *rc = fb_rootcause_new(500 * MS);
	CHECK(t && rc);
	int down_kinds = 0;
	for (unsigned k = 0; k < 256; k++) {
		/* a host cable and an ISL, reported down in every way a kind allows */
		struct fb_event h = host_event((uint8_t)k, LEAF(1), leaf_name[1], 1, 1, 1, 2);
		struct fb_event i = isl_event((uint8_t)k, LEAF(2), leaf_name[2], up_port(0), SPINE(1),
					      spine_port(2, 0), 1);
		int seen = fb_rootcause_observe(rc, t, &h, 1000 + k, 1) + fb_rootcause_observe(rc, t, &i, 2000 + k, 1);
		if (!(FB_STORM_KINDS & fb_batch_kind_bit(k)))
			CHECK_EQ(seen, 0);
		down_kinds += seen == 2;
	}
	CHECK_EQ(down_kinds, 3); /* link_down, port_state, topology */
	fb_rootcause_free(rc);
	fb_topology_free(t);
}

int main(void)
{
	RUN(only_kinds_in_fb_storm_kinds_are_observed);
	RUN(a_verdict_becomes_one_incident_event_and_updates_keep_its_group);
	RUN(lists_that_do_not_fit_are_cut_whole_names_first);
	RUN(a_dead_spine_is_one_switch_failed_and_cuts_off_nobody);
	RUN(a_leaf_without_uplinks_is_degraded_with_exactly_its_hosts_cut_off);
	RUN(reports_that_keep_coming_keep_the_window_open_up_to_a_cap);
	RUN(one_cable_is_no_switch_s_story_and_leftovers_wait);
	RUN(a_switch_with_every_cable_back_gets_no_verdict);
	return TEST_DONE();
}

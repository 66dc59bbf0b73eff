/* test_blast.c - broker/fabric/blast.c: which hosts lose every path and
 * which lose some, on explicit fat trees (fattree324's shape: 18 leaves of
 * 18 hosts, 9 spines, 2 cables from each leaf to each spine), and the graph
 * built from the broker's topology as the IB agent's events fill it. */
#include "blast.h"
#include "fb_test.h"
#include "fb_test_fabric.h"
#include "inventory.h"
#include "topology.h"

enum { LEAVES = 18, SPINES = 9, HOSTS = 18, CABLES = 2 };
#define N_LINKS (LEAVES * SPINES * CABLES)
#define N_HOSTS (LEAVES * HOSTS)

/* Switches 0..LEAVES-1 are leaves, then the spines. Link k: leaf k / (S*C). */
struct tree {
	struct fb_blast_link links[N_LINKS];
	struct fb_blast_host hosts[N_HOSTS];
	struct fb_blast_graph g;
	uint8_t sw_failed[LEAVES + SPINES], link_failed[N_LINKS], host_failed[N_HOSTS];
	uint8_t effect[N_HOSTS];
	struct fb_blast_counts c;
};

static void tree_init(struct tree *t)
{
	memset(t, 0, sizeof(*t));
	size_t k = 0;
	for (uint32_t l = 0; l < LEAVES; l++)
		for (uint32_t s = 0; s < SPINES; s++)
			for (int c = 0; c < CABLES; c++)
				t->links[k++] = (struct fb_blast_link){ l, LEAVES + s, 1 };
	for (size_t h = 0; h < N_HOSTS; h++)
		t->hosts[h] = (struct fb_blast_host){ (uint32_t)(h / HOSTS), 1 };
	t->g = (struct fb_blast_graph){ LEAVES + SPINES, t->links, N_LINKS, t->hosts, N_HOSTS };
}

static int tree_run(struct tree *t)
{
	return fb_blast_compute(&t->g, t->sw_failed, t->link_failed, t->host_failed, t->effect, &t->c);
}

static void healthy_fabric_is_all_ok(void)
{
	static struct tree t;
	tree_init(&t);
	CHECK_EQ(fb_blast_compute(&t.g, NULL, NULL, NULL, t.effect, &t.c), 0);
	CHECK_EQ(t.c.ok, N_HOSTS);
	CHECK_EQ(t.c.degraded + t.c.no_path, 0);
}

static void a_dead_spine_leaves_every_host_a_path(void)
{
	static struct tree t;
	tree_init(&t);
	t.sw_failed[LEAVES + 4] = 1;
	CHECK_EQ(tree_run(&t), 0);
	CHECK_EQ(t.c.no_path, 0);
	CHECK_EQ(t.c.degraded, N_HOSTS); /* every leaf lost 2 of its 18 uplinks */
	/* The same as the spine's cables all down (what the agents report). */
	tree_init(&t);
	for (size_t k = 0; k < N_LINKS; k++)
		if (t.links[k].b == LEAVES + 4)
			t.links[k].up = 0;
	CHECK_EQ(tree_run(&t), 0);
	CHECK_EQ(t.c.no_path, 0);
	CHECK_EQ(t.c.degraded, N_HOSTS);
}

static void a_leaf_without_uplinks_cuts_off_exactly_its_hosts(void)
{
	static struct tree t;
	tree_init(&t);
	for (size_t k = 0; k < N_LINKS; k++)
		if (t.links[k].a == 6)
			t.link_failed[k] = 1;
	CHECK_EQ(tree_run(&t), 0);
	CHECK_EQ(t.c.no_path, HOSTS);
	CHECK_EQ(t.c.degraded, 0);
	CHECK_EQ(t.c.ok, N_HOSTS - HOSTS);
	for (size_t h = 0; h < N_HOSTS; h++)
		CHECK_EQ(t.effect[h], h / HOSTS == 6 ? FB_BLAST_NO_PATH : FB_BLAST_OK);
	/* All but one uplink: degraded, not cut off. */
	t.link_failed[6 * SPINES * CABLES + 5] = 0;
	CHECK_EQ(tree_run(&t), 0);
	CHECK_EQ(t.c.no_path, 0);
	CHECK_EQ(t.c.degraded, HOSTS);
}

static void a_dead_leaf_or_host_cable_is_no_path_for_its_hosts_only(void)
{
	static struct tree t;
	tree_init(&t);
	t.sw_failed[0] = 1;
	t.host_failed[HOSTS + 3] = 1; /* leaf 1's 4th host's own cable */
	CHECK_EQ(tree_run(&t), 0);
	CHECK_EQ(t.c.no_path, HOSTS + 1);
	CHECK_EQ(t.c.degraded, 0); /* the spines lost cables, no leaf did */
	CHECK_EQ(t.effect[HOSTS + 3], FB_BLAST_NO_PATH);
	CHECK_EQ(t.effect[HOSTS + 4], FB_BLAST_OK);
	CHECK_STR(fb_blast_effect_name(t.effect[0]), "no_path");
}

/* Two halves joined by one cable: cutting it leaves the bigger half as the
 * fabric. */
static void a_split_keeps_the_part_with_most_hosts(void)
{
	struct fb_blast_link links[] = { { 0, 1, 1 }, { 1, 2, 1 }, { 2, 3, 1 } };
	struct fb_blast_host hosts[] = { { 0, 1 }, { 3, 1 }, { 3, 1 } };
	struct fb_blast_graph g = { 4, links, 3, hosts, 3 };
	uint8_t lf[3] = { 0, 1, 0 }, eff[3];
	struct fb_blast_counts c;
	CHECK_EQ(fb_blast_compute(&g, NULL, lf, NULL, eff, &c), 0);
	CHECK_EQ(eff[0], FB_BLAST_NO_PATH);
	CHECK_EQ(eff[1], FB_BLAST_OK); /* switch 3 kept its only cable */
	CHECK_EQ(eff[2], FB_BLAST_OK);
	/* A host on switch 2, which lost one of its two cables: degraded. */
	hosts[2].sw = 2;
	CHECK_EQ(fb_blast_compute(&g, NULL, lf, NULL, eff, &c), 0);
	CHECK_EQ(eff[2], FB_BLAST_DEGRADED);
	CHECK_EQ(c.no_path, 1);
}

/* leaf1 (LEAF1) with node001..node004, leaf2 (LEAF2) with node005 and an
 * unnamed host, both cabled to spine SP by one cable each, reported from
 * both ends for leaf1 and from the leaf end only for leaf2. */
#define SP 0x0008f10400411c08ULL
static void isl(struct fb_topology *t, uint64_t a, const char *an, unsigned ap, uint64_t b, unsigned bp,
		uint8_t state)
{
	struct fb_event ev = isl_event(FB_KIND_TOPOLOGY, a, an, ap, b, bp, state);
	CHECK(fb_topology_learn(t, &ev) >= 0);
}

static void graph_from_the_broker_topology(void)
{
	struct fb_topology *t = fb_topology_new(0, 0);
	struct fb_inventory *inv = fb_inventory_new();
	CHECK(t && inv);
	for (int k = 1; k <= 5; k++) {
		struct fb_event ev = inventory_event(k);
		fb_inventory_learn(inv, &ev);
		ev = host_event(FB_KIND_TOPOLOGY, k <= 4 ? LEAF1 : LEAF2, k <= 4 ? "leaf1" : "leaf2",
				(unsigned)k, k, 4, 5);
		CHECK(fb_topology_learn(t, &ev) >= 0);
	}
	struct fb_event ev = host_event(FB_KIND_TOPOLOGY, LEAF2, "leaf2", 9, 77, 4, 5);
	CHECK(fb_topology_learn(t, &ev) >= 0);
	isl(t, LEAF1, "leaf1", 33, SP, 1, 4);
	isl(t, SP, "spine", 1, LEAF1, 33, 4);
	isl(t, LEAF2, "leaf2", 33, SP, 2, 4);
	struct fb_blast_topo bt;
	CHECK_EQ(fb_blast_graph_from_topology(t, inv, &bt), 0);
	CHECK_EQ(bt.g.n_switches, 3);
	CHECK_EQ(bt.g.n_links, 2);   /* leaf1-spine once */
	CHECK_EQ(bt.g.n_hosts, 6);
	CHECK_STR(bt.host_names[0], "node001");
	CHECK_STR(bt.host_names[5], "h77 HCA-1"); /* no node agent: the agent's name */
	CHECK(bt.link_pb[1] == SIZE_MAX);        /* spine did not report leaf2's cable */
	uint8_t eff[6];
	struct fb_blast_counts c;
	CHECK_EQ(fb_blast_compute(&bt.g, NULL, NULL, NULL, eff, &c), 0);
	CHECK_EQ(c.ok, 6);
	fb_blast_topo_free(&bt);
	/* leaf2's uplink goes down (reported by leaf2 only): its hosts are cut off. */
	isl(t, LEAF2, "leaf2", 33, SP, 2, 1);
	CHECK_EQ(fb_blast_graph_from_topology(t, inv, &bt), 0);
	CHECK_EQ(fb_blast_compute(&bt.g, NULL, NULL, NULL, eff, &c), 0);
	CHECK_EQ(c.no_path, 2);
	CHECK_EQ(eff[4], FB_BLAST_NO_PATH);
	CHECK_EQ(eff[0], FB_BLAST_OK);
	/* What if the spine died as well: three parts of one switch each; the
	 * one with most hosts (leaf1: its 4 among themselves) counts as the
	 * fabric (degraded: it lost its cable). */
	uint8_t swf[3] = { 0 };
	swf[fb_topology_switch_index(t, fb_topology_switch(t, SP))] = 1;
	CHECK_EQ(fb_blast_compute(&bt.g, swf, NULL, NULL, eff, &c), 0);
	CHECK_EQ(c.degraded, 4);
	CHECK_EQ(c.no_path, 2);
	fb_blast_topo_free(&bt);
	fb_inventory_free(inv);
	fb_topology_free(t);
}

int main(void)
{
	RUN(healthy_fabric_is_all_ok);
	RUN(a_dead_spine_leaves_every_host_a_path);
	RUN(a_leaf_without_uplinks_cuts_off_exactly_its_hosts);
	RUN(a_dead_leaf_or_host_cable_is_no_path_for_its_hosts_only);
	RUN(a_split_keeps_the_part_with_most_hosts);
	RUN(graph_from_the_broker_topology);
	return TEST_DONE();
}

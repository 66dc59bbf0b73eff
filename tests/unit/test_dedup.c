/* test_dedup.c - broker/fabric/dedup.c on an explicit clock: one cable
 * reported down from both ends and by several agents is one condition
 * with its sources listed; the opposite direction and the end of the
 * window start a new one; other cables are not mixed in; memory is
 * bounded and a forgotten condition comes back as a first report. */
#include "dedup.h"
#include "fb_test.h"

#define MS 1000000ULL
#define S (1000 * MS)

static const struct fb_dedup_end LEAF3 = { 0x100, 3 }, SPINE1 = { 0x900, 1 };

static int report(struct fb_dedup *d, struct fb_dedup_end me, struct fb_dedup_end peer, int up,
		  const char *agent, uint64_t id, uint64_t now, struct fb_dedup_entry **e)
{
	struct fb_dedup_cond c;
	fb_dedup_cond_make(me, peer, up, &c);
	return fb_dedup_observe(d, &c, agent, me, id, now, e);
}

static void both_ends_and_three_agents_are_one_condition(void)
{
	struct fb_dedup *d = fb_dedup_new(2 * S, 0);
	CHECK(d);
	struct fb_dedup_entry *e;
	CHECK_EQ(report(d, LEAF3, SPINE1, 0, "ib@h40", 10, 1 * S, &e), 0);
	CHECK_EQ(e->first_id, 10);
	CHECK_EQ(e->group, 10);
	e->group = 7; /* the first was a symptom of incident 7: its duplicates join it */
	CHECK_EQ(report(d, SPINE1, LEAF3, 0, "ib@h40", 11, 1 * S + 5 * MS, &e), 1);
	CHECK_EQ(e->first_id, 10);
	CHECK_EQ(report(d, LEAF3, SPINE1, 0, "osm@sim-h1", 12, 1 * S + 40 * MS, &e), 1);
	/* The same source again (a resync, a repeated trap) is one more report, not one more source. */
	CHECK_EQ(report(d, LEAF3, SPINE1, 0, "osm@sim-h1", 13, 1 * S + 90 * MS, &e), 1);
	CHECK_EQ(e->first_id, 10);
	CHECK_EQ(e->group, 7);
	CHECK_EQ(e->reports, 4);
	CHECK_EQ(e->n_sources, 3);
	CHECK_STR(e->src[0].agent, "ib@h40");
	CHECK_EQ(e->src[0].end.guid, 0x100);
	CHECK_EQ(e->src[1].end.guid, 0x900);
	CHECK_STR(e->src[2].agent, "osm@sim-h1");
	CHECK_EQ(e->src[2].event_id, 12);
	/* The newest condition is listed first. */
	CHECK(fb_dedup_recent(d, 0) == e);
	CHECK(fb_dedup_recent(d, 1) == NULL);
	fb_dedup_free(d);
}

static void up_again_and_after_the_window_are_new(void)
{
	struct fb_dedup *d = fb_dedup_new(2 * S, 0);
	CHECK(d);
	struct fb_dedup_entry *e;
	CHECK_EQ(report(d, LEAF3, SPINE1, 0, "ib", 1, 1 * S, &e), 0);
	CHECK_EQ(report(d, LEAF3, SPINE1, 1, "ib", 2, 1 * S + 300 * MS, &e), 0); /* back up: news */
	CHECK_EQ(e->first_id, 2);
	CHECK_EQ(report(d, SPINE1, LEAF3, 1, "ib", 3, 1 * S + 310 * MS, &e), 1);
	CHECK_EQ(e->first_id, 2);
	CHECK_EQ(report(d, SPINE1, LEAF3, 0, "ib", 4, 1 * S + 320 * MS, &e), 0); /* and down again */
	CHECK_EQ(e->first_id, 4);
	/* Past the window the same condition is reported afresh. */
	CHECK_EQ(report(d, LEAF3, SPINE1, 0, "osm", 5, 3 * S + 320 * MS, &e), 0);
	CHECK_EQ(e->first_id, 5);
	CHECK_EQ(e->n_sources, 1);
	fb_dedup_free(d);
}

static void other_cables_and_unknown_peers_stay_apart(void)
{
	struct fb_dedup *d = fb_dedup_new(2 * S, 0);
	CHECK(d);
	struct fb_dedup_entry *e;
	struct fb_dedup_end leaf4 = { 0x100, 4 }, spine2 = { 0x901, 1 }, none = { 0, 0 };
	CHECK_EQ(report(d, LEAF3, SPINE1, 0, "ib", 1, S, &e), 0);
	CHECK_EQ(report(d, leaf4, spine2, 0, "ib", 2, S, &e), 0);
	CHECK_EQ(report(d, spine2, leaf4, 0, "ib", 3, S, &e), 1);
	CHECK_EQ(e->first_id, 2);
	/* A port whose peer is unknown is its own cable: another agent that
	 * reports the same port is still a duplicate. */
	struct fb_dedup_end host = { 0x100, 7 };
	CHECK_EQ(report(d, host, none, 0, "snmp-poll", 4, S, &e), 0);
	CHECK_EQ(report(d, host, none, 0, "snmp-trap", 5, S, &e), 1);
	CHECK_EQ(e->first_id, 4);
	CHECK_EQ(e->n_sources, 2);
	fb_dedup_free(d);
}

static void sources_past_the_list_are_counted(void)
{
	struct fb_dedup *d = fb_dedup_new(2 * S, 0);
	CHECK(d);
	struct fb_dedup_entry *e = NULL;
	char agent[16];
	for (int i = 0; i < FB_DEDUP_MAX_SOURCES + 3; i++) {
		snprintf(agent, sizeof(agent), "a%d", i);
		report(d, LEAF3, SPINE1, 0, agent, (uint64_t)i + 1, S, &e);
	}
	CHECK_EQ(e->n_sources, FB_DEDUP_MAX_SOURCES);
	CHECK_EQ(e->sources_cut, 3);
	CHECK_EQ(e->reports, FB_DEDUP_MAX_SOURCES + 3);
	fb_dedup_free(d);
}

static void memory_is_bounded_and_the_oldest_is_forgotten(void)
{
	struct fb_dedup *d = fb_dedup_new(60 * S, 4);
	CHECK(d);
	struct fb_dedup_entry *e;
	for (uint16_t p = 1; p <= 6; p++)
		CHECK_EQ(report(d, (struct fb_dedup_end){ 0x100, p }, SPINE1, 0, "ib", p, S, &e), 0);
	/* Ports 3..6 are kept; 1 and 2 were forgotten: a first report again, never lost. */
	CHECK_EQ(report(d, (struct fb_dedup_end){ 0x100, 6 }, SPINE1, 0, "osm", 7, S, &e), 1);
	CHECK_EQ(report(d, (struct fb_dedup_end){ 0x100, 3 }, SPINE1, 0, "osm", 8, S, &e), 1);
	CHECK_EQ(report(d, (struct fb_dedup_end){ 0x100, 1 }, SPINE1, 0, "osm", 9, S, &e), 0);
	CHECK_EQ(e->first_id, 9);
	size_t n = 0;
	while (fb_dedup_recent(d, n))
		n++;
	CHECK_EQ(n, 4);
	fb_dedup_free(d);
}

int main(void)
{
	RUN(both_ends_and_three_agents_are_one_condition);
	RUN(up_again_and_after_the_window_are_new);
	RUN(other_cables_and_unknown_peers_stay_apart);
	RUN(sources_past_the_list_are_counted);
	RUN(memory_is_bounded_and_the_oldest_is_forgotten);
	return TEST_DONE();
}

/* test_ratelimit.c - broker/fabric/ratelimit.c on an explicit clock: a
 * flood on one subject passes its first `limit` events per window, the rest
 * are over it and counted in exactly one summary per window (count and
 * EventId range) and once more in the lift after a whole window under the
 * limit; a subject over its limit does not count against its agent; an
 * agent's limit covers all its subjects; limits of 0 are off; memory is
 * bounded by max_keys and keys not limited are reused. */
#include "fb_test.h"
#include "ratelimit.h"

#include <string.h>

#define MS 1000000ULL
#define S (1000 * MS)

static struct fb_rl *rl(uint32_t agent, uint32_t subject, size_t max_keys)
{
	struct fb_rl_cfg c = { agent, subject, 10 * S, max_keys };
	return fb_rl_new(&c);
}

static void a_flood_gives_limit_loud_then_summaries_and_a_lift(void)
{
	struct fb_rl *r = rl(0, 5, 8);
	CHECK(r);
	struct fb_rl_out o[8];
	uint64_t id = 100, now = 1 * S;
	int loud = 0, quiet = 0;
	/* window 1 [1 s, 11 s): 12 events, 100 ms apart */
	for (int i = 0; i < 12; i++, id++, now += 100 * MS) {
		int over = fb_rl_event(r, "ib1", "guid 0000000000000100 port 3", id, now);
		if (over) {
			CHECK_EQ(over, FB_RL_SUBJECT + 1);
			quiet++;
		} else {
			loud++;
		}
	}
	CHECK_EQ(loud, 5);
	CHECK_EQ(quiet, 7);
	CHECK_EQ(fb_rl_limited(r), 1);
	CHECK_EQ(fb_rl_next_due(r), 11 * S);
	CHECK_EQ(fb_rl_take(r, 10 * S, o, 8), 0); /* the window is not over */
	/* the window ends: one summary of the 7, ids 105..111 */
	CHECK_EQ(fb_rl_take(r, 11 * S, o, 8), 1);
	CHECK_EQ(o[0].what, FB_RL_SUMMARY);
	CHECK_EQ(o[0].scope, FB_RL_SUBJECT);
	CHECK_STR(o[0].key, "guid 0000000000000100 port 3");
	CHECK_EQ(o[0].suppressed, 7);
	CHECK_EQ(o[0].first_id, 105);
	CHECK_EQ(o[0].last_id, 111);
	CHECK_EQ(o[0].span_ns, 10 * S);
	/* window 2 [11 s, 21 s): 8 more, 3 over */
	id = 200;
	now = 12 * S;
	for (int i = 0; i < 8; i++, id++)
		quiet += fb_rl_event(r, "ib1", "guid 0000000000000100 port 3", id, now) != 0;
	CHECK_EQ(quiet, 10);
	/* window 3 [21 s, 31 s) gets 2 events, under the limit: at its end the lift */
	CHECK_EQ(fb_rl_event(r, "ib1", "guid 0000000000000100 port 3", 300, 22 * S), 0);
	CHECK_EQ(fb_rl_ready(r), 1); /* the event closed window 2: its summary waits */
	CHECK_EQ(fb_rl_event(r, "ib1", "guid 0000000000000100 port 3", 301, 23 * S), 0);
	CHECK_EQ(fb_rl_take(r, 23 * S, o, 8), 1);
	CHECK_EQ(o[0].what, FB_RL_SUMMARY);
	CHECK_EQ(o[0].suppressed, 3);
	CHECK_EQ(o[0].first_id, 205);
	CHECK_EQ(o[0].last_id, 207);
	CHECK_EQ(fb_rl_take(r, 30 * S, o, 8), 0);
	CHECK_EQ(fb_rl_take(r, 31 * S, o, 8), 1);
	CHECK_EQ(o[0].what, FB_RL_LIFTED);
	CHECK_EQ(o[0].suppressed, 10); /* 7 + 3: every one, once more */
	CHECK_EQ(o[0].first_id, 105);
	CHECK_EQ(o[0].last_id, 207);
	CHECK_EQ(o[0].span_ns, 30 * S); /* from 1 s to the end of the window under the limit */
	CHECK_EQ(fb_rl_limited(r), 0);
	CHECK_EQ(fb_rl_next_due(r), 0);
	/* after the lift the subject starts afresh */
	for (int i = 0; i < 5; i++)
		CHECK_EQ(fb_rl_event(r, "ib1", "guid 0000000000000100 port 3", 400 + (uint64_t)i, 40 * S), 0);
	CHECK_EQ(fb_rl_event(r, "ib1", "guid 0000000000000100 port 3", 405, 40 * S), FB_RL_SUBJECT + 1);
	fb_rl_free(r);
}

static void a_silent_limited_key_is_lifted_by_the_clock(void)
{
	struct fb_rl *r = rl(0, 2, 8);
	struct fb_rl_out o[8];
	for (uint64_t id = 1; id <= 4; id++)
		fb_rl_event(r, "a", "node n1", id, 0);
	/* nothing more comes: the summary at 10 s, the lift at 20 s, in one take */
	CHECK_EQ(fb_rl_take(r, 25 * S, o, 8), 2);
	CHECK_EQ(o[0].what, FB_RL_SUMMARY);
	CHECK_EQ(o[0].suppressed, 2);
	CHECK_EQ(o[1].what, FB_RL_LIFTED);
	CHECK_EQ(o[1].suppressed, 2);
	CHECK_EQ(o[1].first_id, 3);
	CHECK_EQ(o[1].last_id, 4);
	CHECK_EQ(o[1].span_ns, 20 * S);
	CHECK_EQ(fb_rl_take(r, 100 * S, o, 8), 0);
	fb_rl_free(r);
}

static void subject_first_then_agent(void)
{
	struct fb_rl *r = rl(10, 3, 16);
	struct fb_rl_out o[8];
	uint64_t id = 1;
	int subj = 0, agent = 0, loud = 0;
	/* 5 on one port: 3 loud, 2 over the subject (not the agent's) */
	for (int i = 0; i < 5; i++) {
		int v = fb_rl_event(r, "ib1", "switch leaf1 port 1", id++, 0);
		subj += v == FB_RL_SUBJECT + 1;
		loud += v == 0;
	}
	/* 9 on nine other ports: 7 loud (the agent's 10), 2 over the agent's */
	char key[32];
	for (int i = 0; i < 9; i++) {
		snprintf(key, sizeof(key), "switch leaf1 port %d", i + 2);
		int v = fb_rl_event(r, "ib1", key, id++, 0);
		agent += v == FB_RL_AGENT + 1;
		loud += v == 0;
	}
	CHECK_EQ(subj, 2);
	CHECK_EQ(agent, 2);
	CHECK_EQ(loud, 10);
	/* another agent has its own budget; events with no subject count for the agent only */
	CHECK_EQ(fb_rl_event(r, "ib2", "", id++, 0), 0);
	CHECK_EQ(fb_rl_event(r, "ib2", NULL, id++, 0), 0);
	size_t n = fb_rl_take(r, 10 * S, o, 8);
	CHECK_EQ(n, 2);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		CHECK_EQ(o[i].what, FB_RL_SUMMARY);
		sum += o[i].suppressed;
		if (o[i].scope == FB_RL_AGENT) {
			CHECK_STR(o[i].key, "ib1");
			CHECK_EQ(o[i].first_id, 13);
			CHECK_EQ(o[i].last_id, 14);
		} else {
			CHECK_STR(o[i].key, "switch leaf1 port 1");
			CHECK_EQ(o[i].first_id, 4);
			CHECK_EQ(o[i].last_id, 5);
		}
	}
	CHECK_EQ(sum, 4);
	fb_rl_free(r);
}

static void zero_limits_are_off(void)
{
	struct fb_rl *r = rl(0, 0, 4);
	for (uint64_t id = 1; id <= 1000; id++)
		CHECK_EQ(fb_rl_event(r, "a", "node n", id, id), 0);
	CHECK_EQ(fb_rl_limited(r), 0);
	CHECK_EQ(fb_rl_untracked(r), 0);
	fb_rl_free(r);
}

static void memory_is_bounded_by_max_keys(void)
{
	struct fb_rl *r = rl(0, 1, 4);
	char key[32];
	for (int i = 0; i < 6; i++) { /* 6 subjects, room for 4 */
		snprintf(key, sizeof(key), "node n%d", i);
		fb_rl_event(r, "a", key, (uint64_t)i + 1, 0);
		CHECK_EQ(fb_rl_event(r, "a", key, (uint64_t)i + 100, 0), i < 4 ? FB_RL_SUBJECT + 1 : 0);
	}
	CHECK_EQ(fb_rl_limited(r), 4);
	CHECK_EQ(fb_rl_untracked(r), 4); /* n4 and n5, twice each: their events pass */
	struct fb_rl_out o[16];
	CHECK_EQ(fb_rl_take(r, 30 * S, o, 16), 8); /* 4 summaries and 4 lifts */
	/* the four slots are idle now and not limited: reused by new subjects */
	for (int i = 0; i < 4; i++) {
		snprintf(key, sizeof(key), "node m%d", i);
		fb_rl_event(r, "a", key, 1, 60 * S);
		CHECK_EQ(fb_rl_event(r, "a", key, 2, 60 * S), FB_RL_SUBJECT + 1);
	}
	CHECK_EQ(fb_rl_untracked(r), 4);
	fb_rl_free(r);
}

int main(void)
{
	RUN(a_flood_gives_limit_loud_then_summaries_and_a_lift);
	RUN(a_silent_limited_key_is_lifted_by_the_clock);
	RUN(subject_first_then_agent);
	RUN(zero_limits_are_off);
	RUN(memory_is_bounded_by_max_keys);
	return TEST_DONE();
}

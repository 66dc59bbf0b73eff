/* test_quiet.c - broker/quiet.c: the stages run in order and each sees
 * what the ones before it decided; the smallest reason is kept; an agent's
 * own quiet counter is removed; an event whose counters are full stays loud
 * and is counted; the per-reason counts add up. */
#include "fb_test.h"

#include "fb_err.h"
#include "quiet.h"

#include <string.h>

struct probe {
	unsigned give;  /* the reason this stage returns */
	unsigned seen;  /* the reason it was handed */
	int calls;
};

static unsigned stage(void *arg, struct fb_event *ev, uint64_t event_id, unsigned quiet, uint64_t now_ns)
{
	(void)ev;
	(void)event_id;
	(void)now_ns;
	struct probe *p = arg;
	p->seen = quiet;
	p->calls++;
	return p->give;
}

static void stages_run_in_order_and_the_smallest_reason_wins(void)
{
	struct fb_quiets q;
	memset(&q, 0, sizeof(q));
	struct probe flap = { FB_QUIET_FLAP, 0, 0 }, dedup = { FB_QUIET_DUPLICATE, 0, 0 }, rate = { 0, 0, 0 };
	CHECK_EQ(fb_quiets_add(&q, "flap", stage, &flap), 0);
	CHECK_EQ(fb_quiets_add(&q, "dedup", stage, &dedup), 0);
	CHECK_EQ(fb_quiets_add(&q, "ratelimit", stage, &rate), 0);
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	CHECK_EQ(fb_quiets_apply(&q, &ev, 1, 0), 1);
	CHECK_EQ(dedup.seen, FB_QUIET_FLAP);
	CHECK_EQ(rate.seen, FB_QUIET_DUPLICATE); /* it sees the event is quiet: not counted */
	CHECK_EQ(fb_event_quiet(&ev), FB_QUIET_DUPLICATE);
	CHECK_EQ(q.by_reason[FB_QUIET_DUPLICATE], 1);
	/* nobody says quiet: unchanged, loud */
	flap.give = dedup.give = 0;
	memset(&ev, 0, sizeof(ev));
	CHECK_EQ(fb_quiets_apply(&q, &ev, 2, 0), 0);
	CHECK_EQ(fb_event_quiet(&ev), 0);
	CHECK_EQ(rate.calls, 2);
	for (int i = 3; i < FB_QUIET_STAGES_MAX; i++)
		CHECK_EQ(fb_quiets_add(&q, "more", stage, &rate), 0);
	CHECK_EQ(fb_quiets_add(&q, "one too many", stage, &rate), -ENOSPC);
}

static void an_agents_quiet_counter_is_removed(void)
{
	struct fb_quiets q;
	memset(&q, 0, sizeof(q));
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	fb_event_add_counter(&ev, FB_CTR_LINK_DOWNED, 3);
	fb_event_add_counter(&ev, FB_CTR_QUIET, FB_QUIET_SYMPTOM);
	CHECK_EQ(fb_quiets_apply(&q, &ev, 1, 0), 1); /* changed: re-encode */
	CHECK_EQ(fb_event_quiet(&ev), 0);
	CHECK_EQ(ev.n_counters, 1);
	CHECK_EQ(q.agent_set, 1);
}

static void full_counters_stay_loud_and_are_counted(void)
{
	struct fb_quiets q;
	memset(&q, 0, sizeof(q));
	struct probe rate = { FB_QUIET_RATE_LIMITED, 0, 0 };
	fb_quiets_add(&q, "ratelimit", stage, &rate);
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	while (ev.n_counters < FB_COUNTERS_MAX)
		fb_event_add_counter(&ev, FB_CTR_RCV_ERRORS, 1);
	CHECK_EQ(fb_quiets_apply(&q, &ev, 1, 0), 0);
	CHECK_EQ(fb_event_quiet(&ev), 0);
	CHECK_EQ(ev.n_counters, FB_COUNTERS_MAX);
	CHECK_EQ(q.counters_full, 1);
	CHECK_EQ(q.by_reason[FB_QUIET_RATE_LIMITED], 0);
	json_t *j = fb_quiets_json(&q);
	CHECK(j && json_integer_value(json_object_get(j, "counters_full")) == 1 &&
	      json_integer_value(json_object_get(j, "rate_limited")) == 0);
	json_decref(j);
}

int main(void)
{
	RUN(stages_run_in_order_and_the_smallest_reason_wins);
	RUN(an_agents_quiet_counter_is_removed);
	RUN(full_counters_stay_loud_and_are_counted);
	return TEST_DONE();
}

/* test_flap.c - broker/fabric/flap.c on an explicit clock: 10 down/up
 * cycles on one port are one detection, then summaries of what was
 * suppressed, then one "stable again" once the port is quiet; slow
 * transitions never detect; an agent's own flap event starts the
 * suppression without a detection of the broker's; memory is bounded. */
#include "fb_test.h"
#include "flap.h"

#define MS 1000000ULL
#define S (1000 * MS)

static struct fb_flap *flap(void)
{
	struct fb_flap_cfg c = { .transitions = 6, .window_ns = 10 * S, .summary_ns = 2 * S,
				 .stable_ns = 5 * S, .max_ports = 4 };
	return fb_flap_new(&c);
}

static void ten_cycles_are_one_detection_summaries_and_one_stable(void)
{
	struct fb_flap *f = flap();
	CHECK(f);
	struct fb_flap_out o, outs[8];
	int detected = 0, summaries = 0, stable = 0;
	uint64_t suppressed = 0, now = 0;
	for (int i = 0; i < 20; i++) { /* 10 cycles: down, up every 300 ms */
		now += 300 * MS;
		if (fb_flap_transition(f, 0x100, 3, now, &o) == FB_FLAP_DETECTED) {
			detected++;
			CHECK_EQ(i, 5); /* the 6th transition within 10 s */
			CHECK_EQ(o.n, 6);
			CHECK_EQ(o.guid, 0x100);
			CHECK_EQ(o.port, 3);
			fb_flap_set_group(f, 0x100, 3, 4242);
		}
		size_t n = fb_flap_tick(f, now, outs, 8);
		for (size_t k = 0; k < n; k++) {
			CHECK_EQ(outs[k].what, FB_FLAP_SUMMARY);
			CHECK_EQ(outs[k].group, 4242);
			summaries++;
			suppressed += outs[k].n;
		}
	}
	CHECK_EQ(detected, 1);
	CHECK_EQ(fb_flap_suppressed(f), 1);
	/* Quiet from now (6 s): the remaining summary, then stable at 11 s. */
	CHECK(fb_flap_next_due(f) > now);
	for (uint64_t t = now; t <= now + 6 * S; t += 100 * MS) {
		size_t n = fb_flap_tick(f, t, outs, 8);
		for (size_t k = 0; k < n; k++) {
			if (outs[k].what == FB_FLAP_SUMMARY) {
				summaries++;
				suppressed += outs[k].n;
			} else {
				CHECK_EQ(outs[k].what, FB_FLAP_STABLE);
				CHECK_EQ(outs[k].n, 14); /* every transition after the detection */
				CHECK_EQ(outs[k].group, 4242);
				CHECK_EQ(t, now + 5 * S);
				stable++;
			}
		}
	}
	CHECK_EQ(stable, 1);
	CHECK(summaries >= 2);
	CHECK_EQ(suppressed, 14); /* the summaries add up to the whole */
	CHECK_EQ(fb_flap_suppressed(f), 0);
	CHECK_EQ(fb_flap_next_due(f), 0);
	/* Flapping again later is a new detection. */
	for (int i = 0; i < 6; i++)
		detected += fb_flap_transition(f, 0x100, 3, 100 * S + (uint64_t)i * S, &o) == FB_FLAP_DETECTED;
	CHECK_EQ(detected, 2);
	fb_flap_free(f);
}

static void slow_transitions_never_detect(void)
{
	struct fb_flap *f = flap();
	CHECK(f);
	struct fb_flap_out o;
	for (int i = 0; i < 100; i++) /* one every 2.5 s: at most 5 in any 10 s */
		CHECK_EQ(fb_flap_transition(f, 0x100, 1, (uint64_t)i * 2500 * MS + S, &o), FB_FLAP_NONE);
	/* Two ports interleaved count apart. */
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(fb_flap_transition(f, 0x100, 2, 500 * S + (uint64_t)i * MS, &o), FB_FLAP_NONE);
		CHECK_EQ(fb_flap_transition(f, 0x200, 2, 500 * S + (uint64_t)i * MS, &o), FB_FLAP_NONE);
	}
	CHECK_EQ(fb_flap_transition(f, 0x200, 2, 501 * S, &o), FB_FLAP_DETECTED);
	fb_flap_free(f);
}

static void an_agent_flap_starts_the_suppression_in_its_group(void)
{
	struct fb_flap *f = flap();
	CHECK(f);
	struct fb_flap_out o, outs[4];
	CHECK_EQ(fb_flap_transition(f, 0x100, 7, 1 * S, &o), FB_FLAP_NONE);
	fb_flap_agent_flap(f, 0x100, 7, 900, 1 * S);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(fb_flap_transition(f, 0x100, 7, 1 * S + (uint64_t)i * 100 * MS, &o), FB_FLAP_NONE);
	size_t n = fb_flap_tick(f, 3 * S, outs, 4);
	CHECK_EQ(n, 1);
	CHECK_EQ(outs[0].what, FB_FLAP_SUMMARY);
	CHECK_EQ(outs[0].n, 10);
	CHECK_EQ(outs[0].group, 900);
	n = fb_flap_tick(f, 7 * S, outs, 4);
	CHECK_EQ(n, 1);
	CHECK_EQ(outs[0].what, FB_FLAP_STABLE);
	fb_flap_free(f);
}

static void memory_is_bounded_by_max_ports(void)
{
	struct fb_flap *f = flap(); /* 4 ports */
	CHECK(f);
	struct fb_flap_out o;
	for (uint16_t p = 1; p <= 6; p++)
		fb_flap_transition(f, 0x100, p, 1 * S, &o);
	CHECK_EQ(fb_flap_untracked(f), 2);
	/* Quiet for 2 x window: their slots are reused. */
	fb_flap_transition(f, 0x100, 9, 30 * S, &o);
	CHECK_EQ(fb_flap_untracked(f), 2);
	fb_flap_free(f);
}

int main(void)
{
	RUN(ten_cycles_are_one_detection_summaries_and_one_stable);
	RUN(slow_transitions_never_detect);
	RUN(an_agent_flap_starts_the_suppression_in_its_group);
	RUN(memory_is_bounded_by_max_ports);
	return TEST_DONE();
}

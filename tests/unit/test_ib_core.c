/* test_ib_core.c - the IB agent's pure decisions, on an explicit clock (no
 * MADs, no ibsim): link flap detection (ib_flap), and the counter
 * arithmetic and hysteresis that turn PortCounters readings into
 * counter_threshold / counter_cleared and congestion events (ib_counters).
 * tests/integration/test_ib.py checks the same behaviour end to end. */
#include "fb_test.h"
#include "ib_counters.h"
#include "ib_flap.h"

#include <errno.h>

#define S 1000ull /* ms per second */

static const struct ib_flap_cfg flap3in60 = { .count = 3, .window_s = 60 };

static int down(struct ib_flap *f, const struct ib_flap_cfg *cfg, uint64_t t_ms, unsigned *count)
{
	*count = 0;
	return ib_flap_note(f, cfg, t_ms, count);
}

static void flap_needs_count_downs_within_the_window(void)
{
	struct ib_flap f = { 0 };
	unsigned n;
	CHECK_EQ(down(&f, &flap3in60, 1000 * S, &n), 0);
	CHECK_EQ(down(&f, &flap3in60, 1010 * S, &n), 0);
	CHECK_EQ(down(&f, &flap3in60, 1059 * S, &n), 1);
	CHECK_EQ(n, 3);
}

static void flap_forgets_downs_older_than_the_window(void)
{
	struct ib_flap f = { 0 };
	unsigned n;
	CHECK_EQ(down(&f, &flap3in60, 0, &n), 0);
	CHECK_EQ(down(&f, &flap3in60, 30 * S, &n), 0);
	/* exactly one window after the first: that one no longer counts */
	CHECK_EQ(down(&f, &flap3in60, 60 * S, &n), 0);
	CHECK_EQ(down(&f, &flap3in60, 61 * S, &n), 1);
	CHECK_EQ(n, 3); /* 30 s, 60 s, 61 s */
}

static void flap_once_per_window_then_needs_new_downs(void)
{
	struct ib_flap f = { 0 };
	unsigned n;
	for (uint64_t t = 0; t < 3; t++)
		(void)down(&f, &flap3in60, t * S, &n);
	CHECK_EQ(n, 3); /* the flap at 2 s */
	/* within the quiet window (until 62 s): downs count for nothing */
	for (uint64_t t = 3; t < 62; t += 5)
		CHECK_EQ(down(&f, &flap3in60, t * S, &n), 0);
	/* after it: count new downs make the next flap, not fewer */
	CHECK_EQ(down(&f, &flap3in60, 62 * S, &n), 0);
	CHECK_EQ(down(&f, &flap3in60, 63 * S, &n), 0);
	CHECK_EQ(down(&f, &flap3in60, 64 * S, &n), 1);
	CHECK_EQ(n, 3);
}

static void flap_ring_holds_count_max(void)
{
	const struct ib_flap_cfg cfg = { .count = IB_FLAP_COUNT_MAX, .window_s = 3600 };
	struct ib_flap f = { 0 };
	unsigned n;
	for (unsigned i = 0; i + 1 < IB_FLAP_COUNT_MAX; i++)
		CHECK_EQ(down(&f, &cfg, i * S, &n), 0);
	CHECK_EQ(down(&f, &cfg, IB_FLAP_COUNT_MAX * S, &n), 1);
	CHECK_EQ(n, IB_FLAP_COUNT_MAX);
}

static void hysteresis_one_event_up_one_down(void)
{
	struct fb_hyst h = { 0 };
	CHECK_EQ(fb_hyst_update(&h, 0), 0); /* below and never active: nothing */
	CHECK_EQ(fb_hyst_update(&h, 1), 1); /* up: the threshold event */
	CHECK_EQ(fb_hyst_update(&h, 1), 0); /* still up: nothing per interval */
	for (int i = 1; i < IB_CTR_CLEAR_AFTER; i++)
		CHECK_EQ(fb_hyst_update(&h, 0), 0);
	CHECK_EQ(fb_hyst_update(&h, 1), 0); /* up again before cleared: no new event */
	for (int i = 1; i < IB_CTR_CLEAR_AFTER; i++)
		CHECK_EQ(fb_hyst_update(&h, 0), 0); /* the count of readings below restarted */
	CHECK_EQ(fb_hyst_update(&h, 0), -1); /* IB_CTR_CLEAR_AFTER below: cleared */
	CHECK_EQ(fb_hyst_update(&h, 0), 0);
	CHECK_EQ(fb_hyst_update(&h, 1), 1); /* and a new episode */
}

static void delta_handles_reset_and_wrap(void)
{
	CHECK_EQ(ib_ctr_delta(100, 150), 50);
	CHECK_EQ(ib_ctr_delta(150, 150), 0);
	/* the counter went back (reset, or a 16/32-bit counter wrapped): what
	 * was counted since is at least the new value */
	CHECK_EQ(ib_ctr_delta(0xfffffff0u, 5), 5);
	CHECK_EQ(ib_ctr_delta(65535, 0), 0);
}

static void rates_use_the_measured_interval(void)
{
	CHECK_EQ(fb_rate_per_s(10, 1000), 10);
	CHECK_EQ(fb_rate_per_s(10, 500), 20);  /* a short interval: a higher rate */
	CHECK_EQ(fb_rate_per_s(10, 2000), 5);
	CHECK_EQ(fb_rate_per_s(1, 3000), 0);   /* 0.33/s rounds down */
	CHECK_EQ(fb_rate_per_s(1, 2000), 1);   /* 0.5/s rounds up */
	CHECK_EQ(fb_rate_per_s(5, 0), 0);      /* no interval: no rate */
}

static void congestion_ppm_from_xmit_wait_ticks(void)
{
	/* docs: 4 ns ticks over 200 ms, 5,000,000 ticks = 100,000 ppm = 10 % */
	CHECK_EQ(ib_ctr_congestion_ppm(5000000, 200, 4), 100000);
	CHECK_EQ(ib_ctr_congestion_ppm(0xffffffffu, 1, 1000), 1000000); /* capped */
	CHECK_EQ(ib_ctr_congestion_ppm(123, 0, 4), 0);
}

/* A port's symbol errors read every interval on an explicit clock, through
 * the same steps as the poll round: delta, rate over the measured time,
 * threshold, hysteresis. One counter_threshold on the way up, one
 * counter_cleared after IB_CTR_CLEAR_AFTER quiet readings, across a wrap. */
static void threshold_episode_on_an_explicit_clock(void)
{
	struct ib_ctr_cfg cfg;
	ib_ctr_cfg_default(&cfg, 1000);
	CHECK_EQ(cfg.err_rate[IB_ERR_SYMBOL], 10);
	static const struct { uint64_t t_ms, value; int event; } r[] = {
		{ 0, 1000, 0 },     /* baseline */
		{ 1000, 1005, 0 },  /* 5/s */
		{ 2000, 1025, 1 },  /* 20/s: counter_threshold */
		{ 2500, 1035, 0 },  /* 20/s over a short interval: still up, no event */
		{ 3500, 1036, 0 },  /* 1/s: below once */
		{ 4500, 1036, 0 },  /* below twice */
		{ 6500, 4, -1 },    /* reset (4 since): 2/s, below thrice: counter_cleared */
		{ 7500, 4, 0 },
	};
	struct fb_hyst h = { 0 };
	for (size_t i = 1; i < sizeof(r) / sizeof(r[0]); i++) {
		uint64_t d = ib_ctr_delta(r[i - 1].value, r[i].value);
		uint64_t rate = fb_rate_per_s(d, r[i].t_ms - r[i - 1].t_ms);
		CHECK_EQ(fb_hyst_update(&h, rate >= cfg.err_rate[IB_ERR_SYMBOL]), r[i].event);
	}
}

static void thresholds_parse_by_counter_name(void)
{
	struct ib_ctr_cfg cfg;
	ib_ctr_cfg_default(&cfg, 1000);
	CHECK_EQ(ib_ctr_parse_threshold(&cfg, "symbol_error=25"), 0);
	CHECK_EQ(cfg.err_rate[IB_ERR_SYMBOL], 25);
	CHECK_STR(ib_ctr_err_name(IB_ERR_XMIT_DISCARDS), "xmit_discards");
	CHECK_EQ(ib_ctr_parse_threshold(&cfg, "XMIT_DISCARDS=7"), 0);
	CHECK_EQ(cfg.err_rate[IB_ERR_XMIT_DISCARDS], 7);
	CHECK_EQ(ib_ctr_parse_threshold(&cfg, "symbol_error=0"), -EINVAL);
	CHECK_EQ(ib_ctr_parse_threshold(&cfg, "symbol_error=-1"), -EINVAL);
	CHECK_EQ(ib_ctr_parse_threshold(&cfg, "symbol_error="), -EINVAL);
	CHECK_EQ(ib_ctr_parse_threshold(&cfg, "symbol_error=1000000001"), -EINVAL);
	CHECK_EQ(ib_ctr_parse_threshold(&cfg, "symbol_errors=5"), -EINVAL);
	CHECK_EQ(ib_ctr_parse_threshold(&cfg, "symbol_error"), -EINVAL);
	CHECK(ib_ctr_err_name(IB_ERR__N) == NULL);
	CHECK_EQ(cfg.err_rate[IB_ERR_SYMBOL], 25); /* refused values change nothing */
}

int main(void)
{
	RUN(flap_needs_count_downs_within_the_window);
	RUN(flap_forgets_downs_older_than_the_window);
	RUN(flap_once_per_window_then_needs_new_downs);
	RUN(flap_ring_holds_count_max);
	RUN(hysteresis_one_event_up_one_down);
	RUN(delta_handles_reset_and_wrap);
	RUN(rates_use_the_measured_interval);
	RUN(congestion_ppm_from_xmit_wait_ticks);
	RUN(threshold_episode_on_an_explicit_clock);
	RUN(thresholds_parse_by_counter_name);
	return TEST_DONE();
}

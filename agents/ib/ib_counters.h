/* ib_counters.h - PerfMgt counters of a switch's ports, as rates and events.
 *
 * Runs on the MAD thread every --counters-interval. For each assigned,
 * reachable switch that has a LID (PortInfo of port 0; no SM = no LID = no
 * counters, logged once per switch), it reads PortCounters of every port by
 * LID, and PortCountersExtended too when the switch's PerfMgt ClassPortInfo
 * says it has them. The previous reading of each port is kept; a delta is
 * now - prev, or now when now < prev (the counter was reset, or wrapped:
 * what was counted since is at least now). Rates and fractions use the
 * measured time between the two readings of that port, not the nominal
 * interval.
 *
 * Events, with hysteresis (ONE event on the way up, ONE on the way down,
 * nothing per interval in between):
 *   counter_threshold  an error counter's rate >= its --error-threshold
 *                      (Warning); counters: the error counter (its delta),
 *                      rate_per_s, threshold, interval_ms
 *   counter_cleared    that rate stayed below for IB_CTR_CLEAR_AFTER readings
 *   congestion         congestion_ppm >= --congestion-threshold (Warning);
 *                      counters: congestion_ppm, xmit_wait (delta),
 *                      interval_ms, threshold
 *   congestion_cleared below for IB_CTR_CLEAR_AFTER readings
 *
 * Congestion: PortXmitWait counts "ticks" in which the port had data to send
 * but sent none. IBA leaves the tick implementation-defined; we assume one
 * tick = --xmit-wait-tick-ns nanoseconds (default 4 ns, a 250 MHz core clock), so
 *   fraction        = delta_ticks * tick_ns / (interval_ms * 1e6)
 *   congestion_ppm  = round(delta_ticks * tick_ns / interval_ms), capped at 1e6
 * e.g. with 4 ns ticks over 200 ms, 5,000,000 ticks = 100,000 ppm = 10 %.
 */
#ifndef IB_COUNTERS_H
#define IB_COUNTERS_H

#include "fb_threshold.h"
#include "ib_mad.h"

#include <stdint.h>

#define IB_CTR_CLEAR_AFTER FB_HYST_CLEAR_AFTER /* readings below a threshold before *_cleared */

/* The error counters watched, in --error-threshold order. */
enum ib_err { IB_ERR_SYMBOL, IB_ERR_LINK_RECOVERY, IB_ERR_LINK_DOWNED, IB_ERR_RCV,
	      IB_ERR_XMIT_DISCARDS, IB_ERR__N };

struct ib_ctr_cfg {
	unsigned interval_ms;        /* 0: counters off */
	uint64_t err_rate[IB_ERR__N]; /* thresholds, events per second */
	uint64_t congestion_ppm;     /* 1..1000000 */
	unsigned tick_ns;            /* PortXmitWait tick, 1..1000 */
};

/* Per port (struct ib_port), zeroed = no reading yet. */
struct ib_ctr_port {
	int have;                    /* prev holds a reading */
	uint64_t t_ms;               /* when, CLOCK_MONOTONIC */
	struct ib_pma_counters prev;
	struct ib_pma_ext prev_ext;
	int have_ext;
	struct fb_hyst err_h[IB_ERR__N], cong_h;
};

/* Per switch (struct ib_switch). */
struct ib_ctr_switch {
	uint16_t lid;
	uint8_t no_lid_logged;
	uint8_t have_capmask;
	uint16_t capmask;
};

void ib_ctr_cfg_default(struct ib_ctr_cfg *cfg, unsigned interval_ms);
/* "symbol_error=10": set one threshold. 0, or -EINVAL (bad name or rate). */
int ib_ctr_parse_threshold(struct ib_ctr_cfg *cfg, const char *spec);
/* "symbol_error", ... (the fb_counter names). */
const char *ib_ctr_err_name(unsigned err);

/* The arithmetic, exposed for tests and docs. */
uint64_t ib_ctr_delta(uint64_t prev, uint64_t now);
uint64_t ib_ctr_congestion_ppm(uint64_t delta_ticks, uint64_t interval_ms, unsigned tick_ns);

struct ib_poll_ctx;
struct ib_switch;
/* One counters round of one switch. Returns the PMA answers. */
int ib_counters_switch(struct ib_poll_ctx *c, struct ib_switch *sw);

#endif

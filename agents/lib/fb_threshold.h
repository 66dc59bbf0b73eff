/* fb_threshold.h - error-rate thresholds with hysteresis, as the IB agent
 * (PortCounters, congestion) and the SNMP poller (IF-MIB errors, discards)
 * both report them: ONE counter_threshold when a rate reaches its threshold,
 * ONE counter_cleared after FB_HYST_CLEAR_AFTER readings in a row below it,
 * nothing in between, so a rate hovering at the threshold does not flood.
 */
#ifndef FB_THRESHOLD_H
#define FB_THRESHOLD_H

#include "fb_event.h"

#include <stdint.h>

#define FB_HYST_CLEAR_AFTER 3 /* readings below a threshold before *_cleared */

/* Hysteresis of one threshold; zeroed = never crossed. */
struct fb_hyst {
	uint8_t active;  /* the threshold event went out */
	uint8_t below;   /* readings below since, while active */
};

/* Feed one reading: +1 when the threshold event is due, -1 when the
 * cleared event is due, else 0. */
int fb_hyst_update(struct fb_hyst *h, int above);
/* Events per second over ms, rounded; 0 without an interval. */
uint64_t fb_rate_per_s(uint64_t delta, uint64_t ms);
/* A counter's delta over ms against rate_thr per second (in integers:
 * delta / (ms / 1000) >= rate_thr), through h: as fb_hyst_update. */
int fb_threshold_update(struct fb_hyst *h, uint64_t delta, uint64_t ms, uint64_t rate_thr);
/* "NAME=RATE" (--error-threshold): NAME one of name(0..n-1), any case;
 * RATE 1..1e9 per second, into rate[NAME's index]. 0 or -EINVAL. */
int fb_threshold_parse(const char *spec, const char *(*name)(unsigned i), unsigned n,
		       uint64_t *rate);
/* The counters and text of the counter_threshold (dir > 0) or
 * counter_cleared event ev of counter ctr_id named name: the delta first
 * (Redfish names the property after it), the rate, the threshold, the
 * interval. ev has room: at most 4 counters are added. */
void fb_threshold_describe(struct fb_event *ev, uint16_t ctr_id, const char *name, int dir,
			   uint64_t delta, uint64_t rate_thr, uint64_t ms);

#endif

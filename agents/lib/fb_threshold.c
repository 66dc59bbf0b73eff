/* fb_threshold.c - thresholds with hysteresis: see fb_threshold.h. */
#include "fb_threshold.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int fb_hyst_update(struct fb_hyst *h, int above)
{
	if (above) {
		h->below = 0;
		if (h->active)
			return 0;
		h->active = 1;
		return 1;
	}
	if (!h->active || ++h->below < FB_HYST_CLEAR_AFTER)
		return 0;
	h->active = 0;
	h->below = 0;
	return -1;
}

uint64_t fb_rate_per_s(uint64_t delta, uint64_t ms)
{
	return ms ? (delta * 1000 + ms / 2) / ms : 0;
}

int fb_threshold_update(struct fb_hyst *h, uint64_t delta, uint64_t ms, uint64_t rate_thr)
{
	return fb_hyst_update(h, delta * 1000 >= rate_thr * ms);
}

void fb_threshold_describe(struct fb_event *ev, uint16_t ctr_id, const char *name, int dir,
			   uint64_t delta, uint64_t rate_thr, uint64_t ms)
{
	uint64_t rate = fb_rate_per_s(delta, ms);
	(void)fb_event_add_counter(ev, ctr_id, delta);
	(void)fb_event_add_counter(ev, FB_CTR_RATE_PER_S, rate);
	(void)fb_event_add_counter(ev, FB_CTR_THRESHOLD, rate_thr);
	(void)fb_event_add_counter(ev, FB_CTR_INTERVAL_MS, ms);
	snprintf(ev->text, sizeof(ev->text), "%s %" PRIu64 "/s %s %" PRIu64 "/s over %" PRIu64 " ms",
		 name, rate, dir > 0 ? ">=" : "<", rate_thr, ms);
}

int fb_threshold_parse(const char *spec, const char *(*name)(unsigned i), unsigned n,
		       uint64_t *rate)
{
	const char *eq = strchr(spec, '=');
	if (!eq || !eq[1] || eq[1] == '-' || eq[1] == '+')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(eq + 1, &end, 10);
	if (*end || errno || v == 0 || v > 1000000000ULL)
		return -EINVAL;
	size_t len = (size_t)(eq - spec);
	for (unsigned i = 0; i < n; i++) {
		const char *nm = name(i);
		if (strlen(nm) == len && strncasecmp(spec, nm, len) == 0) {
			rate[i] = v;
			return 0;
		}
	}
	return -EINVAL;
}

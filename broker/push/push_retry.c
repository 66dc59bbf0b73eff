/* push_retry.c - the retry policies (push_retry.h). */
#include "push_retry.h"

#include "rf_sub.h"

int fb_push_retry_failed(struct fb_push_retry *r, int policy, const struct fb_push_retry_conf *c,
			 uint64_t now_ms)
{
	r->failures++;
	if ((policy == FB_RF_RETRY_TERMINATE || policy == FB_RF_RETRY_SUSPEND) &&
	    r->failures > c->attempts)
		return policy == FB_RF_RETRY_TERMINATE ? FB_PUSH_TERMINATE : FB_PUSH_SUSPEND;
	uint64_t wait = c->interval_ms;
	if (policy == FB_RF_RETRY_BACKOFF) {
		for (unsigned i = 1; i < r->failures && wait < c->max_backoff_ms; i++)
			wait *= 2;
		if (wait > c->max_backoff_ms)
			wait = c->max_backoff_ms;
	}
	r->next_ms = now_ms + wait;
	return FB_PUSH_RETRY;
}

void fb_push_retry_ok(struct fb_push_retry *r)
{
	r->failures = 0;
	r->next_ms = 0;
}

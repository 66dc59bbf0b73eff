/* push_retry.h - the DeliveryRetryPolicy state machine of one destination,
 * on an explicit clock (unit-tested without waiting).
 *
 * A delivery that fails is retried after DeliveryRetryIntervalSeconds. With
 * TerminateAfterRetries and SuspendRetries, once DeliveryRetryAttempts retries
 * have failed too (1 + attempts tries of the same event) the verdict is to
 * delete the subscription or to suspend it (Status.State Disabled).
 * RetryForever retries at the interval for ever; RetryForeverWithBackoff
 * doubles the wait after each failure, up to max_backoff_ms. A success
 * resets the count.
 */
#ifndef FB_PUSH_RETRY_H
#define FB_PUSH_RETRY_H

#include <stdint.h>

enum fb_push_verdict { FB_PUSH_RETRY = 0, FB_PUSH_TERMINATE = 1, FB_PUSH_SUSPEND = 2 };

struct fb_push_retry_conf {
	unsigned attempts;       /* DeliveryRetryAttempts */
	uint64_t interval_ms;    /* DeliveryRetryIntervalSeconds * 1000 */
	uint64_t max_backoff_ms; /* cap of RetryForeverWithBackoff */
};

struct fb_push_retry {
	unsigned failures; /* tries of the current event that failed */
	uint64_t next_ms;  /* when the next try may start */
};

/* A try failed at now_ms under policy (enum fb_rf_retry_policy). Returns the
 * verdict; for FB_PUSH_RETRY, r->next_ms is when to try again. */
int fb_push_retry_failed(struct fb_push_retry *r, int policy, const struct fb_push_retry_conf *c,
			 uint64_t now_ms);
/* A try succeeded (or the subscription was resumed). */
void fb_push_retry_ok(struct fb_push_retry *r);
/* 1 if a try may start at now_ms. */
static inline int fb_push_retry_due(const struct fb_push_retry *r, uint64_t now_ms)
{
	return r->failures == 0 || now_ms >= r->next_ms;
}

#endif

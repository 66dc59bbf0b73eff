/* fb_time.h - the one monotonic clock of every fabricbus program.
 *
 * Durations, deadlines, timeouts and rates are measured on CLOCK_MONOTONIC:
 * it does not jump when the wall clock is set (NTP, an operator's date). Wall
 * time (event timestamps) is not this module's business. Code whose logic
 * depends on time takes "now" as an argument (slurm_policy, ib_counters,
 * ib_flap) and its caller reads it here, so unit tests drive the clock.
 */
#ifndef FB_TIME_H
#define FB_TIME_H

#include <stdint.h>

/* Monotonic time since an arbitrary origin (boot), in ns, us and ms. */
int64_t fb_time_ns(void);
int64_t fb_time_us(void);
int64_t fb_time_ms(void);

#endif

/* fb_time.c - the monotonic clock (see fb_time.h). */
#include "fb_time.h"

#include <time.h>

int64_t fb_time_ns(void)
{
	struct timespec ts;
	/* CLOCK_MONOTONIC cannot fail on Linux with a valid pointer. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t fb_time_us(void) { return fb_time_ns() / 1000; }

int64_t fb_time_ms(void) { return fb_time_ns() / 1000000; }

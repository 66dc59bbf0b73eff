/* ib_flap.c - link flap detection for one port. */
#include "ib_flap.h"

#include <string.h>

int ib_flap_note(struct ib_flap *f, const struct ib_flap_cfg *cfg, uint64_t now_ms,
		 unsigned *count)
{
	uint64_t win_ms = (uint64_t)cfg->window_s * 1000;
	if (now_ms < f->quiet_until_ms)
		return 0; /* this window already had its flap event */
	f->downs_ms[(f->head + f->n) % IB_FLAP_COUNT_MAX] = now_ms;
	if (f->n < IB_FLAP_COUNT_MAX)
		f->n++;
	else
		f->head = (uint8_t)((f->head + 1) % IB_FLAP_COUNT_MAX);
	/* Forget downs older than the window. */
	while (f->n && now_ms - f->downs_ms[f->head] >= win_ms) {
		f->head = (uint8_t)((f->head + 1) % IB_FLAP_COUNT_MAX);
		f->n--;
	}
	if (f->n < cfg->count)
		return 0;
	*count = f->n;
	/* Start afresh: the next flap event needs count new downs, after a
	 * quiet window. */
	f->n = 0;
	f->head = 0;
	f->quiet_until_ms = now_ms + win_ms;
	return 1;
}

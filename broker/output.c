#include "output.h"

#include "fb_log.h"

#include <errno.h>

int fb_outputs_add(struct fb_outputs *o, const char *name, fb_output_committed_fn fn, void *arg)
{
	if (o->n == FB_OUTPUTS_MAX) {
		fb_log_err("output %s: cannot register more than %d outputs (raise FB_OUTPUTS_MAX)", name,
			   FB_OUTPUTS_MAX);
		return -ENOSPC;
	}
	o->v[o->n++] = (struct fb_output){ name, fn, arg };
	return 0;
}

int fb_outputs_committed(const struct fb_outputs *o, struct fb_batch *batch)
{
	if (!batch->n)
		return 0;
	uint64_t last = fb_batch_id(batch, batch->n - 1);
	int busy = 0;
	for (unsigned i = 0; i < o->n; i++)
		if (o->v[i].committed(o->v[i].arg, batch, last) == FB_OUTPUT_BUSY)
			busy = 1;
	return busy ? FB_OUTPUT_BUSY : 0;
}

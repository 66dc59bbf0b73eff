/* fb_test_sink.h - an emit callback for the agents' pure parts
 * (snmp_ifc_emit_fn and the like): keeps the first FBT_SINK_MAX events and
 * counts them all. Header-only (static inline). */
#ifndef FB_TEST_SINK_H
#define FB_TEST_SINK_H

#include "fb_event.h"

#define FBT_SINK_MAX 16

struct fbt_sink {
	struct fb_event ev[FBT_SINK_MAX];
	int n;
};

static inline void fbt_collect(void *arg, const struct fb_event *ev)
{
	struct fbt_sink *s = arg;
	if (s->n < FBT_SINK_MAX)
		s->ev[s->n] = *ev;
	s->n++;
}

#endif

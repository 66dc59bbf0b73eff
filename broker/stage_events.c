/* stage_events.c - a stage's deadline timer and wakeup: see stage_events.h. */
#include "stage_events.h"

#include <errno.h>
#include <stddef.h>
#include <sys/time.h>

int fb_stage_events_init(struct fb_stage_events *e, struct event_base *base,
			 event_callback_fn on_timer, event_callback_fn on_wake, void *arg)
{
	e->timer = evtimer_new(base, on_timer, arg);
	e->wake = event_new(base, -1, 0, on_wake, arg);
	if (!e->timer || !e->wake) {
		fb_stage_events_free(e);
		return -ENOMEM;
	}
	return 0;
}

void fb_stage_events_free(struct fb_stage_events *e)
{
	if (e->timer)
		event_free(e->timer);
	if (e->wake)
		event_free(e->wake);
	e->timer = e->wake = NULL;
}

void fb_stage_arm(struct fb_stage_events *e, uint64_t due_ns, uint64_t now_ns)
{
	if (!due_ns)
		return;
	uint64_t wait = due_ns > now_ns ? due_ns - now_ns : 0;
	struct timeval tv = { (time_t)(wait / 1000000000ULL), (suseconds_t)(wait % 1000000000ULL / 1000) };
	evtimer_del(e->timer);
	evtimer_add(e->timer, &tv);
}

void fb_stage_wake(struct fb_stage_events *e)
{
	event_active(e->wake, 0, 0);
}

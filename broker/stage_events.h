/* stage_events.h - the two loop hooks of a broker stage that emits events
 * of its own (flap control, rate limits, root cause): a timer for its next
 * deadline and a wakeup that runs its emits later, from the loop.
 *
 * Why a stage needs both: its decisions fall due with time (a summary, a
 * window's end, a verdict), and the ones an incoming event triggers cannot
 * be emitted from inside the quiet or output call that sees it (the event
 * being staged is not journaled yet, an emit appends to the batch being
 * published; quiet.h, output.h), so they are queued and emitted when the
 * wakeup runs. One piece, so that every stage arms its deadline the same
 * way (monotonic ns, fb_now_ns) and frees what it made on every path.
 * Threads: the loop's only.
 */
#ifndef FB_STAGE_EVENTS_H
#define FB_STAGE_EVENTS_H

#include <event2/event.h>
#include <stdint.h>

struct fb_stage_events {
	struct event *timer; /* fires on_timer at the stage's next deadline */
	struct event *wake;  /* runs on_wake once, from the loop (fb_stage_wake) */
};

/* Create both on base, each calling its callback with arg. 0, or -ENOMEM
 * (nothing left to free). */
int fb_stage_events_init(struct fb_stage_events *e, struct event_base *base,
			 event_callback_fn on_timer, event_callback_fn on_wake, void *arg);
/* Free what init made; a zeroed struct is fine. */
void fb_stage_events_free(struct fb_stage_events *e);
/* Fire the timer at monotonic due_ns (already past: at once), replacing
 * any earlier arming; due_ns 0 means nothing is due: left as it is. */
void fb_stage_arm(struct fb_stage_events *e, uint64_t due_ns, uint64_t now_ns);
/* Run on_wake from the loop once the current callback returns. */
void fb_stage_wake(struct fb_stage_events *e);

#endif

/* storm.h - root cause behind the output seam: every committed event goes
 * to fabric/rootcause.c, and when a window of cable-down reports closes the
 * verdict (the switch they have in common, its blast radius, the EventIds
 * it explains) is emitted as an event of the broker's own (emit.c,
 * fabric/rc_event.h) in its incident's EventGroupId (fabric/incident.h),
 * logged, and shown in /status "storm" (docs/topology.md, "Root cause").
 * When cables of an open incident's switch come back it is weighed again:
 * an update when fewer hosts are cut off, switch_recovered when every cable
 * is back.
 *
 * It holds nothing back: every symptom is journaled and delivered as
 * before.
 *
 * Loop only: the output runs on the loop (output.h), the window's timer
 * too; events are emitted from the timer and an event of its own, never
 * from inside the output call.
 */
#ifndef FB_STORM_H
#define FB_STORM_H

#include "batch.h"

#include <jansson.h>
#include <stdint.h>

struct fb_broker;
struct fb_storm;

/* window_ns 0: rootcause.c's default (500 ms). NULL on ENOMEM. */
struct fb_storm *fb_storm_new(struct fb_broker *b, uint64_t window_ns);
void fb_storm_free(struct fb_storm *s);
/* The output (output.h): weigh each record; never busy. */
int fb_storm_committed(void *arg, struct fb_batch *batch, uint64_t last_id);
/* {"reports":N,"verdicts":N,"explained":N,"emitted":N,"emit_failed":N,
 * "recovered":N,"open_incidents":N,"last":{...} or null} (new reference;
 * NULL on ENOMEM). */
json_t *fb_storm_json(const struct fb_storm *s);

#endif

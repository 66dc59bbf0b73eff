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
 * It holds nothing back: every symptom is journaled and handed to every
 * output. A cable-down report that belongs to a story already told is made
 * quiet before it is journaled (dedupctl.c asks fb_storm_symptom): default
 * subscribers see the root cause, those who ask see the symptoms too, in
 * its EventGroupId.
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
struct fb_topo_port;

/* window_ns 0: rootcause.c's default (500 ms). NULL on ENOMEM. */
struct fb_storm *fb_storm_new(struct fb_broker *b, uint64_t window_ns);
void fb_storm_free(struct fb_storm *s);
/* The kinds a cable-down report (rootcause.c's is_down_report) or a
 * cable-up one (storm.c's is_up_report) can have: a batch with none of them
 * (fb_batch.kinds) is skipped without reading its records. */
#define FB_STORM_KINDS                                                                       \
	(fb_batch_kind_bit(FB_KIND_LINK_DOWN) | fb_batch_kind_bit(FB_KIND_LINK_UP) |         \
	 fb_batch_kind_bit(FB_KIND_PORT_STATE) | fb_batch_kind_bit(FB_KIND_TOPOLOGY))
/* The output (output.h): weigh each record of a kind in FB_STORM_KINDS;
 * never busy. */
int fb_storm_committed(void *arg, struct fb_batch *batch, uint64_t last_id);
/* The first report (not a duplicate: dedupctl.c) of a cable down at switch
 * port p, with its EventId, before it is journaled: the EventGroupId of the
 * story it belongs to, or 0 if it stands alone (a default subscriber gets
 * it). A symptom is a report on a cable of a switch whose incident is open
 * (its group), or, before any verdict, on a cable of a switch that already
 * had 2 other cables reported down within the window: a root cause is
 * coming, and its incident will take the group given then (the EventId of
 * that switch's first report). So the first two cables of a storm are
 * delivered as they come and never delayed; the rest are quiet. */
uint64_t fb_storm_symptom(struct fb_storm *s, const struct fb_topo_port *p, uint64_t event_id, uint64_t now_ns);
/* {"reports":N,"symptoms":N,"early_symptoms":N,"verdicts":N,"explained":N,"emitted":N,"emit_failed":N,
 * "recovered":N,"open_incidents":N,"last":{...} or null} (new reference;
 * NULL on ENOMEM). */
json_t *fb_storm_json(const struct fb_storm *s);

#endif

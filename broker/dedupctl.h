/* dedupctl.h - de-duplication and symptoms, a quiet stage (quiet.h): every
 * agent's link-state report (link_down, link_up; a node's own port aside)
 * is weighed before it is journaled:
 *   - a later report of a condition already reported within DedupWindow
 *     (the same cable, the same direction: its other end, another agent's
 *     poll or trap, the OpenSM plugin; fabric/dedup.h) is a duplicate:
 *     quiet (FB_QUIET_DUPLICATE), EventGroupId the first report's EventId
 *     (or the first's group when that was a symptom), counters
 *     dedup_sources and dedup_reports;
 *   - a first report of a cable down that belongs to a root cause (an open
 *     incident, or one about to be decided: fb_storm_symptom) is a symptom:
 *     quiet (FB_QUIET_SYMPTOM), EventGroupId the incident's;
 *   - anything else is left alone: the first report of a condition is
 *     never held back nor made quiet unless it is a symptom.
 * The sources of each condition are in /status "dedup" (docs/topology.md,
 * "De-duplication").
 *
 * Loop only; no I/O, nothing emitted.
 */
#ifndef FB_DEDUPCTL_H
#define FB_DEDUPCTL_H

#include "fb_event.h"

#include <jansson.h>
#include <stdint.h>

struct fb_broker;
struct fb_dedupctl;

/* window_ns 0: 2 s. NULL on ENOMEM. */
struct fb_dedupctl *fb_dedupctl_new(struct fb_broker *b, uint64_t window_ns);
void fb_dedupctl_free(struct fb_dedupctl *d);

/* The quiet stage (quiet.h fb_quiet_fn): may add FB_CTR_EVENT_GROUP_ID and
 * the dedup counters to ev; returns FB_QUIET_DUPLICATE, FB_QUIET_SYMPTOM or
 * 0. */
unsigned fb_dedupctl_stage(void *arg, struct fb_event *ev, uint64_t event_id, unsigned quiet, uint64_t now_ns);

/* {"window_ms":N,"reports":N,"conditions":N,"duplicates":N,"symptoms":N,
 *  "recent":[{"EventId":N,"Cable":"leaf1:3 - spine1:1","Direction":"down",
 *             "Reports":N,"Sources":["ib@h40 leaf1:3",...],"SourcesCut":N}]}
 * (the 16 newest conditions with more than one report; new reference, NULL
 * on ENOMEM). */
json_t *fb_dedupctl_json(const struct fb_dedupctl *d);

#endif

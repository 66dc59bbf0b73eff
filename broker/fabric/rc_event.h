/* rc_event.h - a root-cause verdict as the event the broker emits
 * (kinds switch_failed / switch_degraded / switch_recovered, agent
 * "fabricbusd"; docs/topology.md, "Root cause", and docs/mapping.md).
 *
 * The event model has fixed-size fields, so the lists go where a
 * switch-level event has room, and the counters always say how many:
 *   text            hosts left without a path, a Slurm hostlist (127 bytes)
 *   subj.peer_name  degraded hosts, a hostlist (63 bytes)
 *   subj.device     the symptoms' EventIds as ranges, "12-14,17" (63 bytes)
 * A list longer than its field keeps the names (or ranges) that fit, and
 * the counter lists_cut is 1; first_symptom_id..last_symptom_id still
 * bound every symptom, so a reader can replay them from the journal. The
 * Redfish form names the lists Oem.Fabricbus NoPath, Degraded, Symptoms,
 * and the incident is its EventGroupId.
 *
 * Pure: no clock, no I/O.
 */
#ifndef FB_RC_EVENT_H
#define FB_RC_EVENT_H

#include "fb_event.h"
#include "incident.h"
#include "rootcause.h"

#define FB_BROKER_AGENT_ID "fabricbusd"

/* The event for verdict v of incident inc (v->kind != FB_RC_NONE); seq
 * and ts_ns are the caller's. Returns 0, or -ENOMEM. */
int fb_rc_event_fill(const struct fb_rc_verdict *v, const struct fb_incident *inc, struct fb_event *ev);
/* The event saying that inc's switch has every one of its cables back. */
void fb_rc_event_recovered(const struct fb_incident *inc, const char *switch_name, size_t cables,
			   struct fb_event *ev);
/* names[0..n) as a hostlist in dst (dstsz bytes): as many of them (in
 * order) as fit. Returns 1 if all did, 0 if cut, -ENOMEM. */
int fb_rc_hostlist_fit(const char *const *names, size_t n, char *dst, size_t dstsz);
/* ids[0..n) (increasing) as ranges "12-14,17" in dst: as many as fit.
 * Returns 1 if all did, 0 if cut. */
int fb_rc_ranges_fit(const uint64_t *ids, size_t n, char *dst, size_t dstsz);

#endif

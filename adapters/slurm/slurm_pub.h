/* slurm_pub.h - the events fabricbus-slurm publishes about what it did.
 *
 * Every decision goes back to the broker as a kind=action event
 * (Redfish Fabricbus.1.0.AdapterActionTaken), one per node, so that
 * subscribers see why a node was drained or undrained:
 *   drain     Warning   "drain: <the Slurm reason>"
 *   undrain   OK        "undrain: <cause> stable for <StableFor>"
 *   skip      OK        "skip: <node> keeps reason '<reason>'"
 *   cap       Critical  "cap: <n> nodes drained by fabricbus, limit <limit>;
 *                        not draining <hostlist>" (no node; counters
 *                        node_count = refused, node_limit = limit)
 * In a dry run the texts start with "dry-run ". Each node event carries
 * counter cause_event_id and, in jobs, the running jobs on the node.
 * Texts longer than the event allows end in "...". Pure.
 */
#ifndef FBS_PUB_H
#define FBS_PUB_H

#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

void fbs_pub_drain(struct fb_event *ev, const char *node, const char *reason, uint64_t cause_id,
		   const char *jobs, int dry_run);
void fbs_pub_undrain(struct fb_event *ev, const char *node, const char *cause, uint64_t stable_ms,
		     uint64_t cause_id, const char *jobs, int dry_run);
void fbs_pub_skip(struct fb_event *ev, const char *node, const char *reason, uint64_t cause_id,
		  const char *jobs, int dry_run);
void fbs_pub_cap(struct fb_event *ev, unsigned count, unsigned limit, const char *hostlist,
		 size_t n_refused, uint64_t cause_id, int dry_run);

/* Append job id to a jobs list ("12,13"), if it fits FB_JOBS_MAX whole.
 * Returns 0, or -1 when it did not fit (the list stays well formed). */
int fbs_jobs_add(char *jobs, uint32_t job_id);

#endif

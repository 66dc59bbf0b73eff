/* dedup.h - one link-state condition, many reports: the same cable going
 * down (or up) reported from both of its ends, by an agent's poll and a
 * trap, by the OpenSM plugin, by an SNMP poll and trap, within a window,
 * is one condition (docs/topology.md, "De-duplication").
 *
 * The first report of a condition is the event; it is never held back (a
 * lone link_down is what drains act on). The later ones are duplicates:
 * the caller journals them quiet, in the first's group (EventGroupId = its
 * EventId), and this module keeps the sources (agent and cable end) that
 * reported the condition so far.
 *
 * A condition is a cable (its two ends, in a canonical order, or one end
 * when the peer is unknown) and a direction (down or up). A report in the
 * opposite direction starts a new condition: a cable that came back is
 * news. A condition lives window_ns from its first report; a report after
 * that is a new condition.
 *
 * Pure: an explicit clock in ns, no I/O (broker/dedupctl.c feeds it).
 * Memory: at most max conditions are kept, in a ring; past that the
 * oldest is forgotten (its next report is then a first report, never a
 * lost one). Lookups are O(1) on average (a hash of the cable).
 */
#ifndef FB_DEDUP_H
#define FB_DEDUP_H

#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

#define FB_DEDUP_MAX_SOURCES 8

/* One end of a cable: a switch port (switch GUID or topology key, port),
 * or a host port (port GUID, CA port). */
struct fb_dedup_end {
	uint64_t guid;
	uint16_t port;
};

struct fb_dedup_cond {
	struct fb_dedup_end a, b; /* a < b; b zero when the peer is unknown */
	uint8_t up;               /* 0: down, 1: up */
};

struct fb_dedup_source {
	char agent[FB_AGENT_ID_MAX];
	struct fb_dedup_end end;  /* the end it reported */
	uint64_t event_id;        /* its first report of the condition */
};

struct fb_dedup_entry {
	struct fb_dedup_cond c;
	uint64_t first_id;        /* the EventId of the first report */
	uint64_t group;           /* the duplicates' EventGroupId: first_id, or
				   * the caller's (the first was a symptom) */
	uint64_t first_ns;
	uint32_t reports;         /* all of them, the first included */
	uint32_t n_sources;       /* distinct (agent, end) pairs kept */
	uint32_t sources_cut;     /* distinct ones past FB_DEDUP_MAX_SOURCES */
	struct fb_dedup_source src[FB_DEDUP_MAX_SOURCES];
	int32_t next;             /* hash chain (internal) */
};

struct fb_dedup;

/* window_ns 0: 2 s; max 0: 4096 conditions. NULL on ENOMEM. */
struct fb_dedup *fb_dedup_new(uint64_t window_ns, size_t max);
void fb_dedup_free(struct fb_dedup *d);

/* The condition of a report on end `me` of a cable whose other end is
 * `peer` (peer.guid 0: unknown), in direction up (0 or 1). */
void fb_dedup_cond_make(struct fb_dedup_end me, struct fb_dedup_end peer, int up, struct fb_dedup_cond *c);

/* One report of condition c by agent at end `end`, with its EventId, at
 * now_ns. Returns 0 when it is the first report (a condition opens), 1
 * when it is a duplicate; *e (valid until the next call) is the condition
 * with this report counted and its source listed; the caller may set
 * (*e)->group of a first report. */
int fb_dedup_observe(struct fb_dedup *d, const struct fb_dedup_cond *c, const char *agent,
		     struct fb_dedup_end end, uint64_t event_id, uint64_t now_ns, struct fb_dedup_entry **e);

/* The conditions kept, newest first (i from 0); NULL past the end. The
 * ones older than the window are listed too, until their slot is reused. */
const struct fb_dedup_entry *fb_dedup_recent(const struct fb_dedup *d, size_t i);
uint64_t fb_dedup_window_ns(const struct fb_dedup *d);

#endif

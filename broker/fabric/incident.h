/* incident.h - which root causes tell one story: an incident per switch,
 * from its first verdict until every cable of the switch is back
 * (docs/topology.md, "Root cause").
 *
 * A second verdict on a switch whose incident is open (more reports
 * trickled in after the first window closed, or the switch went from
 * degraded to failed) updates that incident: same EventGroupId, an update
 * number one higher. Pure bookkeeping on an explicit clock, no I/O.
 *
 * Memory: at most max incidents open; a verdict past that forgets the
 * oldest (its switch's next verdict then opens a new incident).
 */
#ifndef FB_INCIDENT_H
#define FB_INCIDENT_H

#include <stddef.h>
#include <stdint.h>

struct fb_incident {
	uint64_t switch_guid;
	uint64_t group;      /* EventGroupId: the EventId of its first root cause */
	uint64_t opened_ns, updated_ns;
	uint32_t updates;    /* verdicts after the first */
	size_t no_path;      /* hosts without a path in its last event */
};

struct fb_incidents;

/* max 0: 1024. NULL on ENOMEM. */
struct fb_incidents *fb_incidents_new(size_t max);
void fb_incidents_free(struct fb_incidents *in);

/* A verdict on switch_guid at now_ns that leaves no_path hosts without a
 * path. If the switch has an open incident, it is updated (updates + 1);
 * else one opens with group new_group. Returns the incident (valid until
 * the next call), never NULL. */
const struct fb_incident *fb_incidents_verdict(struct fb_incidents *in, uint64_t switch_guid, uint64_t new_group,
					       uint64_t now_ns, size_t no_path);
/* The open incident of switch_guid, or NULL. */
const struct fb_incident *fb_incidents_find(const struct fb_incidents *in, uint64_t switch_guid);
/* Close the incident of switch_guid (every cable back): *out gets it.
 * Returns 1, or 0 if none was open. */
int fb_incidents_close(struct fb_incidents *in, uint64_t switch_guid, struct fb_incident *out);
size_t fb_incidents_count(const struct fb_incidents *in);
/* The i-th open incident (0 <= i < count), in no particular order. */
const struct fb_incident *fb_incidents_at(const struct fb_incidents *in, size_t i);

#endif

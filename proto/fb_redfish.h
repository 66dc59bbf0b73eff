/* fb_redfish.h - normalization of fabric events into Redfish Events.
 *
 * The mapping from (kind, link class, tech, severity) to a DMTF MessageId
 * lives here, in one table, and is documented in docs/mapping.md. Rendering
 * is hand-rolled JSON (no jansson) because it runs once per event on the
 * fan-out hot path. All functions are pure and thread-safe.
 */
#ifndef FB_REDFISH_H
#define FB_REDFISH_H

#include "fb_buf.h"
#include "fb_event.h"

#include <stdint.h>

/* Every origin fits: the longest, Systems/{node}/NetworkInterfaces/{device}
 * with both names fully percent-encoded, is 417 bytes. */
#define FB_REDFISH_ORIGIN_MAX 512
#define FB_REDFISH_DEFAULT_FABRIC "IB"

struct fb_redfish_class {
	const char *message_id; /* "Fabric.1.0.InterswitchLinkDropped"; static storage */
	const char *event_type; /* "Alert", "StatusChange", "ResourceAdded", ...; static, in a
				 * NUL-padded slot of FB_NAME_SLOT bytes (fb_event.h) */
	uint8_t severity;       /* enum fb_severity (from the registry or the event) */
};

/* Choose the registry message for an event. Never fails: unknown
 * combinations map to ResourceEvent.1.4.ResourceChanged / the event's severity. */
void fb_redfish_classify(const struct fb_event *ev, struct fb_redfish_class *out);

/* The OriginOfCondition path, e.g.
 *   /redfish/v1/Fabrics/IB/Switches/0x0008f10400411a08/Ports/17
 *   /redfish/v1/Systems/node003
 * default_fabric is used when the event names none. Path segments are
 * percent-encoded where needed. Returns the length, or FB_ETOOBIG. */
int fb_redfish_origin(const struct fb_event *ev, const char *default_fabric, char *out, size_t outsz);

/* Append one Redfish Event document (the envelope with one Events[] record)
 * for ev with the broker's EventId. Oem.Fabricbus carries every field of ev
 * but the fabric (which is in the origin), with u64 values above INT64_MAX
 * as decimal strings; fb_redfish_parse() reads it back. */
int fb_redfish_render(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
		      const char *default_fabric);

/* What rendering worked out on the way, for a caller that keeps it beside
 * the document (the fan-out ring): then nothing is classified or named twice. */
struct fb_redfish_facts {
	struct fb_redfish_class cls;
	int origin_len;                     /* fb_redfish_origin's answer; < 0: origin is "" */
	char origin[FB_REDFISH_ORIGIN_MAX]; /* NUL-terminated */
};
/* fb_redfish_render, also filling *f. */
int fb_redfish_render_facts(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
			    const char *default_fabric, struct fb_redfish_facts *f);

/* Append the notice a WebSocket subscriber gets when it fell too far behind:
 * a Redfish Event with MessageId Fabricbus.1.0.SubscriberEventsMissed and
 * Oem.Fabricbus {"Missed": missed, "ResumeSince": resume_since}. Reconnecting
 * with ?since=<resume_since> gets every missed event from the journal. */
int fb_redfish_render_missed(struct fb_buf *out, uint64_t missed, uint64_t resume_since);

#endif

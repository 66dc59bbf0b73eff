/* fb_redfish_parse.h - Redfish Event JSON back into an event: the inverse
 * of fb_redfish_render(), for adapters that receive the broker's stream
 * over WebSocket, SSE or Kafka and need the event, not the prose.
 *
 * Uses jansson (adapters are not on the broker's fan-out path).
 */
#ifndef FB_REDFISH_PARSE_H
#define FB_REDFISH_PARSE_H

#include "fb_event.h"
#include "fb_redfish.h"

#include <stddef.h>
#include <stdint.h>

/* Documents larger than this are refused before parsing. */
#define FB_REDFISH_PARSE_MAX (1u << 20)

struct fb_redfish_parsed {
	uint64_t event_id;          /* Events[0].EventId (decimal) */
	char message_id[96];
	char origin[FB_REDFISH_ORIGIN_MAX];
	int missed;                 /* 1: a Fabricbus.1.0.SubscriberEventsMissed notice */
	uint64_t missed_count, resume_since; /* from its Oem.Fabricbus */
};

/* Parse one Redfish Event document (as fb_redfish_render or
 * fb_redfish_render_missed produce: the envelope, Events[0], Oem.Fabricbus)
 * from untrusted bytes (need not be NUL-terminated) into ev and out.
 * ev gets agent_id, seq, ts_ns (from EventTimestamp; ns precision if present),
 * kind, severity, link_class, tech, subj (all fields the Oem and origin carry),
 * port_state, phys_state, counters (known names and "counter_<id>"), text, jobs.
 * Returns 0, or FB_EMALFORMED with a one-line reason in err naming the field.
 *
 * What comes back is what the document says, which is not always what the
 * agent sent:
 * - severity is MessageSeverity, i.e. the agent's severity raised to the
 *   registry's (docs/mapping.md, Severity);
 * - ts_ns has the precision of EventTimestamp (the renderer writes us);
 * - subj.fabric comes from an OriginOfCondition under /redfish/v1/Fabrics/
 *   (the broker's default fabric when the agent named none) and is empty
 *   for origins under /redfish/v1/Systems/.
 * Rendering the result again gives the same document. For a missed notice
 * (out->missed = 1) ev is zeroed but for severity, and event_id is 0.
 * Keys this parser does not know (Context, a newer broker's Oem keys) are
 * ignored; a known key of the wrong type or range is refused. On failure
 * ev and out are zeroed. err may be NULL. */
int fb_redfish_parse(const char *json, size_t len, struct fb_event *ev,
		     struct fb_redfish_parsed *out, char *err, size_t errsz);

#endif

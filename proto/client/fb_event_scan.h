/* fb_event_scan.h - what a subscriber needs from one of the broker's Redfish
 * Event documents, read without parsing it (the WebSocket thread of
 * fb_ws_client runs this for every message): the envelope's EventId, and
 * whether the document is a missed notice (Fabricbus.1.0.SubscriberEventsMissed,
 * proto/fb_redfish.h) and where to resume.
 *
 * It relies on what the broker writes: the first "Id" key is the envelope's
 * (records use EventId and MemberId), and quotes inside strings are escaped,
 * so a quoted key cannot match inside a value. Whitespace around ':' is
 * allowed. Pure functions, any thread.
 */
#ifndef FB_EVENT_SCAN_H
#define FB_EVENT_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* The envelope's "Id" as a decimal number (quoted or bare): 1 with *id set,
 * or 0 when there is none, it is not a number (a notice's "missed-N") or it
 * does not fit 64 bits. */
int fb_event_scan_id(const char *json, size_t len, uint64_t *id);

struct fb_event_missed {
	uint64_t missed;         /* Oem.Fabricbus.Missed, 0 if absent */
	uint64_t resume_since;   /* Oem.Fabricbus.ResumeSince */
	int have_resume;         /* 0: the notice has no ResumeSince */
};

/* 1 with *m filled when the document's MessageId is the missed notice's,
 * else 0. */
int fb_event_scan_missed(const char *json, size_t len, struct fb_event_missed *m);

#endif

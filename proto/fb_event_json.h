/* fb_event_json.h - the JSON form of an event, for humans and the CLI.
 * Uses jansson; not for hot paths. Field names match docs/event-model.md. */
#ifndef FB_EVENT_JSON_H
#define FB_EVENT_JSON_H

#include "fb_event.h"

#include <jansson.h>

/* Fill ev from a JSON object. Missing fields get defaults (severity from the
 * kind, ts_ns = now). On error returns FB_EMALFORMED and writes a message
 * naming the field into err (errsz bytes). seq is taken from the object if
 * present, else left 0 for the sender to assign. */
int fb_event_from_json(const json_t *obj, struct fb_event *ev, char *err, size_t errsz);

/* A new JSON object for ev (caller owns the reference). */
json_t *fb_event_to_json(const struct fb_event *ev);

#endif

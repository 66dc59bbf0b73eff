/* rf_filter.h - the Redfish EventService `$filter` of an SSE stream
 * (DSP0266 "Server-sent events"): parsing into a compiled program once per
 * stream, and evaluating it once per event.
 *
 * Grammar (docs/redfish.md, "$filter"):
 *   filter     := or
 *   or         := and { "or" and }
 *   and        := unary { "and" unary }
 *   unary      := "not" unary | "(" filter ")" | comparison
 *   comparison := property ("eq" | "ne") literal
 *   property   := EventFormatType | EventType | MessageId | RegistryPrefix
 *               | OriginResource | ResourceType | SubordinateResources
 *   literal    := unquoted word | 'single quoted' ('' inside) | "double quoted"
 * Keywords are case-insensitive, property names and values are not.
 *
 * Matching:
 *   MessageId eq Fabric.1.0.PortFailed   prefix, version and key must agree;
 *   MessageId eq Fabric.PortFailed       any version of that message;
 *   RegistryPrefix eq Fabric             the MessageId's registry;
 *   OriginResource eq /redfish/v1/...    the OriginOfCondition, exactly, or
 *                                        also any resource below it when the
 *                                        filter has SubordinateResources eq true
 *                                        (that term itself is always true);
 *   ResourceType eq Port                 the schema of the OriginOfCondition
 *                                        ("#Port.v1_11_0.Port" accepted too);
 *   EventType eq Alert, EventFormatType eq Event.
 *
 * Pure: no lws, no I/O; the compiled filter is immutable, so one stream's
 * filter can be evaluated from any thread.
 */
#ifndef FB_RF_FILTER_H
#define FB_RF_FILTER_H

#include <stddef.h>
#include <stdint.h>

#define FB_RF_FILTER_MAX 4096 /* bytes of $filter text accepted */
#define FB_RF_FILTER_TERMS 64 /* comparisons in one filter */
#define FB_RF_FILTER_DEPTH 32 /* nested parentheses / not */

/* What a filter looks at, computed once per event (ws_ring.c keeps one per
 * message). Strings are NUL-terminated; origin may be "". */
struct fb_rf_attrs {
	const char *message_id;    /* "Fabric.1.0.PortFailed" */
	const char *event_type;    /* "Alert" */
	const char *origin;        /* "/redfish/v1/Fabrics/IB/Switches/sw1/Ports/3" */
	const char *resource_type; /* "Port"; "" when unknown */
	const char *format;        /* "Event" */
	/* parts of message_id, from fb_rf_attrs_init */
	uint8_t prefix_len;        /* "Fabric" */
	uint8_t version_len;       /* "1.0" (0 when the id has no version) */
	uint8_t key_off;           /* "PortFailed" starts here */
};

/* Fill a from the event's MessageId, EventType and OriginOfCondition (the
 * strings are referenced, not copied) and derive ResourceType. */
void fb_rf_attrs_init(struct fb_rf_attrs *a, const char *message_id, const char *event_type,
		      const char *origin);

/* The Redfish schema name of the resource at path (the collection its last
 * segment lives in: ".../Ports/3" -> "Port", ".../Ports/3/Metrics" ->
 * "PortMetrics"); "" when not known. */
const char *fb_rf_origin_type(const char *path);

/* Why a filter was refused: the Base registry message to answer with, the
 * offending token (its first 63 bytes) and a sentence for humans. */
struct fb_rf_filter_err {
	const char *message; /* "QueryParameterValueFormatError", "...TypeError" */
	char token[64];
	char detail[320];
};

struct fb_rf_filter;

/* Compile text (len bytes, no NUL needed), already URL-decoded: lws
 * decodes %XX and + in query arguments, so decoding again would turn a
 * literal "%2520" into "%20". Returns 0
 * and *out (free with fb_rf_filter_free), or FB_EMALFORMED / FB_ETOOBIG /
 * -ENOMEM with *err filled. An empty or all-blank text is an error. */
int fb_rf_filter_compile(const char *text, size_t len, struct fb_rf_filter **out,
			 struct fb_rf_filter_err *err);
void fb_rf_filter_free(struct fb_rf_filter *f);

/* 1 if the event passes; a NULL filter passes everything. */
int fb_rf_filter_match(const struct fb_rf_filter *f, const struct fb_rf_attrs *a);

/* The filter as given (NUL-terminated), for listings. */
const char *fb_rf_filter_text(const struct fb_rf_filter *f);

#endif

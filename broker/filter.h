/* filter.h - a subscriber's filter (WebSocket query string, Kafka topic
 * subscription, and the SSE and push subscriptions to come): parsing and
 * matching.
 *
 * Pure functions, no lws and no allocation, so the parsing rules are unit
 * tested without sockets. The query arrives as lws hands it over: one
 * "name=value" fragment per '&'-separated argument.
 *
 *   since=<uint64>                       replay events with EventId > since
 *   prefix=<MessageId prefix>[,...]      "Fabric." or "Fabric.1.0.InterswitchLink"
 *   severity=<OK|Warning|Critical>[,...] case-insensitive
 *   origin=<OriginOfCondition prefix>    matched on whole path segments
 *   quiet=<0|1>                          1: also quiet events (FB_CTR_QUIET:
 *                                        symptoms, duplicates, over a rate
 *                                        limit, flap transitions); 0 default
 *   all=<0|1>                            the same as quiet=
 *
 * Unknown names are ignored (forward compatible); a known name with a bad
 * value is an error that names the parameter, so the client gets a 400.
 */
#ifndef FB_FILTER_H
#define FB_FILTER_H

#include "fb_buf.h"

#include <stddef.h>
#include <stdint.h>

#define FB_FILTER_PREFIXES 8
#define FB_FILTER_PREFIX_MAX 128 /* including the NUL */
#define FB_FILTER_ORIGIN_MAX 256 /* == FB_REDFISH_ORIGIN_MAX */
#define FB_FILTER_ARG_MAX 1100   /* longest fragment worth looking at */

/* A plain value, owned by whoever declared it. Zeroed = match everything,
 * no since. */
struct fb_filter {
	int has_since;
	uint64_t since;
	unsigned n_prefix;
	char prefix[FB_FILTER_PREFIXES][FB_FILTER_PREFIX_MAX];
	unsigned sev_mask; /* bit (1 << enum fb_severity); 0 = any */
	char origin[FB_FILTER_ORIGIN_MAX]; /* "" = any */
	int quiet; /* 1: quiet events too (quiet=1); the subscription applies
		    * it (fb_filter_quiet_ok): a Kafka topic takes them all */
};

void fb_filter_init(struct fb_filter *f);

/* Apply one "name=value" fragment. The value is taken verbatim: lws has
 * already decoded %XX escapes while parsing the request line (decoding
 * again would turn an origin's "%2520" into a space). Returns 0, or
 * FB_EMALFORMED / FB_ETOOBIG with *why set to a static message naming the
 * parameter. */
int fb_filter_arg(struct fb_filter *f, const char *arg, const char **why);

/* 1 if an event with this MessageId, severity and OriginOfCondition passes.
 * origin is only read when the filter has an origin. */
int fb_filter_match(const struct fb_filter *f, const char *message_id, unsigned severity,
		       const char *origin);

/* 1 if matching needs the origin string (so callers can skip computing it). */
static inline int fb_filter_wants_origin(const struct fb_filter *f)
{
	return f->origin[0] != '\0';
}

/* 1 if a subscriber with this filter gets an event quiet for this reason
 * (0: not quiet). */
static inline int fb_filter_quiet_ok(const struct fb_filter *f, unsigned quiet)
{
	return !quiet || f->quiet;
}

/* Append the filter as a JSON object (for /status). */
int fb_filter_json(const struct fb_filter *f, struct fb_buf *out);

#endif

/* ratectl.h - rate limits per agent and per subject as a quiet stage
 * (quiet.h): every agent event still loud after the stages before it goes
 * to fabric/ratelimit.c before it is journaled; an event over
 * RateLimitSubject (about one switch port or node) or RateLimitAgent (of
 * one agent) within RateLimitWindow is quiet (FB_QUIET_RATE_LIMITED), and
 * the broker emits (agent "fabricbusd", emit.c) one events_suppressed
 * (Fabricbus.1.0.EventsSuppressed) per limited agent or subject and window
 * with the count and the EventId range, and a last one (LimitLifted) after
 * a whole window under the limit (docs/topology.md, "Rate limits").
 *
 * Loop only: the stage and the timer run on the loop; summaries are emitted
 * from the loop's own callbacks, never from inside the stage's call.
 */
#ifndef FB_RATECTL_H
#define FB_RATECTL_H

#include "fb_event.h"

#include <jansson.h>
#include <stdint.h>

struct fb_broker;
struct fb_ratectl;

/* With the broker's RateLimit* settings; NULL when both limits are 0 (off)
 * or on ENOMEM (*err -ENOMEM). */
struct fb_ratectl *fb_ratectl_new(struct fb_broker *b, int *err);
void fb_ratectl_free(struct fb_ratectl *r);
/* The quiet stage (fb_quiet_fn): FB_QUIET_RATE_LIMITED or 0. */
unsigned fb_ratectl_quiet(void *arg, struct fb_event *ev, uint64_t event_id, unsigned quiet, uint64_t now_ns);
/* The subject an event counts against, named as its OriginOfCondition
 * names it: "node <name>" (a node's own port, or only a node known),
 * "switch <name or address> port <n>", "guid <hex> port <n>"; "" when it
 * names none. */
void fb_ratectl_subject(const struct fb_event *ev, char *out, size_t outsz);
/* /status "ratelimit": {"quiet":N,"summaries":N,"lifted":N,"limited":N,
 * "untracked":N,"not_emitted":N} (new reference; NULL on ENOMEM). */
json_t *fb_ratectl_json(const struct fb_ratectl *r);

#endif

/* ratelimit.h - rate limits per agent and per subject, with explicit
 * "suppressed N" summaries (docs/topology.md, "Rate limits").
 *
 * Windows: each key (an agent, or a subject: a switch port or a node)
 * counts its events in windows of window_ns that start at its first event
 * and follow each other. Within a window the first `limit` events pass; the
 * rest are over the limit (the caller makes them quiet, FB_QUIET_RATE_LIMITED)
 * and are counted with their first and last EventId. When a window with
 * events over the limit ends, one summary says how many (FB_RL_SUMMARY);
 * when a whole window then ends with the key under its limit, a last
 * summary says the limit is lifted and how many were suppressed since it
 * began (FB_RL_LIFTED). So every event over a limit is in exactly one
 * summary of each kind, and nothing disappears silently.
 *
 * A subject's limit is checked first: an event over it is counted for the
 * subject only; an event under it then counts against its agent's limit.
 * A limit of 0 is off.
 *
 * Pure: an explicit clock in ns, no I/O, tested on it
 * (tests/unit/test_ratelimit.c). Memory: at most max_keys keys are
 * followed; a key not limited and idle for two windows gives its slot to
 * the next; past that a new key is not limited (its events pass) and is
 * counted as untracked.
 */
#ifndef FB_RATELIMIT_H
#define FB_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#define FB_RL_KEY_MAX 96 /* including the NUL */

struct fb_rl_cfg {
	uint32_t agent_limit;   /* events per window of one agent (0: off) */
	uint32_t subject_limit; /* events per window about one subject (0: off) */
	uint64_t window_ns;     /* 0: 10 s */
	size_t max_keys;        /* 0: 4096 */
};

enum fb_rl_scope { FB_RL_AGENT = 0, FB_RL_SUBJECT = 1 };
enum fb_rl_what { FB_RL_SUMMARY = 1, FB_RL_LIFTED = 2 };

struct fb_rl_out {
	uint8_t what;           /* enum fb_rl_what */
	uint8_t scope;          /* enum fb_rl_scope */
	char key[FB_RL_KEY_MAX];
	uint64_t suppressed;    /* SUMMARY: in this window; LIFTED: since the limit began */
	uint64_t first_id, last_id; /* the EventIds suppressed, over the same span */
	uint64_t span_ns;       /* SUMMARY: the window; LIFTED: since the limit began */
};

struct fb_rl;

/* NULL on ENOMEM. */
struct fb_rl *fb_rl_new(const struct fb_rl_cfg *cfg);
void fb_rl_free(struct fb_rl *r);
const struct fb_rl_cfg *fb_rl_cfg(const struct fb_rl *r);

/* One event of agent (never NULL) about subject (NULL or "": none; the
 * caller's key text, cut at FB_RL_KEY_MAX - 1 bytes) at now_ns, EventId
 * event_id. Returns FB_RL_SUBJECT + 1 or FB_RL_AGENT + 1 when the event is
 * over that limit (the caller makes it quiet), else 0. The key's window,
 * if it ended by now_ns, is closed first: its summary waits for fb_rl_take. */
int fb_rl_event(struct fb_rl *r, const char *agent, const char *subject, uint64_t event_id, uint64_t now_ns);
/* Close the windows of limited keys that ended by now_ns (summaries and
 * lifted limits), then hand out up to max waiting ones in order; returns
 * how many (call again while it returns max). */
size_t fb_rl_take(struct fb_rl *r, uint64_t now_ns, struct fb_rl_out *out, size_t max);
/* Summaries waiting for fb_rl_take (an event closed a key's window). */
size_t fb_rl_ready(const struct fb_rl *r);
/* When the next window of a limited key ends (0: none is limited). */
uint64_t fb_rl_next_due(const struct fb_rl *r);
/* Keys over their limit now; keys not followed for want of room. */
size_t fb_rl_limited(const struct fb_rl *r);
uint64_t fb_rl_untracked(const struct fb_rl *r);

#endif

/* quiet.h - the stages that may make an event quiet before it is journaled.
 *
 * A quiet event (FB_CTR_QUIET, enum fb_quiet in fb_event.h) is journaled,
 * counted, numbered and handed to every output like any other; the default
 * WebSocket, SSE and push subscriptions skip it, and a subscriber that asks
 * (quiet=1) gets it with Oem.Fabricbus.Quiet naming the reason. Nothing is
 * dropped: quiet is a flag for readers, not a filter on the journal.
 *
 * ingest.c calls fb_quiets_apply on every agent event after enrichment and
 * before fb_journal_append, so the flag is in the journal and a since=
 * replay gets it back. The broker's own events (emit.c) are not staged:
 * root causes and summaries are what default subscribers are for.
 *
 * A stage is a function the loop calls in registration order (rate limits,
 * flap control, de-duplication, ...): it sees the event (its EventId
 * already assigned), the reason given by the stages before it (0: loud so
 * far) and the time, and returns its own reason or 0. It must not block nor
 * emit from inside the call (queue, then emit from a loop callback, as
 * flapctl.c does). The smallest non-zero reason is kept.
 *
 * When the event's FB_COUNTERS_MAX counters are all taken, the flag cannot
 * be set: the event stays loud (delivered to everyone, never dropped and
 * never stripped of an agent's counter) and /status "quiet".counters_full
 * counts it. An agent's own FB_CTR_QUIET is removed first: the counter is
 * the broker's word, an agent cannot hide its events from default readers.
 */
#ifndef FB_QUIET_H
#define FB_QUIET_H

#include "fb_event.h"

#include <jansson.h>
#include <stdint.h>

#define FB_QUIET_STAGES_MAX 8

/* Returns the reason this stage makes ev quiet for (enum fb_quiet), or 0.
 * quiet: the reason the stages before it gave, 0 if none. A stage may add
 * counters of its own to ev (de-duplication adds EventGroupId and its
 * counts, dedupctl.h); it must not remove or change the agent's. */
typedef unsigned (*fb_quiet_fn)(void *arg, struct fb_event *ev, uint64_t event_id, unsigned quiet,
				uint64_t now_ns);

struct fb_quiet_stage {
	const char *name; /* for /status and logs: "ratelimit", "flap" */
	fb_quiet_fn fn;
	void *arg;
};

struct fb_quiets {
	struct fb_quiet_stage v[FB_QUIET_STAGES_MAX];
	unsigned n;
	uint64_t by_reason[FB_QUIET__END]; /* events made quiet, per reason */
	uint64_t counters_full;            /* would have been quiet: no counter slot left */
	uint64_t agent_set;                /* agents' FB_CTR_QUIET removed */
};

/* Add a stage. 0, or -ENOSPC past FB_QUIET_STAGES_MAX. */
int fb_quiets_add(struct fb_quiets *q, const char *name, fb_quiet_fn fn, void *arg);

/* Run every stage on ev and set its flag. Returns 1 if ev changed (the
 * agent's bytes no longer say what every sink must see: re-encode), else 0. */
int fb_quiets_apply(struct fb_quiets *q, struct fb_event *ev, uint64_t event_id, uint64_t now_ns);

/* {"symptom":n,"duplicate":n,"rate_limited":n,"flap":n,"counters_full":n,"agent_set":n} */
json_t *fb_quiets_json(const struct fb_quiets *q);

#endif

/* ratelimit.c - per-agent and per-subject windows (see ratelimit.h). */
#include "ratelimit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct key {
	uint8_t used, scope, limited;
	char name[FB_RL_KEY_MAX];
	uint64_t start_ns;          /* the current window's start */
	uint64_t count;             /* events in it */
	uint64_t n, first, last;    /* suppressed in it */
	uint64_t total, tfirst, tlast, since_ns; /* since the limit began */
};

struct fb_rl {
	struct fb_rl_cfg cfg;
	struct key *v;
	size_t cap, used;
	size_t *lim;                /* indexes of limited keys */
	size_t n_lim;
	struct fb_rl_out *ready;    /* summaries waiting for fb_rl_take (ring) */
	size_t r_head, r_n, r_cap;
	uint64_t untracked, lost;
	uint64_t swept_ns;          /* the last sweep (0: none yet) */
};

struct fb_rl *fb_rl_new(const struct fb_rl_cfg *cfg)
{
	struct fb_rl *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->cfg = *cfg;
	if (!r->cfg.window_ns)
		r->cfg.window_ns = 10000000000ULL;
	if (!r->cfg.max_keys)
		r->cfg.max_keys = 4096;
	r->cap = 16;
	while (r->cap < r->cfg.max_keys * 2)
		r->cap *= 2;
	/* Each limited key has at most two summaries waiting (a window's and
	 * the lift), and only limited keys make them. */
	r->r_cap = r->cfg.max_keys * 2;
	r->v = calloc(r->cap, sizeof(*r->v));
	r->lim = calloc(r->cfg.max_keys, sizeof(*r->lim));
	r->ready = calloc(r->r_cap, sizeof(*r->ready));
	if (!r->v || !r->lim || !r->ready) {
		fb_rl_free(r);
		return NULL;
	}
	return r;
}

void fb_rl_free(struct fb_rl *r)
{
	if (!r)
		return;
	free(r->v);
	free(r->lim);
	free(r->ready);
	free(r);
}

const struct fb_rl_cfg *fb_rl_cfg(const struct fb_rl *r) { return &r->cfg; }

static size_t hash(unsigned scope, const char *s)
{
	uint64_t h = 1469598103934665603ULL ^ scope; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)(h ^ (h >> 29));
}

static int stale(const struct fb_rl *r, const struct key *k, uint64_t now)
{
	return !k->limited && now - k->start_ns >= 2 * r->cfg.window_ns;
}

static size_t slot_of(const struct fb_rl *r, const struct key *v, unsigned scope, const char *name)
{
	size_t mask = r->cap - 1, i = hash(scope, name) & mask;
	while (v[i].used)
		i = (i + 1) & mask;
	return i;
}

/* The table is full: rebuild it without the stale keys (those off every
 * probe path cannot be reused in place). At most once a window, so that a
 * table full of live keys costs one pass a window, not one per event.
 * 1 if room was made. */
static int sweep(struct fb_rl *r, uint64_t now)
{
	if (r->swept_ns && now - r->swept_ns < r->cfg.window_ns)
		return 0;
	r->swept_ns = now ? now : 1;
	struct key *v = calloc(r->cap, sizeof(*v));
	if (!v)
		return 0;
	size_t used = 0, n_lim = 0;
	for (size_t i = 0; i < r->cap; i++) {
		const struct key *k = &r->v[i];
		if (!k->used || stale(r, k, now))
			continue;
		size_t j = slot_of(r, v, k->scope, k->name);
		v[j] = *k;
		used++;
		if (k->limited)
			r->lim[n_lim++] = j;
	}
	int room = used < r->used;
	free(r->v);
	r->v = v;
	r->used = used;
	r->n_lim = n_lim;
	return room;
}

static struct key *lookup(struct fb_rl *r, unsigned scope, const char *name, uint64_t now)
{
	size_t mask = r->cap - 1, i = hash(scope, name) & mask;
	struct key *reuse = NULL;
	for (size_t n = 0; n < r->cap; n++, i = (i + 1) & mask) {
		struct key *k = &r->v[i];
		if (!k->used)
			break;
		if (k->scope == scope && strcmp(k->name, name) == 0)
			return k;
		if (!reuse && stale(r, k, now))
			reuse = k;
	}
	struct key *k = reuse;
	if (!k && r->used >= r->cfg.max_keys && sweep(r, now))
		return lookup(r, scope, name, now);
	if (!k) {
		if (r->used >= r->cfg.max_keys) {
			r->untracked++;
			return NULL;
		}
		k = &r->v[i];
		r->used++;
	}
	memset(k, 0, sizeof(*k));
	k->used = 1;
	k->scope = (uint8_t)scope;
	memcpy(k->name, name, strlen(name) + 1);
	k->start_ns = now;
	return k;
}

static void put(struct fb_rl *r, const struct key *k, unsigned what)
{
	if (r->r_n == r->r_cap) {
		r->lost++; /* cannot happen: see r_cap */
		return;
	}
	struct fb_rl_out *o = &r->ready[(r->r_head + r->r_n++) % r->r_cap];
	if (what == FB_RL_SUMMARY)
		*o = (struct fb_rl_out){ FB_RL_SUMMARY, k->scope, {0}, k->n, k->first, k->last, r->cfg.window_ns };
	else /* start is the end of the window under the limit */
		*o = (struct fb_rl_out){ FB_RL_LIFTED, k->scope, {0}, k->total, k->tfirst, k->tlast,
					 k->start_ns - k->since_ns };
	memcpy(o->key, k->name, sizeof(o->key));
}

static void unlimit(struct fb_rl *r, struct key *k)
{
	size_t idx = (size_t)(k - r->v);
	for (size_t i = 0; i < r->n_lim; i++)
		if (r->lim[i] == idx) {
			r->lim[i] = r->lim[--r->n_lim];
			break;
		}
	k->limited = 0;
}

/* Close the key's windows that ended by now: a summary for one with
 * events over the limit, the lift for one that ended under it. */
static void roll(struct fb_rl *r, struct key *k, uint64_t now)
{
	uint64_t w = r->cfg.window_ns;
	while (now - k->start_ns >= w) {
		if (k->n) {
			put(r, k, FB_RL_SUMMARY);
			k->n = 0;
		} else if (k->limited) {
			k->start_ns += w; /* the lift covers up to the end of the quiet window */
			put(r, k, FB_RL_LIFTED);
			unlimit(r, k);
			k->count = 0;
			break;
		}
		k->count = 0;
		if (!k->limited)
			break;
		k->start_ns += w;
	}
	if (now - k->start_ns >= w) { /* not limited: the next window starts now */
		k->start_ns = now;
		k->count = 0;
	}
}

/* Count one event; 1 if it is over the key's limit. */
static int count(struct fb_rl *r, struct key *k, uint32_t limit, uint64_t id, uint64_t now)
{
	roll(r, k, now);
	if (++k->count <= limit)
		return 0;
	if (!k->limited) {
		if (r->n_lim == r->cfg.max_keys)
			return 0; /* cannot happen: at most max_keys are followed */
		r->lim[r->n_lim++] = (size_t)(k - r->v);
		k->limited = 1;
		k->total = 0;
		k->tfirst = id;
		k->since_ns = k->start_ns;
	}
	if (!k->n)
		k->first = id;
	k->n++;
	k->last = id;
	k->total++;
	k->tlast = id;
	return 1;
}

int fb_rl_event(struct fb_rl *r, const char *agent, const char *subject, uint64_t event_id, uint64_t now_ns)
{
	char name[FB_RL_KEY_MAX];
	if (r->cfg.subject_limit && subject && subject[0]) {
		snprintf(name, sizeof(name), "%s", subject);
		struct key *k = lookup(r, FB_RL_SUBJECT, name, now_ns);
		if (k && count(r, k, r->cfg.subject_limit, event_id, now_ns))
			return FB_RL_SUBJECT + 1;
	}
	if (r->cfg.agent_limit) {
		snprintf(name, sizeof(name), "%s", agent);
		struct key *k = lookup(r, FB_RL_AGENT, name, now_ns);
		if (k && count(r, k, r->cfg.agent_limit, event_id, now_ns))
			return FB_RL_AGENT + 1;
	}
	return 0;
}

size_t fb_rl_take(struct fb_rl *r, uint64_t now_ns, struct fb_rl_out *out, size_t max)
{
	for (size_t i = 0; i < r->n_lim;) {
		struct key *k = &r->v[r->lim[i]];
		roll(r, k, now_ns);
		if (k->limited) /* else unlimit moved another key to i */
			i++;
	}
	size_t n = 0;
	for (; n < max && r->r_n; n++, r->r_n--) {
		out[n] = r->ready[r->r_head];
		r->r_head = (r->r_head + 1) % r->r_cap;
	}
	return n;
}

uint64_t fb_rl_next_due(const struct fb_rl *r)
{
	uint64_t due = 0;
	for (size_t i = 0; i < r->n_lim; i++) {
		uint64_t d = r->v[r->lim[i]].start_ns + r->cfg.window_ns;
		if (!due || d < due)
			due = d;
	}
	return due;
}

size_t fb_rl_ready(const struct fb_rl *r) { return r->r_n; }
size_t fb_rl_limited(const struct fb_rl *r) { return r->n_lim; }
uint64_t fb_rl_untracked(const struct fb_rl *r) { return r->untracked; }

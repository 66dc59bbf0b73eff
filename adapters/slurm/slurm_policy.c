/* slurm_policy.c - per-node conditions, hold-down, stability window and the cap. */
#include "slurm_policy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fbs_policy {
	struct fbs_policy_cfg cfg;
	struct fbs_node **nodes; /* sorted by name */
	size_t n, cap;
	unsigned cap_base;
	int cap_base_known;
	int cap_episode;
	char (*slurm)[FB_NAME_MAX]; /* the nodes slurmctld knows, sorted */
	size_t n_slurm;
	int slurm_known;            /* 0: not read yet, every node counts */
};

void fbs_batch_free(struct fbs_batch *b)
{
	free(b->t);
	b->t = NULL;
	b->n = 0;
}

void fbs_decision_free(struct fbs_decision *d)
{
	for (size_t i = 0; i < d->n_batches; i++)
		fbs_batch_free(&d->batches[i]);
	free(d->batches);
	free(d->refused);
	free(d->not_slurm);
	memset(d, 0, sizeof(*d));
}

int fbs_policy_new(const struct fbs_policy_cfg *cfg, struct fbs_policy **out)
{
	struct fbs_policy *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	*out = p;
	return 0;
}

static void node_free(struct fbs_node *n)
{
	free(n->conds);
	free(n);
}

void fbs_policy_free(struct fbs_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		node_free(p->nodes[i]);
	free(p->nodes);
	free(p->slurm);
	free(p);
}

/* Index of name, or where it would go (*found = 0). */
static size_t lookup(const struct fbs_policy *p, const char *name, int *found)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->nodes[mid]->name, name);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

static struct fbs_node *find(const struct fbs_policy *p, const char *name)
{
	int found;
	size_t i = lookup(p, name, &found);
	return found ? p->nodes[i] : NULL;
}

static struct fbs_node *get_or_add(struct fbs_policy *p, const char *name)
{
	int found;
	size_t i = lookup(p, name, &found);
	if (found)
		return p->nodes[i];
	if (strlen(name) >= FB_NAME_MAX)
		return NULL;
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 64;
		struct fbs_node **nn = realloc(p->nodes, nc * sizeof(*nn));
		if (!nn)
			return NULL;
		p->nodes = nn;
		p->cap = nc;
	}
	struct fbs_node *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	strcpy(n->name, name);
	memmove(&p->nodes[i + 1], &p->nodes[i], (p->n - i) * sizeof(p->nodes[0]));
	p->nodes[i] = n;
	p->n++;
	return n;
}

/* Drop a node that holds nothing any more. */
static void maybe_gc(struct fbs_policy *p, struct fbs_node *n)
{
	if (n->hold != FBS_H_NONE || n->n_conds)
		return;
	int found;
	size_t i = lookup(p, n->name, &found);
	if (!found)
		return;
	memmove(&p->nodes[i], &p->nodes[i + 1], (p->n - i - 1) * sizeof(p->nodes[0]));
	p->n--;
	node_free(n);
}

static struct fbs_cond *cond_find(struct fbs_node *n, unsigned type, const char *key)
{
	for (size_t i = 0; i < n->n_conds; i++)
		if (n->conds[i].type == type && strcmp(n->conds[i].key, key) == 0)
			return &n->conds[i];
	return NULL;
}

static int cond_add(struct fbs_node *n, const struct fbs_cond *c)
{
	if (n->n_conds == n->cap_conds) {
		size_t nc = n->cap_conds ? n->cap_conds * 2 : 4;
		struct fbs_cond *cc = realloc(n->conds, nc * sizeof(*cc));
		if (!cc)
			return -ENOMEM;
		n->conds = cc;
		n->cap_conds = nc;
	}
	n->conds[n->n_conds++] = *c;
	n->clear_since_ms = 0; /* a new condition restarts the stability window */
	return 0;
}

static void cond_remove(struct fbs_node *n, struct fbs_cond *c, uint64_t now)
{
	size_t i = (size_t)(c - n->conds);
	memmove(&n->conds[i], &n->conds[i + 1], (n->n_conds - i - 1) * sizeof(*c));
	if (--n->n_conds == 0)
		n->clear_since_ms = now;
}

static int start(struct fbs_node *n, const struct fbs_obs *o, uint64_t now)
{
	struct fbs_cond *c = cond_find(n, o->type, o->key);
	if (c) {
		if (o->type != FBS_C_FLAP)
			return 0; /* goes on: it keeps its start */
		c->until_ms = now + o->window_ms; /* flapping again: the window moves on */
		c->up_seen = 0;
		return 1;
	}
	struct fbs_cond nc;
	memset(&nc, 0, sizeof(nc));
	nc.type = o->type;
	snprintf(nc.key, sizeof(nc.key), "%s", o->key);
	snprintf(nc.cause, sizeof(nc.cause), "%s", o->cause);
	nc.event_id = o->event_id;
	nc.since_ms = now;
	nc.hold_ms = o->hold_ms;
	nc.until_ms = o->type == FBS_C_FLAP ? now + o->window_ms : 0;
	int rc = cond_add(n, &nc);
	if (rc)
		return rc;
	n->suppressed = 0; /* a new condition: Slurm is asked again */
	return 1;
}

static int clear(struct fbs_node *n, unsigned type, const char *key, uint64_t now)
{
	struct fbs_cond *c = cond_find(n, type, key);
	if (!c)
		return 0;
	cond_remove(n, c, now);
	return 1;
}

static int link_up(struct fbs_node *n, const char *key, uint64_t now)
{
	int changed = clear(n, FBS_C_LINK_DOWN, key, now);
	changed |= clear(n, FBS_C_DEGRADED, key, now);
	struct fbs_cond *f = cond_find(n, FBS_C_FLAP, key);
	if (f && now >= f->until_ms) {
		cond_remove(n, f, now);
		changed = 1;
	} else if (f && !f->up_seen) {
		f->up_seen = 1; /* clears when the window ends, unless it goes down again */
		changed = 1;
	}
	return changed;
}

static int apply(struct fbs_node *n, const struct fbs_obs *o, uint64_t now)
{
	int changed = 0;
	struct fbs_cond *f;
	switch (o->op) {
	case FBS_OP_START:
		return start(n, o, now);
	case FBS_OP_CLEAR:
		return clear(n, o->type, o->key, now);
	case FBS_OP_LINK_DOWN:
		if ((f = cond_find(n, FBS_C_FLAP, o->key)) && f->up_seen) {
			f->up_seen = 0;
			changed = 1;
		}
		if (o->drains) {
			int rc = start(n, o, now);
			return rc < 0 ? rc : (rc | changed);
		}
		return changed;
	case FBS_OP_LINK_UP:
		return link_up(n, o->key, now);
	default:
		return 0;
	}
}

int fbs_policy_observe(struct fbs_policy *p, const char *node, const struct fbs_obs *o,
		       uint64_t now_ms)
{
	int creates = o->op == FBS_OP_START || (o->op == FBS_OP_LINK_DOWN && o->drains);
	struct fbs_node *n = creates ? get_or_add(p, node) : find(p, node);
	if (!n)
		return creates ? -ENOMEM : 0;
	int rc = apply(n, o, now_ms);
	maybe_gc(p, n);
	return rc;
}

int fbs_policy_observe_all(struct fbs_policy *p, const struct fbs_obs *o, uint64_t now_ms)
{
	if (o->op != FBS_OP_CLEAR && o->op != FBS_OP_LINK_UP)
		return 0;
	int changed = 0;
	for (size_t i = p->n; i-- > 0;) { /* backwards: gc removes at i */
		struct fbs_node *n = p->nodes[i];
		changed |= apply(n, o, now_ms);
		maybe_gc(p, n);
	}
	return changed;
}

/* ---- cap ---------------------------------------------------------------------- */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

int fbs_policy_set_slurm_nodes(struct fbs_policy *p, const char *const *names, size_t n)
{
	char (*v)[FB_NAME_MAX] = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		snprintf(v[i], FB_NAME_MAX, "%s", names[i]);
	qsort(v, n, sizeof(*v), cmp_name);
	free(p->slurm);
	p->slurm = v;
	p->n_slurm = n;
	p->slurm_known = 1;
	return 0;
}

static int is_slurm_node(const struct fbs_policy *p, const char *name)
{
	return !p->slurm_known || bsearch(name, p->slurm, p->n_slurm, sizeof(*p->slurm), cmp_name);
}

void fbs_policy_set_cap_base(struct fbs_policy *p, unsigned nodes)
{
	p->cap_base = nodes;
	p->cap_base_known = 1;
}

unsigned fbs_policy_limit(const struct fbs_policy *p)
{
	uint64_t lim = UINT32_MAX;
	if (p->cfg.max_nodes && p->cfg.max_nodes < lim)
		lim = p->cfg.max_nodes;
	if (p->cfg.max_percent) {
		uint64_t base = p->cap_base_known ? p->cap_base : 0;
		uint64_t pct = (base * p->cfg.max_percent + 99) / 100; /* ceil */
		if (pct < lim)
			lim = pct;
	}
	return (unsigned)lim;
}

unsigned fbs_policy_held(const struct fbs_policy *p)
{
	unsigned h = 0;
	for (size_t i = 0; i < p->n; i++)
		h += p->nodes[i]->hold != FBS_H_NONE;
	return h;
}

int fbs_policy_cap_episode(const struct fbs_policy *p) { return p->cap_episode; }
void fbs_policy_set_cap_episode(struct fbs_policy *p, int on) { p->cap_episode = !!on; }

/* ---- decisions ---------------------------------------------------------------- */

void fbs_policy_reason(const struct fbs_policy *p, const char *cause, uint64_t event_id, char *out,
		       size_t outsz)
{
	snprintf(out, outsz, "%s %s (EventId %" PRIu64 ")", p->cfg.reason_prefix, cause, event_id);
}

int fbs_reason_is_ours(const char *prefix, const char *reason)
{
	size_t n = strlen(prefix);
	return reason && n && strncmp(reason, prefix, n) == 0;
}

int fbs_policy_reason_is_ours(const struct fbs_policy *p, const char *reason)
{
	return fbs_reason_is_ours(p->cfg.reason_prefix, reason);
}

/* Flap conditions whose window ended with the link up clear now. */
static void expire_flaps(struct fbs_policy *p, uint64_t now)
{
	for (size_t i = p->n; i-- > 0;) {
		struct fbs_node *n = p->nodes[i];
		for (size_t k = n->n_conds; k-- > 0;) {
			struct fbs_cond *c = &n->conds[k];
			if (c->type == FBS_C_FLAP && c->up_seen && now >= c->until_ms)
				cond_remove(n, c, now);
		}
		maybe_gc(p, n);
	}
}

/* The condition that drains n now: the oldest that lasted its hold time. */
static const struct fbs_cond *due_cond(const struct fbs_node *n, uint64_t now)
{
	const struct fbs_cond *best = NULL;
	for (size_t k = 0; k < n->n_conds; k++) {
		const struct fbs_cond *c = &n->conds[k];
		if (now < c->since_ms || now - c->since_ms < c->hold_ms)
			continue;
		if (!best || c->since_ms < best->since_ms)
			best = c;
	}
	return best;
}

struct cand {
	struct fbs_node *n;
	const struct fbs_cond *c;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->c->since_ms != y->c->since_ms)
		return x->c->since_ms < y->c->since_ms ? -1 : 1;
	return strcmp(x->n->name, y->n->name);
}

static struct fbs_batch *add_batch(struct fbs_decision *d, size_t max_nodes)
{
	struct fbs_batch *nb = realloc(d->batches, (d->n_batches + 1) * sizeof(*nb));
	if (!nb)
		return NULL;
	d->batches = nb;
	struct fbs_batch *b = &nb[d->n_batches];
	memset(b, 0, sizeof(*b));
	if (!(b->t = calloc(max_nodes ? max_nodes : 1, sizeof(*b->t))))
		return NULL;
	d->n_batches++;
	return b;
}

static void add_target(struct fbs_batch *b, const struct fbs_node *n)
{
	struct fbs_target *t = &b->t[b->n++];
	snprintf(t->node, sizeof(t->node), "%s", n->name);
	snprintf(t->cause, sizeof(t->cause), "%s", n->cause);
	t->event_id = n->cause_event_id;
}

static int stable_due(const struct fbs_policy *p, const struct fbs_node *n, uint64_t now)
{
	return n->hold == FBS_H_DRAINED && !n->n_conds && now >= n->clear_since_ms &&
	       now - n->clear_since_ms >= p->cfg.stable_ms;
}

static int decide_undrains(struct fbs_policy *p, uint64_t now, struct fbs_decision *d)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++)
		k += stable_due(p, p->nodes[i], now);
	if (!k)
		return 0;
	struct fbs_batch *b = add_batch(d, k);
	if (!b)
		return -ENOMEM;
	b->action = FBS_A_UNDRAIN;
	for (size_t i = 0; i < p->n; i++) {
		struct fbs_node *n = p->nodes[i];
		if (stable_due(p, n, now)) {
			add_target(b, n);
			n->hold = FBS_H_UNDRAINING;
		}
	}
	return 0;
}

/* Group the accepted candidates (in order) into one batch per reason. */
static int group_drains(struct fbs_policy *p, struct cand *cs, size_t n, struct fbs_decision *d)
{
	for (size_t i = 0; i < n; i++) {
		if (!cs[i].n)
			continue; /* already grouped */
		char reason[FBS_REASON_MAX];
		fbs_policy_reason(p, cs[i].c->cause, cs[i].c->event_id, reason, sizeof(reason));
		struct fbs_batch *b = add_batch(d, n - i);
		if (!b)
			return -ENOMEM;
		b->action = FBS_A_DRAIN;
		snprintf(b->reason, sizeof(b->reason), "%s", reason);
		b->event_id = cs[i].c->event_id;
		for (size_t j = i; j < n; j++) {
			if (!cs[j].n)
				continue;
			struct fbs_node *nd = cs[j].n;
			if (j != i && (cs[j].c->event_id != b->event_id ||
				       strcmp(cs[j].c->cause, cs[i].c->cause) != 0))
				continue;
			nd->hold = FBS_H_DRAINING;
			nd->refused = 0;
			snprintf(nd->reason, sizeof(nd->reason), "%s", reason);
			snprintf(nd->cause, sizeof(nd->cause), "%s", cs[j].c->cause);
			nd->cause_event_id = cs[j].c->event_id;
			add_target(b, nd);
			cs[j].n = NULL;
		}
	}
	return 0;
}

/* A due node slurmctld does not know is never a candidate: it would take
 * room under the cap that no drain can use. Reported once until it is known. */
static int not_slurm(struct fbs_policy *p, struct fbs_node *n, struct fbs_decision *d)
{
	if (is_slurm_node(p, n->name)) {
		n->not_slurm = 0;
		return 0;
	}
	if (n->not_slurm)
		return 1;
	char (*v)[FB_NAME_MAX] = realloc(d->not_slurm, (d->n_not_slurm + 1) * sizeof(*v));
	if (!v)
		return 1; /* not logged, still not drained */
	d->not_slurm = v;
	snprintf(v[d->n_not_slurm++], FB_NAME_MAX, "%s", n->name);
	n->not_slurm = 1;
	return 1;
}

static int decide_drains(struct fbs_policy *p, uint64_t now, struct fbs_decision *d)
{
	struct cand *cs = NULL; /* at most one per node, made at the first */
	size_t nc = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct fbs_node *n = p->nodes[i];
		const struct fbs_cond *c;
		if (n->hold != FBS_H_NONE || n->suppressed || !(c = due_cond(n, now)) ||
		    not_slurm(p, n, d))
			continue;
		if (!cs && !(cs = malloc(p->n * sizeof(*cs))))
			return -ENOMEM;
		cs[nc].n = n;
		cs[nc++].c = c;
	}
	unsigned held = fbs_policy_held(p), limit = fbs_policy_limit(p);
	if (held < limit)
		p->cap_episode = 0; /* below the cap: the next refusal is a new episode */
	if (!nc)
		return 0;
	qsort(cs, nc, sizeof(*cs), cand_cmp);
	size_t room = held >= limit ? 0 : limit - held, take = nc < room ? nc : room;
	int rc = 0;
	if (take < nc) {
		d->n_refused = nc - take;
		if (!(d->refused = calloc(d->n_refused, sizeof(*d->refused)))) {
			free(cs);
			return -ENOMEM;
		}
		for (size_t i = take; i < nc; i++) {
			snprintf(d->refused[i - take], FB_NAME_MAX, "%s", cs[i].n->name);
			d->n_newly_refused += !cs[i].n->refused;
			cs[i].n->refused = 1;
		}
		d->cap_event = !p->cap_episode;
		p->cap_episode = 1;
		d->cap_count = held + (unsigned)take;
		d->cap_limit = limit;
	}
	rc = group_drains(p, cs, take, d);
	free(cs);
	return rc;
}

int fbs_policy_decide(struct fbs_policy *p, uint64_t now_ms, struct fbs_decision *d)
{
	memset(d, 0, sizeof(*d));
	expire_flaps(p, now_ms);
	int rc = decide_drains(p, now_ms, d);
	if (!rc)
		rc = decide_undrains(p, now_ms, d);
	if (rc)
		fbs_decision_free(d);
	return rc;
}

/* Only future times count: what is due now was decided (or refused by the
 * cap, and then an outcome that makes room calls decide again). */
static void sooner(uint64_t t, uint64_t now, uint64_t *due)
{
	if (t > now && t < *due)
		*due = t;
}

uint64_t fbs_policy_next_due(const struct fbs_policy *p, uint64_t now)
{
	uint64_t due = UINT64_MAX;
	for (size_t i = 0; i < p->n; i++) {
		const struct fbs_node *n = p->nodes[i];
		for (size_t k = 0; k < n->n_conds; k++) {
			const struct fbs_cond *c = &n->conds[k];
			if (c->type == FBS_C_FLAP && c->up_seen)
				sooner(c->until_ms, now, &due);
			if (n->hold == FBS_H_NONE && !n->suppressed)
				sooner(c->since_ms + c->hold_ms, now, &due);
		}
		if (n->hold == FBS_H_DRAINED && !n->n_conds)
			sooner(n->clear_since_ms + p->cfg.stable_ms, now, &due);
	}
	return due;
}

/* ---- outcomes ----------------------------------------------------------------- */

int fbs_policy_drained(struct fbs_policy *p, const char *node, const char *reason,
		       uint64_t event_id, uint64_t wall_s, int dry_run, uint64_t now_ms)
{
	struct fbs_node *n = get_or_add(p, node);
	if (!n)
		return -ENOMEM;
	if (n->hold != FBS_H_DRAINED && !n->n_conds)
		n->clear_since_ms = now_ms; /* adopted without a known condition */
	n->hold = FBS_H_DRAINED;
	n->dry_run = (uint8_t)!!dry_run;
	n->refused = 0;
	if (reason && strcmp(reason, n->reason) != 0) {
		snprintf(n->reason, sizeof(n->reason), "%s", reason);
		if (!n->cause[0] || n->cause_event_id != event_id) {
			/* adopted: the cause is the reason without prefix and EventId */
			const char *c = reason + strlen(p->cfg.reason_prefix);
			while (*c == ' ')
				c++;
			snprintf(n->cause, sizeof(n->cause), "%.*s", (int)strcspn(c, "("), c);
			size_t l = strlen(n->cause);
			while (l && n->cause[l - 1] == ' ')
				n->cause[--l] = '\0';
		}
	}
	n->cause_event_id = event_id;
	n->drained_at_s = wall_s;
	return 0;
}

/* The node is no longer drained by us (undrained, or its drain released to
 * someone else): drop the hold and the dry-run mark. NULL if unknown. */
static struct fbs_node *end_hold(struct fbs_policy *p, const char *node)
{
	struct fbs_node *n = find(p, node);
	if (n) {
		n->hold = FBS_H_NONE;
		n->dry_run = 0;
	}
	return n;
}

void fbs_policy_released(struct fbs_policy *p, const char *node, uint64_t now_ms)
{
	(void)now_ms;
	struct fbs_node *n = end_hold(p, node);
	if (!n)
		return;
	n->suppressed = 1;
	n->refused = 0;
	maybe_gc(p, n);
}

void fbs_policy_undrained(struct fbs_policy *p, const char *node, uint64_t now_ms)
{
	(void)now_ms;
	struct fbs_node *n = end_hold(p, node);
	if (!n)
		return;
	n->reason[0] = n->cause[0] = '\0';
	n->cause_event_id = 0;
	n->drained_at_s = 0;
	maybe_gc(p, n);
}

void fbs_policy_undo(struct fbs_policy *p, const char *node)
{
	struct fbs_node *n = find(p, node);
	if (n && n->hold == FBS_H_DRAINING) {
		n->hold = FBS_H_NONE;
		maybe_gc(p, n);
	} else if (n && n->hold == FBS_H_UNDRAINING) {
		n->hold = FBS_H_DRAINED;
	}
}

/* ---- access ------------------------------------------------------------------- */

const struct fbs_node *fbs_policy_node(const struct fbs_policy *p, const char *node)
{
	return find(p, node);
}

size_t fbs_policy_count(const struct fbs_policy *p) { return p->n; }

const struct fbs_node *fbs_policy_at(const struct fbs_policy *p, size_t i)
{
	return i < p->n ? p->nodes[i] : NULL;
}

int fbs_policy_restore(struct fbs_policy *p, const struct fbs_node *src)
{
	struct fbs_node *n = get_or_add(p, src->name);
	if (!n)
		return -ENOMEM;
	struct fbs_cond *keep = n->conds;
	size_t keep_cap = n->cap_conds;
	*n = *src;
	n->conds = keep;
	n->cap_conds = keep_cap;
	n->n_conds = 0;
	for (size_t k = 0; k < src->n_conds; k++)
		if (cond_add(n, &src->conds[k]))
			return -ENOMEM;
	n->clear_since_ms = src->clear_since_ms; /* cond_add reset it */
	maybe_gc(p, n);
	return 0;
}

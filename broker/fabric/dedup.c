/* dedup.c - link-state conditions by cable (see dedup.h). A ring of the
 * newest conditions with a chained hash over the cable; a new condition
 * goes to the head of its chain, so a lookup meets the newest first. */
#include "dedup.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_WINDOW_NS 2000000000ULL
#define DEFAULT_MAX 4096

struct fb_dedup {
	uint64_t window_ns;
	size_t max, n, next;   /* ring: n used, next the slot to fill */
	size_t mask;           /* buckets - 1 */
	int32_t *head;         /* bucket -> entry, -1: empty */
	struct fb_dedup_entry *v;
};

struct fb_dedup *fb_dedup_new(uint64_t window_ns, size_t max)
{
	if (!max)
		max = DEFAULT_MAX;
	if (max > INT32_MAX / 4)
		return NULL;
	size_t nb = 16;
	while (nb < 2 * max)
		nb *= 2;
	struct fb_dedup *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->window_ns = window_ns ? window_ns : DEFAULT_WINDOW_NS;
	d->max = max;
	d->mask = nb - 1;
	d->head = malloc(nb * sizeof(*d->head));
	d->v = calloc(max, sizeof(*d->v));
	if (!d->head || !d->v) {
		fb_dedup_free(d);
		return NULL;
	}
	memset(d->head, 0xff, nb * sizeof(*d->head));
	return d;
}

void fb_dedup_free(struct fb_dedup *d)
{
	if (!d)
		return;
	free(d->head);
	free(d->v);
	free(d);
}

uint64_t fb_dedup_window_ns(const struct fb_dedup *d) { return d->window_ns; }

static int end_less(struct fb_dedup_end x, struct fb_dedup_end y)
{
	return x.guid < y.guid || (x.guid == y.guid && x.port < y.port);
}

void fb_dedup_cond_make(struct fb_dedup_end me, struct fb_dedup_end peer, int up, struct fb_dedup_cond *c)
{
	memset(c, 0, sizeof(*c));
	c->up = up ? 1 : 0;
	if (!peer.guid || end_less(me, peer)) {
		c->a = me;
		c->b = peer.guid ? peer : (struct fb_dedup_end){ 0, 0 };
	} else {
		c->a = peer;
		c->b = me;
	}
}

static size_t bucket(const struct fb_dedup *d, const struct fb_dedup_cond *c)
{
	uint64_t h = c->a.guid * 0x9e3779b97f4a7c15ULL;
	h ^= (h >> 29) + c->a.port;
	h = (h ^ c->b.guid) * 0xbf58476d1ce4e5b9ULL;
	h ^= (h >> 31) + c->b.port;
	h *= 0x94d049bb133111ebULL;
	return (size_t)(h ^ (h >> 32)) & d->mask;
}

static int same_cable(const struct fb_dedup_cond *x, const struct fb_dedup_cond *y)
{
	return x->a.guid == y->a.guid && x->a.port == y->a.port && x->b.guid == y->b.guid && x->b.port == y->b.port;
}

/* The newest condition on c's cable, or -1. */
static int32_t lookup(const struct fb_dedup *d, const struct fb_dedup_cond *c)
{
	for (int32_t i = d->head[bucket(d, c)]; i >= 0; i = d->v[i].next)
		if (same_cable(&d->v[i].c, c))
			return i;
	return -1;
}

static void unchain(struct fb_dedup *d, int32_t i)
{
	int32_t *p = &d->head[bucket(d, &d->v[i].c)];
	while (*p >= 0 && *p != i)
		p = &d->v[*p].next;
	if (*p == i)
		*p = d->v[i].next;
}

static void add_source(struct fb_dedup_entry *e, const char *agent, struct fb_dedup_end end, uint64_t event_id)
{
	for (uint32_t k = 0; k < e->n_sources; k++)
		if (e->src[k].end.guid == end.guid && e->src[k].end.port == end.port &&
		    strcmp(e->src[k].agent, agent) == 0)
			return;
	if (e->n_sources == FB_DEDUP_MAX_SOURCES) {
		e->sources_cut++; /* may count a source twice: only "more than 8" is sure */
		return;
	}
	struct fb_dedup_source *s = &e->src[e->n_sources++];
	size_t len = strnlen(agent, sizeof(s->agent) - 1);
	memcpy(s->agent, agent, len);
	s->agent[len] = '\0';
	s->end = end;
	s->event_id = event_id;
}

int fb_dedup_observe(struct fb_dedup *d, const struct fb_dedup_cond *c, const char *agent,
		     struct fb_dedup_end end, uint64_t event_id, uint64_t now_ns, struct fb_dedup_entry **e)
{
	int32_t i = lookup(d, c);
	if (i >= 0 && d->v[i].c.up == c->up && now_ns - d->v[i].first_ns < d->window_ns) {
		d->v[i].reports++;
		add_source(&d->v[i], agent, end, event_id);
		*e = &d->v[i];
		return 1;
	}
	/* A new condition: the oldest slot of the ring makes room. */
	i = (int32_t)d->next;
	if (d->n == d->max)
		unchain(d, i);
	else
		d->n++;
	d->next = (d->next + 1) % d->max;
	struct fb_dedup_entry *n = &d->v[i];
	memset(n, 0, sizeof(*n));
	n->c = *c;
	n->first_id = n->group = event_id;
	n->first_ns = now_ns;
	n->reports = 1;
	add_source(n, agent, end, event_id);
	size_t b = bucket(d, c);
	n->next = d->head[b];
	d->head[b] = i;
	*e = n;
	return 0;
}

const struct fb_dedup_entry *fb_dedup_recent(const struct fb_dedup *d, size_t i)
{
	if (i >= d->n)
		return NULL;
	return &d->v[(d->next + d->max - 1 - i) % d->max];
}

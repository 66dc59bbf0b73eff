/* flap.c - flap control per port (see flap.h). Ports in an open-addressing
 * table that never shrinks (a slot is reused when its port has been quiet
 * and not suppressed for 2 x window); the suppressed ones are also on a
 * list, so that the periodic tick touches only them. */
#include "flap.h"

#include <stdlib.h>
#include <string.h>

struct port {
	uint64_t guid;
	uint16_t port;
	uint8_t used, suppressed;
	uint8_t head, count;        /* ring of the last transitions */
	uint64_t t[FB_FLAP_MAX_TRANSITIONS];
	uint64_t last_ns;           /* the last transition */
	uint64_t group, since_ns, summary_ns;
	uint64_t pending;           /* suppressed since the last summary */
	uint64_t total;             /* suppressed since the detection */
};

struct fb_flap {
	struct fb_flap_cfg cfg;
	size_t cap;                 /* slots, a power of 2, >= 2 x max_ports */
	size_t used;
	struct port *v;
	size_t *sup;                /* indices of suppressed ports */
	size_t n_sup;
	uint64_t untracked;
};

struct fb_flap *fb_flap_new(const struct fb_flap_cfg *cfg)
{
	struct fb_flap *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->cfg = *cfg;
	if (f->cfg.transitions < 2 || f->cfg.transitions > FB_FLAP_MAX_TRANSITIONS)
		f->cfg.transitions = 6;
	if (!f->cfg.window_ns)
		f->cfg.window_ns = 60000000000ULL;
	if (!f->cfg.summary_ns)
		f->cfg.summary_ns = 10000000000ULL;
	if (!f->cfg.stable_ns)
		f->cfg.stable_ns = 30000000000ULL;
	if (!f->cfg.max_ports)
		f->cfg.max_ports = 16384;
	f->cap = 16;
	while (f->cap < 2 * f->cfg.max_ports)
		f->cap *= 2;
	f->v = calloc(f->cap, sizeof(*f->v));
	f->sup = calloc(f->cfg.max_ports, sizeof(*f->sup));
	if (!f->v || !f->sup) {
		fb_flap_free(f);
		return NULL;
	}
	return f;
}

void fb_flap_free(struct fb_flap *f)
{
	if (!f)
		return;
	free(f->v);
	free(f->sup);
	free(f);
}

const struct fb_flap_cfg *fb_flap_cfg(const struct fb_flap *f) { return &f->cfg; }

static size_t hash(uint64_t guid, uint16_t port)
{
	uint64_t h = (guid ^ ((uint64_t)port << 48) ^ port) * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 17);
}

static int stale(const struct fb_flap *f, const struct port *p, uint64_t now)
{
	return !p->suppressed && now - p->last_ns > 2 * f->cfg.window_ns;
}

/* The port's slot, created (or a stale one reused) if create; NULL if
 * absent, or no room. */
static struct port *lookup(struct fb_flap *f, uint64_t guid, uint16_t port, uint64_t now, int create)
{
	size_t mask = f->cap - 1, i = hash(guid, port) & mask;
	struct port *reuse = NULL;
	for (size_t k = 0; k < f->cap; k++, i = (i + 1) & mask) {
		struct port *p = &f->v[i];
		if (!p->used)
			break;
		if (p->guid == guid && p->port == port)
			return p;
		if (!reuse && create && stale(f, p, now))
			reuse = p;
	}
	if (!create)
		return NULL;
	struct port *p = reuse;
	if (!p) {
		if (f->used >= f->cfg.max_ports) {
			f->untracked++;
			return NULL;
		}
		p = &f->v[i];
		f->used++;
	}
	memset(p, 0, sizeof(*p));
	p->used = 1;
	p->guid = guid;
	p->port = port;
	return p;
}

static void suppress(struct fb_flap *f, struct port *p, uint64_t group, uint64_t now)
{
	if (!p->suppressed) {
		if (f->n_sup == f->cfg.max_ports)
			return; /* cannot happen: at most max_ports are followed */
		f->sup[f->n_sup++] = (size_t)(p - f->v);
	}
	p->suppressed = 1;
	p->group = group;
	p->since_ns = p->summary_ns = now;
	p->pending = p->total = 0;
	p->last_ns = now;
}

int fb_flap_transition(struct fb_flap *f, uint64_t guid, uint16_t port, uint64_t now_ns, struct fb_flap_out *out)
{
	memset(out, 0, sizeof(*out));
	struct port *p = lookup(f, guid, port, now_ns, 1);
	if (!p)
		return FB_FLAP_NONE;
	p->last_ns = now_ns;
	if (p->suppressed) {
		p->pending++;
		p->total++;
		return FB_FLAP_NONE;
	}
	uint32_t n = f->cfg.transitions;
	p->t[p->head] = now_ns;
	p->head = (uint8_t)((p->head + 1) % n);
	if (p->count < n)
		p->count++;
	/* The oldest of the last n (the next slot once the ring is full). */
	if (p->count < n || now_ns - p->t[p->head] > f->cfg.window_ns)
		return FB_FLAP_NONE;
	suppress(f, p, 0, now_ns);
	p->count = 0;
	*out = (struct fb_flap_out){ FB_FLAP_DETECTED, guid, port, n, 0, now_ns };
	return FB_FLAP_DETECTED;
}

void fb_flap_agent_flap(struct fb_flap *f, uint64_t guid, uint16_t port, uint64_t event_id, uint64_t now_ns)
{
	struct port *p = lookup(f, guid, port, now_ns, 1);
	if (!p)
		return;
	if (p->suppressed) {
		if (!p->group)
			p->group = event_id;
		return;
	}
	suppress(f, p, event_id, now_ns);
	p->count = 0;
}

int fb_flap_is_suppressed(const struct fb_flap *f, uint64_t guid, uint16_t port)
{
	size_t mask = f->cap - 1, i = hash(guid, port) & mask;
	for (size_t k = 0; k < f->cap; k++, i = (i + 1) & mask) {
		const struct port *p = &f->v[i];
		if (!p->used)
			return 0;
		if (p->guid == guid && p->port == port)
			return p->suppressed;
	}
	return 0;
}

void fb_flap_set_group(struct fb_flap *f, uint64_t guid, uint16_t port, uint64_t group)
{
	struct port *p = lookup(f, guid, port, 0, 0);
	if (p)
		p->group = group;
}

size_t fb_flap_tick(struct fb_flap *f, uint64_t now_ns, struct fb_flap_out *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n_sup && n < max;) {
		struct port *p = &f->v[f->sup[i]];
		if (now_ns - p->last_ns >= f->cfg.stable_ns) {
			out[n++] = (struct fb_flap_out){ FB_FLAP_STABLE, p->guid, p->port, p->total, p->group,
							 p->since_ns };
			p->suppressed = 0;
			p->count = 0;
			f->sup[i] = f->sup[--f->n_sup];
			continue;
		}
		if (now_ns - p->summary_ns >= f->cfg.summary_ns) {
			if (p->pending)
				out[n++] = (struct fb_flap_out){ FB_FLAP_SUMMARY, p->guid, p->port, p->pending,
								 p->group, p->since_ns };
			p->pending = 0;
			p->summary_ns = now_ns;
		}
		i++;
	}
	return n;
}

uint64_t fb_flap_next_due(const struct fb_flap *f)
{
	uint64_t due = 0;
	for (size_t i = 0; i < f->n_sup; i++) {
		const struct port *p = &f->v[f->sup[i]];
		uint64_t d = p->last_ns + f->cfg.stable_ns, s = p->summary_ns + f->cfg.summary_ns;
		if (s < d)
			d = s;
		if (!due || d < due)
			due = d;
	}
	return due;
}

size_t fb_flap_suppressed(const struct fb_flap *f) { return f->n_sup; }
uint64_t fb_flap_untracked(const struct fb_flap *f) { return f->untracked; }

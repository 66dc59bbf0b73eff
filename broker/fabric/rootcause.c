/* rootcause.c - the switch a window of cable-down reports has in common
 * (see rootcause.h). */
#include "rootcause.h"

#include "topology.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_WINDOW_NS 500000000ULL
/* A window stays open while reports keep coming (a spine's 36 traps can
 * trickle in over more than one quiet period on a loaded host), but never
 * longer than this many quiet periods, so a steady drizzle still decides. */
#define MAX_WINDOW_PERIODS 8
#define IB_PORT_DOWN 1

struct report {
	uint64_t event_id;
	size_t port;         /* topology port index */
};

struct fb_rootcause {
	uint64_t window_ns;
	uint64_t opened_ns;  /* 0: no window open */
	uint64_t last_ns;    /* the newest report in the window */
	struct report *v;
	size_t n, cap;
	size_t dropped;
};

struct fb_rootcause *fb_rootcause_new(uint64_t window_ns)
{
	struct fb_rootcause *rc = calloc(1, sizeof(*rc));
	if (rc)
		rc->window_ns = window_ns ? window_ns : DEFAULT_WINDOW_NS;
	return rc;
}

void fb_rootcause_free(struct fb_rootcause *rc)
{
	if (!rc)
		return;
	free(rc->v);
	free(rc);
}

void fb_rc_verdict_free(struct fb_rc_verdict *v)
{
	free(v->symptoms);
	free(v->no_path);
	free(v->degraded);
	memset(v, 0, sizeof(*v));
}

uint64_t fb_rootcause_deadline(const struct fb_rootcause *rc)
{
	if (!rc->n && !rc->dropped)
		return 0;
	uint64_t quiet = rc->last_ns + rc->window_ns, cap = rc->opened_ns + MAX_WINDOW_PERIODS * rc->window_ns;
	return quiet < cap ? quiet : cap;
}

static int is_down_report(const struct fb_event *ev)
{
	if (ev->kind == FB_KIND_LINK_DOWN)
		return 1;
	return (ev->kind == FB_KIND_PORT_STATE || ev->kind == FB_KIND_TOPOLOGY) && ev->tech == FB_TECH_IB &&
	       ev->port_state == IB_PORT_DOWN;
}

int fb_rootcause_observe(struct fb_rootcause *rc, const struct fb_topology *t, const struct fb_event *ev,
			 uint64_t event_id, uint64_t now_ns)
{
	if (!is_down_report(ev))
		return 0;
	const struct fb_topo_port *p = fb_topology_event_port(t, ev);
	if (!p || !p->peer_guid || (p->link_class != FB_LINK_ISL && p->link_class != FB_LINK_HOST))
		return 0;
	if (!rc->n && !rc->dropped)
		rc->opened_ns = now_ns;
	rc->last_ns = now_ns;
	if (rc->n == rc->cap) {
		size_t c = rc->cap ? 2 * rc->cap : 64;
		struct report *v = c <= FB_RC_MAX_SYMPTOMS ? realloc(rc->v, c * sizeof(*v)) : NULL;
		if (!v) {
			rc->dropped++; /* counted, not kept: the window still closes */
			return 1;
		}
		rc->v = v;
		rc->cap = c;
	}
	rc->v[rc->n++] = (struct report){ event_id, fb_topology_port_index(t, p) };
	return 1;
}

/* The graph and the scratch one decision needs. */
struct weigh {
	struct fb_blast_topo bt;
	size_t *port_link;   /* topology port -> graph link (SIZE_MAX: none) */
	size_t *port_host;   /* topology port -> graph host (SIZE_MAX: none) */
	uint8_t *link_seen, *host_seen;
	size_t *count, *cabled;
	uint8_t *effect;
};

static void weigh_free(struct weigh *w)
{
	fb_blast_topo_free(&w->bt);
	free(w->port_link);
	free(w->port_host);
	free(w->link_seen);
	free(w->host_seen);
	free(w->count);
	free(w->cabled);
	free(w->effect);
}

static int weigh_init(struct weigh *w, const struct fb_topology *t, const struct fb_inventory *inv)
{
	memset(w, 0, sizeof(*w));
	if (fb_blast_graph_from_topology(t, inv, &w->bt))
		return -ENOMEM;
	size_t np = fb_topology_n_ports(t) + 1, nl = w->bt.g.n_links + 1, nh = w->bt.g.n_hosts + 1;
	size_t ns = w->bt.g.n_switches + 1;
	w->port_link = malloc(np * sizeof(*w->port_link));
	w->port_host = malloc(np * sizeof(*w->port_host));
	w->link_seen = calloc(nl, 1);
	w->host_seen = calloc(nh, 1);
	w->count = calloc(ns, sizeof(*w->count));
	w->cabled = calloc(ns, sizeof(*w->cabled));
	w->effect = calloc(nh, 1);
	if (!w->port_link || !w->port_host || !w->link_seen || !w->host_seen || !w->count || !w->cabled ||
	    !w->effect)
		return -ENOMEM;
	for (size_t i = 0; i < np; i++)
		w->port_link[i] = w->port_host[i] = SIZE_MAX;
	for (size_t k = 0; k < w->bt.g.n_links; k++) {
		w->port_link[w->bt.link_pa[k]] = k;
		if (w->bt.link_pb[k] != SIZE_MAX)
			w->port_link[w->bt.link_pb[k]] = k;
		w->cabled[w->bt.links[k].a]++;
		w->cabled[w->bt.links[k].b]++;
	}
	/* Hosts are listed in topology port order (fb_blast_graph_from_topology). */
	for (size_t i = 0, h = 0; i + 1 < np && h < w->bt.g.n_hosts; i++) {
		const struct fb_topo_port *p = fb_topology_port_at(t, i);
		if (p->peer_guid && p->link_class == FB_LINK_HOST) {
			w->port_host[i] = h;
			w->cabled[w->bt.hosts[h++].sw]++;
		}
	}
	return 0;
}

/* Count each distinct cable once for each switch at its ends. */
static void count_cables(struct fb_rootcause *rc, struct weigh *w)
{
	for (size_t r = 0; r < rc->n; r++) {
		size_t k = w->port_link[rc->v[r].port], h = w->port_host[rc->v[r].port];
		if (k != SIZE_MAX && !w->link_seen[k]) {
			w->link_seen[k] = 1;
			w->count[w->bt.links[k].a]++;
			w->count[w->bt.links[k].b]++;
		} else if (h != SIZE_MAX && !w->host_seen[h]) {
			w->host_seen[h] = 1;
			w->count[w->bt.hosts[h].sw]++;
		}
	}
}

static long pick_cause(const struct weigh *w)
{
	long best = -1;
	for (size_t s = 0; s < w->bt.g.n_switches; s++) {
		if (w->count[s] < 2)
			continue;
		if (best < 0 || w->count[s] > w->count[best] ||
		    (w->count[s] == w->count[best] &&
		     w->count[s] * w->cabled[best] > w->count[best] * w->cabled[s]))
			best = (long)s;
	}
	return best;
}

static int touches(const struct weigh *w, size_t port, uint32_t s)
{
	size_t k = w->port_link[port], h = w->port_host[port];
	if (k != SIZE_MAX)
		return w->bt.links[k].a == s || w->bt.links[k].b == s;
	return h != SIZE_MAX && w->bt.hosts[h].sw == s;
}

/* Switch s, its cables and the blast radius now: a verdict without its
 * symptoms. */
static int weigh_switch(struct weigh *w, const struct fb_topology *t, uint32_t s, size_t n_symptoms,
			struct fb_rc_verdict *v)
{
	const struct fb_topo_switch *sw = fb_topology_switch_at(t, s);
	v->switch_guid = sw->guid;
	memcpy(v->switch_name, sw->name, sizeof(v->switch_name));
	v->cables = w->cabled[s];
	for (size_t k = 0; k < w->bt.g.n_links; k++)
		v->cables_down += (w->bt.links[k].a == s || w->bt.links[k].b == s) && !w->bt.links[k].up;
	for (size_t h = 0; h < w->bt.g.n_hosts; h++)
		v->cables_down += w->bt.hosts[h].sw == s && !w->bt.hosts[h].up;
	v->kind = v->cables_down == v->cables ? FB_RC_SWITCH_FAILED : FB_RC_SWITCH_DEGRADED;
	v->symptoms = malloc((n_symptoms + 1) * sizeof(*v->symptoms));
	v->no_path = calloc(w->bt.g.n_hosts + 1, sizeof(*v->no_path));
	v->degraded = calloc(w->bt.g.n_hosts + 1, sizeof(*v->degraded));
	if (!v->symptoms || !v->no_path || !v->degraded)
		return -ENOMEM;
	if (fb_blast_compute(&w->bt.g, NULL, NULL, NULL, w->effect, &v->blast))
		return -ENOMEM;
	for (size_t h = 0; h < w->bt.g.n_hosts; h++) {
		if (w->effect[h] == FB_BLAST_NO_PATH)
			v->no_path[v->n_no_path++] = w->bt.host_names[h];
		else if (w->effect[h] == FB_BLAST_DEGRADED)
			v->degraded[v->n_degraded++] = w->bt.host_names[h];
	}
	return 0;
}

static int fill_verdict(struct fb_rootcause *rc, struct weigh *w, const struct fb_topology *t, uint32_t s,
			struct fb_rc_verdict *v)
{
	int err = weigh_switch(w, t, s, rc->n, v);
	if (err)
		return err;
	/* The explained reports leave the window; the rest stay, in order. */
	size_t keep = 0;
	for (size_t r = 0; r < rc->n; r++) {
		if (touches(w, rc->v[r].port, s))
			v->symptoms[v->n_symptoms++] = rc->v[r].event_id;
		else
			rc->v[keep++] = rc->v[r];
	}
	v->others = keep;
	rc->n = keep;
	/* Every cable of the switch is up again by the time the window closes
	 * (reports left over from a fault that is over, or a blip): a root
	 * cause with nothing down would be a false alarm. Its reports still
	 * leave the window; they were delivered on their own. */
	if (!v->cables_down)
		v->kind = FB_RC_NONE;
	return 0;
}

int fb_rootcause_decide(struct fb_rootcause *rc, const struct fb_topology *t, const struct fb_inventory *inv,
			uint64_t now_ns, struct fb_rc_verdict *v)
{
	memset(v, 0, sizeof(*v));
	uint64_t deadline = fb_rootcause_deadline(rc);
	if (!deadline || now_ns < deadline)
		return 0;
	struct weigh w;
	int err = weigh_init(&w, t, inv);
	if (!err) {
		count_cables(rc, &w);
		long s = pick_cause(&w);
		v->dropped = rc->dropped;
		if (s >= 0) {
			err = fill_verdict(rc, &w, t, (uint32_t)s, v);
		} else {
			v->others = rc->n;
			rc->n = 0; /* nothing in common: each report is its own story */
		}
	}
	weigh_free(&w);
	if (err) {
		fb_rc_verdict_free(v);
		return err;
	}
	rc->dropped = 0;
	rc->opened_ns = rc->last_ns = now_ns; /* what is left starts a new window */
	return 1;
}

int fb_rootcause_reweigh(const struct fb_topology *t, const struct fb_inventory *inv, uint64_t guid,
			 struct fb_rc_verdict *v)
{
	memset(v, 0, sizeof(*v));
	const struct fb_topo_switch *sw = fb_topology_switch(t, guid);
	if (!sw)
		return 0;
	struct weigh w;
	int err = weigh_init(&w, t, inv);
	if (!err)
		err = weigh_switch(&w, t, (uint32_t)fb_topology_switch_index(t, sw), 0, v);
	weigh_free(&w);
	if (err) {
		fb_rc_verdict_free(v);
		return err;
	}
	return 1;
}

int fb_rootcause_switch_cables(const struct fb_topology *t, const struct fb_inventory *inv, uint64_t guid,
			       size_t *cables, size_t *down)
{
	*cables = *down = 0;
	const struct fb_topo_switch *sw = fb_topology_switch(t, guid);
	if (!sw)
		return 0;
	size_t s = fb_topology_switch_index(t, sw);
	struct weigh w;
	int err = weigh_init(&w, t, inv);
	if (!err) {
		*cables = w.cabled[s];
		for (size_t k = 0; k < w.bt.g.n_links; k++)
			*down += (w.bt.links[k].a == s || w.bt.links[k].b == s) && !w.bt.links[k].up;
		for (size_t h = 0; h < w.bt.g.n_hosts; h++)
			*down += w.bt.hosts[h].sw == s && !w.bt.hosts[h].up;
	}
	weigh_free(&w);
	return err;
}

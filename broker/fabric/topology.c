/* topology.c - switch ports and their peers (see topology.h).
 *
 * Switches and ports live in two arrays, in the order first seen; three
 * open-addressing indexes map a (u64, u16) key to an array index: switches
 * by GUID, ports by (switch GUID, port), and ports by what they are cabled
 * to, (peer GUID, peer port). Only the peer index ever loses keys (a cable
 * moved), so it deletes by backward shift rather than with tombstones.
 */
#include "topology.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* IB PhysPortState LinkUp (IBA 14.2.5.6). */
#define IB_PHYS_LINKUP 5

/* (a, b) -> array index + 1; 0 marks an empty slot. */
struct index {
	uint64_t *ka;
	uint16_t *kb;
	uint32_t *vals;
	size_t cap, n; /* cap is 0 or a power of two */
};

struct fb_topology {
	struct fb_topo_switch *sw;
	size_t n_sw, cap_sw, max_sw;
	struct fb_topo_port *ports;
	size_t n_ports, cap_ports, max_ports;
	struct index by_sw, by_port, by_peer;
};

static size_t hash_key(uint64_t a, uint16_t b)
{
	uint64_t k = a ^ ((uint64_t)b * 0x9e3779b97f4a7c15ULL);
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k;
}

/* The slot holding (a, b), or the empty slot where it would go. */
static size_t slot_of(const struct index *ix, uint64_t a, uint16_t b)
{
	size_t mask = ix->cap - 1;
	size_t i = hash_key(a, b) & mask;
	while (ix->vals[i] && (ix->ka[i] != a || ix->kb[i] != b))
		i = (i + 1) & mask;
	return i;
}

static uint32_t index_get(const struct index *ix, uint64_t a, uint16_t b)
{
	return ix->cap ? ix->vals[slot_of(ix, a, b)] : 0;
}

static void index_free(struct index *ix)
{
	free(ix->ka);
	free(ix->kb);
	free(ix->vals);
	memset(ix, 0, sizeof(*ix));
}

static int index_grow(struct index *ix)
{
	struct index nx = { .cap = ix->cap ? ix->cap * 2 : 64 };
	nx.ka = malloc(nx.cap * sizeof(*nx.ka));
	nx.kb = malloc(nx.cap * sizeof(*nx.kb));
	nx.vals = calloc(nx.cap, sizeof(*nx.vals));
	if (!nx.ka || !nx.kb || !nx.vals) {
		index_free(&nx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ix->cap; i++) {
		if (!ix->vals[i])
			continue;
		size_t j = slot_of(&nx, ix->ka[i], ix->kb[i]);
		nx.ka[j] = ix->ka[i];
		nx.kb[j] = ix->kb[i];
		nx.vals[j] = ix->vals[i];
	}
	nx.n = ix->n;
	index_free(ix);
	*ix = nx;
	return 0;
}

static int index_put(struct index *ix, uint64_t a, uint16_t b, uint32_t val)
{
	if ((ix->n + 1) * 2 > ix->cap && index_grow(ix))
		return -ENOMEM;
	size_t i = slot_of(ix, a, b);
	if (!ix->vals[i])
		ix->n++;
	ix->ka[i] = a;
	ix->kb[i] = b;
	ix->vals[i] = val;
	return 0;
}

/* Linear-probing delete: pull later members of the cluster back into the
 * hole whenever their home slot does not lie between the hole and them. */
static void index_del(struct index *ix, uint64_t a, uint16_t b)
{
	if (!ix->cap)
		return;
	size_t mask = ix->cap - 1;
	size_t i = slot_of(ix, a, b);
	if (!ix->vals[i])
		return;
	ix->vals[i] = 0;
	ix->n--;
	for (size_t j = (i + 1) & mask; ix->vals[j]; j = (j + 1) & mask) {
		size_t home = hash_key(ix->ka[j], ix->kb[j]) & mask;
		int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (stays)
			continue;
		ix->ka[i] = ix->ka[j];
		ix->kb[i] = ix->kb[j];
		ix->vals[i] = ix->vals[j];
		ix->vals[j] = 0;
		i = j;
	}
}

struct fb_topology *fb_topology_new(size_t max_switches, size_t max_ports)
{
	struct fb_topology *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->max_sw = max_switches ? max_switches : FB_TOPO_MAX_SWITCHES;
	t->max_ports = max_ports ? max_ports : FB_TOPO_MAX_PORTS;
	return t;
}

void fb_topology_free(struct fb_topology *t)
{
	if (!t)
		return;
	free(t->sw);
	free(t->ports);
	index_free(&t->by_sw);
	index_free(&t->by_port);
	index_free(&t->by_peer);
	free(t);
}

static void *memdup(const void *p, size_t n)
{
	void *c = n ? malloc(n) : NULL;
	if (c)
		memcpy(c, p, n);
	return c;
}

static int index_copy(struct index *dst, const struct index *src)
{
	*dst = *src;
	if (!src->cap)
		return 0;
	dst->ka = memdup(src->ka, src->cap * sizeof(*src->ka));
	dst->kb = memdup(src->kb, src->cap * sizeof(*src->kb));
	dst->vals = memdup(src->vals, src->cap * sizeof(*src->vals));
	return dst->ka && dst->kb && dst->vals ? 0 : -ENOMEM;
}

struct fb_topology *fb_topology_clone(const struct fb_topology *t)
{
	struct fb_topology *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	*c = *t;
	c->sw = memdup(t->sw, t->n_sw * sizeof(*t->sw));
	c->ports = memdup(t->ports, t->n_ports * sizeof(*t->ports));
	c->cap_sw = t->n_sw;
	c->cap_ports = t->n_ports;
	struct index empty = { 0 };
	c->by_sw = c->by_port = c->by_peer = empty;
	if ((t->n_sw && !c->sw) || (t->n_ports && !c->ports) || index_copy(&c->by_sw, &t->by_sw) ||
	    index_copy(&c->by_port, &t->by_port) || index_copy(&c->by_peer, &t->by_peer)) {
		fb_topology_free(c);
		return NULL;
	}
	return c;
}

/* Grow an array of elem-sized items to hold one more, within max. */
static int reserve_one(void **arr, size_t n, size_t *cap, size_t max, size_t elem)
{
	if (n >= max)
		return -ENOSPC;
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	if (nc > max)
		nc = max;
	void *p = realloc(*arr, nc * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

static int switch_get(struct fb_topology *t, uint64_t guid, uint32_t *idx, int *created)
{
	uint32_t v = index_get(&t->by_sw, guid, 0);
	if (v) {
		*idx = v - 1;
		return 0;
	}
	int rc = reserve_one((void **)&t->sw, t->n_sw, &t->cap_sw, t->max_sw, sizeof(*t->sw));
	if (!rc)
		rc = index_put(&t->by_sw, guid, 0, (uint32_t)t->n_sw + 1);
	if (rc)
		return rc;
	struct fb_topo_switch *s = &t->sw[t->n_sw];
	memset(s, 0, sizeof(*s));
	s->guid = guid;
	s->reachable = 1;
	*idx = (uint32_t)t->n_sw++;
	*created = 1;
	return 0;
}

static int port_get(struct fb_topology *t, uint32_t sw, uint64_t guid, uint16_t port, uint32_t *idx,
		    int *created)
{
	uint32_t v = index_get(&t->by_port, guid, port);
	if (v) {
		*idx = v - 1;
		return 0;
	}
	int rc = reserve_one((void **)&t->ports, t->n_ports, &t->cap_ports, t->max_ports,
			     sizeof(*t->ports));
	if (!rc)
		rc = index_put(&t->by_port, guid, port, (uint32_t)t->n_ports + 1);
	if (rc)
		return rc;
	struct fb_topo_port *p = &t->ports[t->n_ports];
	memset(p, 0, sizeof(*p));
	p->switch_guid = guid;
	p->port = port;
	p->sw = sw;
	*idx = (uint32_t)t->n_ports++;
	*created = 1;
	return 0;
}

/* The state an event reports, or old if it says nothing about it. */
static uint8_t state_of(const struct fb_event *ev, uint8_t old)
{
	switch (ev->kind) {
	case FB_KIND_LINK_DOWN: return FB_LS_DOWN;
	case FB_KIND_LINK_UP: return FB_LS_UP;
	case FB_KIND_LINK_DEGRADED: return FB_LS_DEGRADED;
	case FB_KIND_TOPOLOGY:
	case FB_KIND_PORT_STATE: break;
	default: return old;
	}
	uint8_t s = old;
	if (ev->tech == FB_TECH_ETH) { /* IF-MIB ifOperStatus */
		if (ev->port_state == 1)
			s = FB_LS_UP;
		else if (ev->port_state == 2 || ev->port_state == 7)
			s = FB_LS_DOWN;
	} else if (ev->port_state == 4 || ev->port_state == 5) {
		s = FB_LS_UP;
	} else if (ev->port_state == 1) {
		s = FB_LS_DOWN;
	} else if ((ev->port_state == 2 || ev->port_state == 3) && ev->phys_state == IB_PHYS_LINKUP) {
		s = FB_LS_UP; /* trained, waiting for a subnet manager */
	}
	/* Neither says anything about speed or width: only a link_down/up
	 * (or a down state) ends "degraded". */
	if (old == FB_LS_DEGRADED && s == FB_LS_UP)
		s = FB_LS_DEGRADED;
	return s;
}

/* Record p's peer from ev. A topology report claims the peer even if
 * another port had it; a link event repeating a known peer does not (a
 * stale port's last known peer must not win over the cable's new port). */
static int learn_peer(struct fb_topology *t, struct fb_topo_port *p, uint32_t idx,
		      const struct fb_event *ev)
{
	const struct fb_subject *s = &ev->subj;
	int same = p->peer_guid == s->peer_guid && p->peer_port == s->peer_port;
	int changed = !same || p->link_class != ev->link_class || strcmp(p->peer_name, s->peer_name) != 0;
	if (!same && p->peer_guid && index_get(&t->by_peer, p->peer_guid, p->peer_port) == idx + 1)
		index_del(&t->by_peer, p->peer_guid, p->peer_port);
	p->peer_guid = s->peer_guid;
	p->peer_port = s->peer_port;
	p->link_class = ev->link_class;
	memcpy(p->peer_name, s->peer_name, sizeof(p->peer_name));
	uint32_t cur = index_get(&t->by_peer, s->peer_guid, s->peer_port);
	if (cur == idx + 1 || (same && cur && ev->kind != FB_KIND_TOPOLOGY))
		return changed;
	if (index_put(&t->by_peer, s->peer_guid, s->peer_port, idx + 1))
		return -ENOMEM;
	return 1;
}

/* An Ethernet switch (the SNMP agent's) has no GUID and numbers its ports
 * by ifIndex: its key is derived from its fabric and name (FNV-1a, top
 * byte FB_TOPO_ETH_KEY_TAG), so that its ports are recorded, rendered in
 * GET /fabric/map and resynced (PROTOCOL.md) the way an IB switch's are.
 * An ifIndex above 65535 has no port number here: only the switch is kept. */
static void eth_switch_key(const struct fb_event *ev, uint64_t *guid, uint16_t *port)
{
	const struct fb_subject *s = &ev->subj;
	if (ev->tech != FB_TECH_ETH || !s->switch_name[0])
		return;
	uint64_t h = 1469598103934665603ULL;
	for (const char *c = s->fabric; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ULL;
	h = (h ^ '/') * 1099511628211ULL;
	for (const char *c = s->switch_name; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ULL;
	*guid = (h & 0x00ffffffffffffffULL) | FB_TOPO_ETH_KEY_TAG;
	*port = s->ifindex <= 0xffff ? (uint16_t)s->ifindex : 0;
}

int fb_topology_key(const struct fb_event *ev, uint64_t *guid, uint16_t *port)
{
	*guid = ev->subj.switch_guid;
	*port = ev->subj.port;
	if (!*guid)
		eth_switch_key(ev, guid, port);
	return *guid != 0;
}

int fb_topology_learn(struct fb_topology *t, const struct fb_event *ev)
{
	const struct fb_subject *s = &ev->subj;
	switch (ev->kind) {
	case FB_KIND_TOPOLOGY:
	case FB_KIND_LINK_DOWN:
	case FB_KIND_LINK_UP:
	case FB_KIND_LINK_DEGRADED:
	case FB_KIND_PORT_STATE:
	case FB_KIND_SWITCH_UNREACHABLE:
	case FB_KIND_SWITCH_REACHABLE: break;
	default: return 0;
	}
	uint64_t guid;
	uint16_t port;
	if (!fb_topology_key(ev, &guid, &port))
		return 0;
	int changed = 0;
	uint32_t si, pi;
	int rc = switch_get(t, guid, &si, &changed);
	if (rc)
		return rc;
	struct fb_topo_switch *sw = &t->sw[si];
	if (s->switch_name[0] && strcmp(sw->name, s->switch_name) != 0) {
		memcpy(sw->name, s->switch_name, sizeof(sw->name));
		changed = 1;
	}
	/* Whoever reported it last resyncs it after a restart (PROTOCOL.md). */
	if (ev->agent_id[0] && strcmp(sw->agent, ev->agent_id) != 0) {
		memcpy(sw->agent, ev->agent_id, sizeof(sw->agent));
		changed = 1;
	}
	/* Any report from the switch means it answered. */
	uint8_t reachable = ev->kind != FB_KIND_SWITCH_UNREACHABLE;
	if (sw->reachable != reachable) {
		sw->reachable = reachable;
		changed = 1;
	}
	if (!port || ev->kind == FB_KIND_SWITCH_UNREACHABLE || ev->kind == FB_KIND_SWITCH_REACHABLE)
		return changed;
	rc = port_get(t, si, guid, port, &pi, &changed);
	if (rc)
		return rc;
	struct fb_topo_port *p = &t->ports[pi];
	p->tech = ev->tech;
	if (s->peer_guid) {
		rc = learn_peer(t, p, pi, ev);
		if (rc < 0)
			return rc;
		changed |= rc;
	}
	uint8_t st = state_of(ev, p->state);
	if (st != p->state) {
		p->state = st;
		changed = 1;
	}
	return changed;
}

const char *fb_link_state_name(unsigned state)
{
	switch (state) {
	case FB_LS_UP: return "up";
	case FB_LS_DOWN: return "down";
	case FB_LS_DEGRADED: return "degraded";
	default: return "unknown";
	}
}

enum fb_link_state fb_topology_shown_state(const struct fb_topology *t, const struct fb_topo_port *p)
{
	return t->sw[p->sw].reachable ? (enum fb_link_state)p->state : FB_LS_UNKNOWN;
}

const struct fb_topo_port *fb_topology_by_peer(const struct fb_topology *t, uint64_t peer_guid,
					       uint16_t peer_port)
{
	if (!peer_guid)
		return NULL;
	uint32_t v = index_get(&t->by_peer, peer_guid, peer_port);
	if (!v && peer_port)
		v = index_get(&t->by_peer, peer_guid, 0);
	return v ? &t->ports[v - 1] : NULL;
}

const struct fb_topo_port *fb_topology_event_port(const struct fb_topology *t,
					      const struct fb_event *ev)
{
	uint64_t guid = ev->subj.switch_guid;
	uint16_t port = ev->subj.port;
	if (!guid)
		eth_switch_key(ev, &guid, &port);
	return guid && port ? fb_topology_port(t, guid, port) : NULL;
}

const struct fb_topo_port *fb_topology_port(const struct fb_topology *t, uint64_t switch_guid,
					    uint16_t port)
{
	uint32_t v = index_get(&t->by_port, switch_guid, port);
	return v ? &t->ports[v - 1] : NULL;
}

const struct fb_topo_switch *fb_topology_switch(const struct fb_topology *t, uint64_t guid)
{
	uint32_t v = index_get(&t->by_sw, guid, 0);
	return v ? &t->sw[v - 1] : NULL;
}

size_t fb_topology_n_switches(const struct fb_topology *t) { return t->n_sw; }
size_t fb_topology_n_ports(const struct fb_topology *t) { return t->n_ports; }

const struct fb_topo_switch *fb_topology_switch_at(const struct fb_topology *t, size_t i)
{
	return i < t->n_sw ? &t->sw[i] : NULL;
}

const struct fb_topo_port *fb_topology_port_at(const struct fb_topology *t, size_t i)
{
	return i < t->n_ports ? &t->ports[i] : NULL;
}

size_t fb_topology_switch_index(const struct fb_topology *t, const struct fb_topo_switch *s)
{
	return (size_t)(s - t->sw);
}

size_t fb_topology_port_index(const struct fb_topology *t, const struct fb_topo_port *p)
{
	return (size_t)(p - t->ports);
}

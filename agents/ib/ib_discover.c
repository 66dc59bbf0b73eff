/* ib_discover.c - breadth-first directed-route discovery of the switches. */
#include "ib_discover.h"

#include "fb_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ib_switch *find(const struct ib_topo *t, uint64_t guid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->sw[i].guid == guid)
			return &t->sw[i];
	return NULL;
}

/* Room for one more switch. */
static int reserve_one(struct ib_topo *t)
{
	if (t->n < t->cap)
		return 0;
	size_t cap = t->cap ? t->cap * 2 : 16;
	struct ib_switch *sw = realloc(t->sw, cap * sizeof(*sw));
	if (!sw)
		return -ENOMEM;
	t->sw = sw;
	t->cap = cap;
	return 0;
}

static int add_switch(struct ib_mad *m, struct ib_topo *t, const struct ib_dr *dr,
		      const struct ib_node_info *ni)
{
	if (reserve_one(t))
		return -ENOMEM;
	struct ib_switch *s = &t->sw[t->n];
	memset(s, 0, sizeof(*s));
	s->guid = ni->guid;
	s->dr = *dr;
	s->nports = ni->nports;
	s->ports = calloc((size_t)ni->nports + 1, sizeof(*s->ports));
	if (!s->ports)
		return -ENOMEM;
	if (ib_mad_node_desc(m, dr, s->desc) != 0)
		snprintf(s->desc, sizeof(s->desc), "switch-%016" PRIx64, s->guid);
	s->resume_port = 1;
	t->n++;
	return 0;
}

int ib_discover_peer(struct ib_mad *m, const struct ib_topo *t, const struct ib_switch *sw,
		     unsigned port, struct ib_peer *peer)
{
	struct ib_dr dr;
	struct ib_node_info ni;
	int rc = ib_dr_extend(&sw->dr, (uint8_t)port, &dr);
	if (rc == 0)
		rc = ib_mad_node_info(m, &dr, &ni);
	if (rc)
		return rc;
	memset(peer, 0, sizeof(*peer));
	peer->guid = ni.guid;
	peer->port = ni.local_port;
	peer->type = ni.type;
	/* A switch we know already costs no NodeDescription MAD. */
	const struct ib_switch *known = ni.type == IB_NT_SWITCH ? find(t, ni.guid) : NULL;
	if (known)
		memcpy(peer->desc, known->desc, sizeof(peer->desc));
	else if (ib_mad_node_desc(m, &dr, peer->desc) != 0)
		peer->desc[0] = '\0';
	return 0;
}

/* Every port of switch i: its state, and through each live link the peer;
 * new switches join the end of the array, which is the BFS queue. */
static int walk_switch(struct ib_mad *m, struct ib_topo *t, size_t i)
{
	for (unsigned p = 1; p <= t->sw[i].nports; p++) {
		struct ib_switch *s = &t->sw[i]; /* add_switch may move the array */
		struct ib_port *port = &s->ports[p];
		if (ib_mad_port_info(m, &s->dr, p, &port->pi) != 0) {
			fb_log_warn("discovery: no PortInfo from switch '%s' (GUID 0x%016" PRIx64
				    ") port %u; its link state is learned at the first poll",
				    s->desc, s->guid, p);
			continue;
		}
		port->have_pi = 1;
		if (port->pi.phys != IB_PHYS_LINKUP)
			continue;
		struct ib_peer peer;
		int rc = ib_discover_peer(m, t, s, p, &peer);
		if (rc) {
			fb_log_warn("discovery: switch '%s' (GUID 0x%016" PRIx64 ") port %u is up "
				    "but its peer did not answer: %s", s->desc, s->guid, p,
				    strerror(-rc));
			continue;
		}
		port->peer = peer;
		if (peer.type != IB_NT_SWITCH || find(t, peer.guid))
			continue;
		struct ib_dr dr;
		struct ib_node_info ni = { IB_NT_SWITCH, 0, peer.port, peer.guid };
		if (ib_dr_extend(&s->dr, (uint8_t)p, &dr) != 0)
			continue; /* deeper than a DR can go: unreachable from here */
		struct ib_node_info full;
		if (ib_mad_node_info(m, &dr, &full) == 0)
			ni = full;
		if (ni.nports == 0)
			continue;
		rc = add_switch(m, t, &dr, &ni);
		if (rc)
			return rc;
	}
	return 0;
}

int ib_discover_reroute(struct ib_mad *m, struct ib_topo *t, struct ib_switch *sw,
			unsigned max_tries)
{
	unsigned tried = 0;
	/* Shortest first: fewer hops, fewer links that can be the broken one. */
	for (unsigned hops = 0; hops < IB_DR_MAX_HOPS && tried < max_tries; hops++) {
		for (size_t i = 0; i < t->n && tried < max_tries; i++) {
			const struct ib_switch *via = &t->sw[i];
			if (via == sw || via->unreachable || via->dr.n != hops)
				continue;
			for (unsigned p = 1; p <= via->nports && tried < max_tries; p++) {
				const struct ib_port *port = &via->ports[p];
				struct ib_dr dr;
				struct ib_node_info ni;
				if (port->peer.guid != sw->guid || !port->have_pi ||
				    port->pi.phys != IB_PHYS_LINKUP ||
				    ib_dr_extend(&via->dr, (uint8_t)p, &dr) != 0 ||
				    (dr.n == sw->dr.n && memcmp(dr.hops, sw->dr.hops, dr.n) == 0))
					continue;
				tried++;
				if (ib_mad_node_info(m, &dr, &ni) != 0 || ni.guid != sw->guid)
					continue;
				char a[4 * IB_DR_MAX_HOPS + 2], b[4 * IB_DR_MAX_HOPS + 2];
				ib_dr_format(&sw->dr, a, sizeof(a));
				ib_dr_format(&dr, b, sizeof(b));
				fb_log_info("switch '%s' (GUID 0x%016" PRIx64 "): route %s lost, now "
					    "via '%s' port %u (route %s)", sw->desc, sw->guid, a,
					    via->desc, p, b);
				sw->dr = dr;
				return 0;
			}
		}
	}
	return -ENOENT;
}

static int by_guid(const void *a, const void *b)
{
	const struct ib_switch *x = a, *y = b;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

int ib_discover(struct ib_mad *m, struct ib_topo *t)
{
	struct ib_dr dr = { 0 };
	struct ib_node_info ni;
	int rc = ib_mad_node_info(m, &dr, &ni);
	if (rc) {
		fb_log_err("discovery: the local port does not answer NodeInfo: %s", strerror(-rc));
		return rc;
	}
	if (ni.type == IB_NT_SWITCH) {
		rc = add_switch(m, t, &dr, &ni);
	} else {
		/* A CA: leave by the port we are on, if its link is up. */
		struct ib_port_info pi;
		unsigned lp = ni.local_port;
		if (ib_mad_port_info(m, &dr, lp, &pi) != 0 || pi.phys != IB_PHYS_LINKUP) {
			fb_log_err("discovery: local port %u (GUID 0x%016" PRIx64 ") has no link "
				   "(PhysState %u); nothing to discover", lp, ni.guid, pi.phys);
			return -ENOENT;
		}
		struct ib_node_info sw;
		if ((rc = ib_dr_extend(&dr, (uint8_t)lp, &dr)) == 0 &&
		    (rc = ib_mad_node_info(m, &dr, &sw)) == 0) {
			if (sw.type != IB_NT_SWITCH) {
				fb_log_err("discovery: local port %u is cabled to a non-switch "
					   "(type %u): no switches to watch", lp, sw.type);
				return -ENOENT;
			}
			rc = add_switch(m, t, &dr, &sw);
		}
	}
	for (size_t i = 0; rc == 0 && i < t->n; i++)
		rc = walk_switch(m, t, i);
	if (rc) {
		fb_log_err("discovery failed: %s", strerror(-rc));
		return rc;
	}
	qsort(t->sw, t->n, sizeof(*t->sw), by_guid);
	return t->n ? 0 : -ENOENT;
}

int ib_topo_adopt(struct ib_topo *t, struct ib_topo *from, uint64_t guid)
{
	struct ib_switch *src = find(from, guid);
	if (!src || find(t, guid))
		return -ENOENT;
	if (reserve_one(t))
		return -ENOMEM;
	t->sw[t->n++] = *src;
	src->ports = NULL; /* t owns them now */
	t->sw[t->n - 1].assigned = 1;
	qsort(t->sw, t->n, sizeof(*t->sw), by_guid);
	return 0;
}

void ib_topo_free(struct ib_topo *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->sw[i].ports);
	free(t->sw);
	memset(t, 0, sizeof(*t));
}

static int name_listed(const char *names, const char *desc)
{
	size_t len = strlen(desc);
	for (const char *p = names; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == len && strncmp(p, desc, n) == 0)
			return 1;
		p += n + (e != NULL);
	}
	return 0;
}

size_t ib_topo_assign(struct ib_topo *t, const char *names, unsigned shard_i, unsigned shard_n)
{
	int all = !names || strcmp(names, "all") == 0;
	size_t listed = 0, assigned = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct ib_switch *s = &t->sw[i];
		s->assigned = 0;
		if (!all && !name_listed(names, s->desc))
			continue;
		if (listed++ % shard_n == shard_i) {
			s->assigned = 1;
			assigned++;
		}
	}
	if (!all) {
		/* Say which names found nothing: a typo should not look like a quiet fabric. */
		for (const char *p = names; *p;) {
			const char *e = strchr(p, ',');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			int hit = 0;
			for (size_t i = 0; i < t->n && !hit; i++)
				hit = strlen(t->sw[i].desc) == n && strncmp(t->sw[i].desc, p, n) == 0;
			if (!hit)
				fb_log_warn("--switches: no switch has node description '%.*s'",
					    (int)n, p);
			p += n + (e != NULL);
		}
	}
	return assigned;
}

/* blast.c - the blast radius of a switch or a cable (see blast.h). */
#include "blast.h"

#include "inventory.h"
#include "topology.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *fb_blast_effect_name(unsigned e)
{
	static const char *const names[] = { "ok", "degraded", "no_path" };
	return e < 3 ? names[e] : "unknown";
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

static int live_link(const struct fb_blast_graph *g, const uint8_t *sw_failed, const uint8_t *link_failed,
		     size_t k)
{
	const struct fb_blast_link *l = &g->links[k];
	return l->up && !(link_failed && link_failed[k]) &&
	       !(sw_failed && (sw_failed[l->a] || sw_failed[l->b]));
}

int fb_blast_compute(const struct fb_blast_graph *g, const uint8_t *sw_failed, const uint8_t *link_failed,
		     const uint8_t *host_failed, uint8_t *effect, struct fb_blast_counts *counts)
{
	size_t n = g->n_switches ? g->n_switches : 1;
	uint32_t *parent = malloc(n * sizeof(*parent));
	size_t *hosts_in = calloc(n, sizeof(*hosts_in)), *sws_in = calloc(n, sizeof(*sws_in));
	uint32_t *cabled = calloc(n, sizeof(*cabled)), *live = calloc(n, sizeof(*live));
	int rc = parent && hosts_in && sws_in && cabled && live ? 0 : -ENOMEM;
	if (rc)
		goto out;
	for (uint32_t s = 0; s < g->n_switches; s++)
		parent[s] = s;
	for (size_t k = 0; k < g->n_links; k++) {
		const struct fb_blast_link *l = &g->links[k];
		cabled[l->a]++;
		cabled[l->b]++;
		if (!live_link(g, sw_failed, link_failed, k))
			continue;
		live[l->a]++;
		live[l->b]++;
		uint32_t ra = uf_find(parent, l->a), rb = uf_find(parent, l->b);
		if (ra != rb)
			parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
	}
	/* A host counts for its part of the fabric if it can send at all. */
	for (size_t i = 0; i < g->n_hosts; i++) {
		const struct fb_blast_host *h = &g->hosts[i];
		effect[i] = FB_BLAST_NO_PATH;
		if (h->up && !(host_failed && host_failed[i]) && !(sw_failed && sw_failed[h->sw])) {
			effect[i] = FB_BLAST_OK;
			hosts_in[uf_find(parent, h->sw)]++;
		}
	}
	for (uint32_t s = 0; s < g->n_switches; s++)
		if (!(sw_failed && sw_failed[s]))
			sws_in[uf_find(parent, s)]++;
	/* Roots are the lowest index of their part, so ties go to it. */
	uint32_t main_root = 0;
	for (uint32_t s = 0; s < g->n_switches; s++)
		if (sws_in[s] > sws_in[main_root] ||
		    (sws_in[s] == sws_in[main_root] && hosts_in[s] > hosts_in[main_root]))
			main_root = s;
	struct fb_blast_counts c = { 0 };
	for (size_t i = 0; i < g->n_hosts; i++) {
		uint32_t sw = g->hosts[i].sw;
		if (effect[i] == FB_BLAST_OK && uf_find(parent, sw) != main_root)
			effect[i] = FB_BLAST_NO_PATH;
		else if (effect[i] == FB_BLAST_OK && live[sw] < cabled[sw])
			effect[i] = FB_BLAST_DEGRADED;
		c.ok += effect[i] == FB_BLAST_OK;
		c.degraded += effect[i] == FB_BLAST_DEGRADED;
		c.no_path += effect[i] == FB_BLAST_NO_PATH;
	}
	if (counts)
		*counts = c;
out:
	free(parent);
	free(hosts_in);
	free(sws_in);
	free(cabled);
	free(live);
	return rc;
}

/* ---- the broker's topology as a graph ------------------------------------- */

static int port_live(const struct fb_topo_port *p)
{
	return p->state == FB_LS_UP || p->state == FB_LS_DEGRADED;
}

void fb_blast_topo_free(struct fb_blast_topo *bt)
{
	free(bt->links);
	free(bt->hosts);
	free(bt->host_names);
	free(bt->link_pa);
	free(bt->link_pb);
	memset(bt, 0, sizeof(*bt));
}

int fb_blast_graph_from_topology(const struct fb_topology *t, const struct fb_inventory *inv,
				 struct fb_blast_topo *out)
{
	size_t np = fb_topology_n_ports(t);
	memset(out, 0, sizeof(*out));
	out->links = calloc(np + 1, sizeof(*out->links));
	out->hosts = calloc(np + 1, sizeof(*out->hosts));
	out->host_names = calloc(np + 1, sizeof(*out->host_names));
	out->link_pa = calloc(np + 1, sizeof(*out->link_pa));
	out->link_pb = calloc(np + 1, sizeof(*out->link_pb));
	if (!out->links || !out->hosts || !out->host_names || !out->link_pa || !out->link_pb) {
		fb_blast_topo_free(out);
		return -ENOMEM;
	}
	size_t nl = 0, nh = 0;
	for (size_t i = 0; i < np; i++) {
		const struct fb_topo_port *p = fb_topology_port_at(t, i);
		if (!p->peer_guid)
			continue;
		if (p->link_class == FB_LINK_HOST) {
			const char *name = inv ? fb_inventory_node_by_guid(inv, p->peer_guid) : NULL;
			out->hosts[nh] = (struct fb_blast_host){ p->sw, (uint8_t)port_live(p) };
			out->host_names[nh++] = name ? name : p->peer_name;
			continue;
		}
		if (p->link_class != FB_LINK_ISL)
			continue;
		const struct fb_topo_switch *peer = fb_topology_switch(t, p->peer_guid);
		if (!peer)
			continue;
		size_t b = fb_topology_switch_index(t, peer);
		const struct fb_topo_port *r = fb_topology_port(t, p->peer_guid, p->peer_port);
		int reverse = r && r->peer_guid == p->switch_guid && r->peer_port == p->port;
		/* Each cable once: from its lower end, or from its only reported end. */
		if (reverse && (p->switch_guid > p->peer_guid ||
				(p->switch_guid == p->peer_guid && p->port > p->peer_port)))
			continue;
		out->links[nl] = (struct fb_blast_link){ p->sw, (uint32_t)b,
							 (uint8_t)(port_live(p) && (!reverse || port_live(r))) };
		out->link_pa[nl] = i;
		out->link_pb[nl++] = reverse ? fb_topology_port_index(t, r) : SIZE_MAX;
	}
	out->g = (struct fb_blast_graph){ fb_topology_n_switches(t), out->links, nl, out->hosts, nh };
	return 0;
}

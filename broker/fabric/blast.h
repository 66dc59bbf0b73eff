/* blast.h - the blast radius of a switch or a cable: which hosts lose every
 * path into the fabric, and which lose some (docs/topology.md, "Blast
 * radius").
 *
 * Pure: an explicit graph in (switches, inter-switch cables, host ports),
 * an answer per host out. No clock, no allocation beyond the call's own
 * scratch, so it is unit-tested on hand-written fat trees, and fed by the
 * broker's topology (fb_blast_graph_from_topology) or by a saved map.
 *
 * The rule, against the cabling (every cable, whatever its state):
 *   after = the cables that are up and not failed, between switches that
 *           are not failed; the hosts whose own port is up and not failed,
 *           on a switch that is not failed.
 *   The fabric is the connected part of `after` (switches joined by its
 *   cables) with the most live switches, then the most such hosts, then
 *   the lowest switch index: a leaf cut off is one switch against the
 *   rest, however many hosts it has.
 *   no path  - a host outside it: its switch failed or cut off, or its own
 *              port down or failed;
 *   degraded - a host in it whose switch has fewer live cables than it is
 *              cabled with (it lost some of its uplinks: less bandwidth,
 *              fewer routes);
 *   ok       - the rest.
 * So a spine that dies leaves every host with a path (degraded, each leaf
 * lost its uplinks to it); a leaf that loses all its uplinks leaves exactly
 * its hosts with no path.
 */
#ifndef FB_BLAST_H
#define FB_BLAST_H

#include <stddef.h>
#include <stdint.h>

struct fb_topology;
struct fb_inventory;

enum fb_blast_effect { FB_BLAST_OK = 0, FB_BLAST_DEGRADED = 1, FB_BLAST_NO_PATH = 2 };

struct fb_blast_link {
	uint32_t a, b;   /* switch indices */
	uint8_t up;
};

struct fb_blast_host {
	uint32_t sw;     /* the switch its port is cabled to */
	uint8_t up;      /* that port's link */
};

struct fb_blast_graph {
	size_t n_switches;
	const struct fb_blast_link *links;
	size_t n_links;
	const struct fb_blast_host *hosts;
	size_t n_hosts;
};

struct fb_blast_counts {
	size_t ok, degraded, no_path;
};

/* effect[i] for hosts[i]. sw_failed (n_switches entries) and link_failed
 * (n_links) mark the failure to weigh; either may be NULL (none), and
 * host_failed (n_hosts) too. Returns 0 (counts filled when not NULL) or
 * -ENOMEM. */
int fb_blast_compute(const struct fb_blast_graph *g, const uint8_t *sw_failed, const uint8_t *link_failed,
		     const uint8_t *host_failed, uint8_t *effect, struct fb_blast_counts *counts);

/* "ok", "degraded", "no_path". */
const char *fb_blast_effect_name(unsigned e);

/* The graph of the broker's topology: its switches (by index), each
 * inter-switch cable once (up when every end that reported it says up or
 * degraded), and each switch port facing a host (up likewise) with its
 * host's name -- the node the inventory names for the peer GUID (inv may be
 * NULL), else the name the switch agent reported. Owned by the struct;
 * free with fb_blast_topo_free. Loop only (reads the topology). */
struct fb_blast_topo {
	struct fb_blast_graph g;
	struct fb_blast_link *links;
	struct fb_blast_host *hosts;
	const char **host_names;   /* point into the topology and inventory */
	size_t *link_pa, *link_pb; /* each cable's ends: topology port indices
				    * (fb_topology_port_at; SIZE_MAX: that end
				    * did not report it) */
};
int fb_blast_graph_from_topology(const struct fb_topology *t, const struct fb_inventory *inv,
				 struct fb_blast_topo *out);
void fb_blast_topo_free(struct fb_blast_topo *bt);

#endif

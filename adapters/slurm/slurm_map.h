/* slurm_map.h - which Slurm nodes an event concerns.
 *
 * Two sources besides the node name the broker puts on events
 * (Oem.Fabricbus.Node, from its inventory):
 *   - MapFile, a static file of "<port GUID | node GUID | MAC> <nodename>"
 *     lines, for nodes that run no node agent;
 *   - the broker's GET /fabric/map: per node its ports (GUIDs, the switch
 *     port each is cabled to, link state) and per switch GUID the hosts
 *     behind it. Needed for switch_unreachable (every host of the switch)
 *     and for seeding conditions at start.
 * Pure: parsing and lookups, no I/O but reading MapFile. One thread.
 */
#ifndef FBS_MAP_H
#define FBS_MAP_H

#include "fb_event.h"
#include "slurm_cond.h"
#include "slurm_policy.h"

#include <stddef.h>
#include <stdint.h>

/* ---- MapFile ------------------------------------------------------------------ */

struct fbs_mapfile;

/* Load path. 0, or FB_ECONFIG with "path:line: why" in err (bad GUID/MAC,
 * bad node name, an address mapped twice). */
int fbs_mapfile_load(const char *path, struct fbs_mapfile **out, char *err, size_t errsz);
void fbs_mapfile_free(struct fbs_mapfile *m);
size_t fbs_mapfile_count(const struct fbs_mapfile *m);
const char *fbs_mapfile_by_guid(const struct fbs_mapfile *m, uint64_t guid);
const char *fbs_mapfile_by_mac(const struct fbs_mapfile *m, const char *mac); /* any case, ':' or '-' */

/* ---- /fabric/map -------------------------------------------------------------- */

enum fbs_link { FBS_LINK_UNKNOWN = 0, FBS_LINK_UP, FBS_LINK_DOWN, FBS_LINK_DEGRADED };

struct fbs_fabmap_port {
	uint64_t port_guid, node_guid, switch_guid;
	unsigned switch_port;
	char switch_name[FB_NAME_MAX];
	uint8_t link;                  /* enum fbs_link */
};

struct fbs_fabmap_node {
	char name[FB_NAME_MAX];
	size_t n_ports;
	struct fbs_fabmap_port *ports;
};

struct fbs_fabmap_switch {
	uint64_t guid;
	char name[FB_NAME_MAX];
	int reachable;
	size_t n_hosts;
	char (*hosts)[FB_NAME_MAX];
};

struct fbs_fabmap {
	uint64_t last_event_id;
	size_t n_nodes, n_switches;
	struct fbs_fabmap_node *nodes;
	struct fbs_fabmap_switch *switches;
	size_t skipped;                /* entries refused (bad names, GUIDs) */
};

/* Parse the broker's /fabric/map document into m (freed first). Unknown
 * keys are ignored; a node name that is not a valid Slurm name and a
 * switch key that is not a GUID are skipped (counted). 0, or FB_EMALFORMED
 * with why in err. */
int fbs_fabmap_parse(const char *json, size_t len, struct fbs_fabmap *m, char *err, size_t errsz);
void fbs_fabmap_free(struct fbs_fabmap *m);
/* The switch by GUID, else by name; NULL if unknown. */
const struct fbs_fabmap_switch *fbs_fabmap_switch(const struct fbs_fabmap *m, uint64_t guid,
						  const char *name);

/* ---- routing and seeding -------------------------------------------------------- */

#define FBS_ROUTE_NEED_MAP 1 /* a switch the map does not know: refresh it and retry */

/* The nodes ev (classified as o) concerns, into out[max]: the event's node,
 * else MapFile by PortGUID, PeerGUID or Address, else the map's port by
 * PeerGUID/PortGUID or by switch GUID and port; for a switch-wide
 * observation every host of the switch. *how says which source answered
 * (for logs). Returns 0 (*n may be 0), or FBS_ROUTE_NEED_MAP. Names that
 * are not valid Slurm node names are never returned. */
int fbs_route(const struct fb_event *ev, const struct fbs_obs *o, const struct fbs_mapfile *mf,
	      const struct fbs_fabmap *fm, char (*out)[FB_NAME_MAX], size_t max, size_t *n,
	      const char **how);

/* Seed conditions from the map's link states (at start, and after a gap in
 * the stream): a node port "down" gets a link_down condition (if DrainOn
 * has it) unless it has one; "degraded" likewise for link_degraded; "up"
 * clears link_down and link_degraded at that port; an unreachable switch
 * starts switch_unreachable on its hosts, a reachable one clears it. The
 * conditions started here name the map's LastEventId. Returns how many
 * conditions were started or cleared. */
int fbs_map_seed(struct fbs_policy *p, const struct fbs_fabmap *m,
		 const struct fbs_classify_cfg *c, uint64_t now_ms);

#endif

/* topo_export.h - the fabric's switch tree, from a GET /fabric/map document,
 * as a Slurm topology.conf (topology/tree) or as JSON (docs/topology.md).
 *
 * Pure: a parsed map in, text out; no I/O, no clock, so that the same map
 * always gives the same bytes (what `fabricbus topology --diff` relies on).
 *
 * The tree: a switch with hosts is at level 0 -- nodes cabled to it (the
 * map's Nodes.*.Ports[].SwitchGUID), or reported ports with neither a node
 * nor a switch behind them (hosts with no node agent: the switch agent
 * reports only ports with a peer). A switch not yet placed and linked (the
 * map's Switches.*.Ports[].Peer, an inter-switch link, whatever its state:
 * the tree is the cabling, not today's health) to a switch of level k is
 * at level k + 1, and lists those as its Switches. The Slurm form keeps
 * only switches with a named node below them; the JSON has every switch,
 * "Level": null for one outside the tree.
 */
#ifndef FB_TOPO_EXPORT_H
#define FB_TOPO_EXPORT_H

#include <jansson.h>
#include <stddef.h>

/* What the map held that the Slurm form could not use. */
struct fb_topo_export_stats {
	size_t switches;       /* in the map */
	size_t tree_switches;  /* in the tree (levels assigned) */
	size_t nodes;          /* named nodes cabled to a switch */
	size_t links;          /* inter-switch links (each cable once) */
	size_t unnamed_hosts;  /* host ports of a switch with no node name
				* (no fabricbus-agent-node reported them) */
};

/* The topology.conf text for map (caller frees), or NULL on ENOMEM or a
 * document that is not a fabric map (err says which). */
char *fb_topo_export_slurm(json_t *map, struct fb_topo_export_stats *st, char *err, size_t errsz);

/* {"Fabric","Switches":[{"GUID","Name","SlurmName","Level","Nodes":[..],
 *   "Switches":[..]}],"Links":[{"Switch","Port","PeerSwitch","PeerPort",
 *   "LinkState" (down if either end says so, then degraded, up)}],"Nodes":[{"Node","Device","Port","SwitchGUID","Switch",
 *   "SwitchPort","LinkState"}]} (new reference), or NULL as above. */
json_t *fb_topo_export_json(json_t *map, struct fb_topo_export_stats *st, char *err, size_t errsz);

/* The blast radius (broker/fabric/blast.h) in the map: with what NULL, of
 * the links as they are now (which named nodes have no path into the
 * fabric, which lost some); else of that failure on top: "SWITCH" (its
 * Name, Slurm name or GUID) or "SWITCH:PORT" (the cable or host port
 * there). {"Failed":what or null,"NoPath":hostlist,"Degraded":hostlist,
 * "Counts":{"ok","degraded","no_path"}} (new reference), or NULL with err
 * (not a map, an unknown switch or port, ENOMEM). Only reported downs
 * count: a port or cable in state "unknown" is taken as up. Per node port:
 * a node with two ports may be in both lists. */
json_t *fb_topo_blast_json(json_t *map, const char *what, char *err, size_t errsz);

/* The lines of old that new lacks as "-line" and those new adds as
 * "+line", in new's then old's order (caller frees; "" if the same lines),
 * or NULL on ENOMEM. topology.conf has one line per switch, so a set
 * difference is the whole story. */
char *fb_topo_line_diff(const char *old, const char *new_text);

#endif

/* topology.h - the fabric's switch ports as the switch agents report them.
 *
 * Learned from switch-side events (fabricbus-agent-ib, agents/ib/ib_poll.c)
 * as they are accepted, and from the journal at start, so a restarted broker
 * has the map before any agent reconnects:
 *   topology            switch port <-> peer (node GUID, port, name, class)
 *   link_down/link_up   the port's link state: "down" / "up"
 *   link_degraded       "degraded"
 *   port_state          IB PortState 4/5 (Active/ActiveDefer) "up", 1 "down",
 *                       2/3 (Init/Armed) "up" when PhysState is LinkUp;
 *                       Ethernet ifOperStatus 1 "up", 2/7 "down"
 *   switch_unreachable  the switch stops answering; any later event from
 *   switch_reachable    it (or switch_reachable) makes it reachable again
 * Every port event also refreshes the switch name, the agent that last
 * reported the switch and, when it names one, the port's peer. Ports are
 * keyed by (switch GUID, port); an Ethernet switch (no GUID) by a key made of
 * its fabric and name, its ports by ifIndex, and its peers are host MACs
 * (peer_guid = the MAC's 48 bits, peer port 0: agents/snmp/snmp_mac.h).
 *
 * Memory is bounded: at most max_switches switches and max_ports ports;
 * beyond that, new entries are refused (-ENOSPC) and existing ones still
 * update. Lookups are O(1) (open addressing). Entries are never removed: a
 * port with a pulled cable keeps its last peer, as the agent does.
 *
 * Owned by the loop thread; no locking. Pointers returned stay valid until
 * the next fb_topology_learn().
 */
#ifndef FB_TOPOLOGY_H
#define FB_TOPOLOGY_H

#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

#define FB_TOPO_MAX_SWITCHES 65536
#define FB_TOPO_MAX_PORTS (1u << 20)

/* The top byte of the key of an Ethernet switch (topology.c). */
#define FB_TOPO_ETH_KEY_TAG 0xe700000000000000ULL

enum fb_link_state { FB_LS_UNKNOWN = 0, FB_LS_UP, FB_LS_DOWN, FB_LS_DEGRADED };

struct fb_topo_switch {
	uint64_t guid;
	char name[FB_NAME_MAX];
	char agent[FB_AGENT_ID_MAX]; /* the agent that reported it last: the owner
				      * of its resync (proto/PROTOCOL.md) */
	uint8_t reachable;
};

struct fb_topo_port {
	uint64_t switch_guid;
	uint64_t peer_guid;       /* 0: no peer known */
	uint32_t sw;              /* index of its switch (fb_topology_switch_at) */
	uint16_t port;
	uint16_t peer_port;
	uint8_t link_class;       /* enum fb_link_class */
	uint8_t tech;             /* enum fb_tech */
	uint8_t state;            /* enum fb_link_state, as last reported */
	char peer_name[FB_NAME_MAX];
};

struct fb_topology;

/* 0 for a bound means the default (FB_TOPO_MAX_*). NULL on ENOMEM. */
struct fb_topology *fb_topology_new(size_t max_switches, size_t max_ports);
void fb_topology_free(struct fb_topology *t);
/* A copy that another thread may read while the loop goes on learning
 * (the Redfish tree's builder). NULL on ENOMEM. */
struct fb_topology *fb_topology_clone(const struct fb_topology *t);

/* Learn from one accepted event. Returns 1 if anything the map shows
 * changed, 0 if not (or the event is not about a switch), -ENOSPC past a
 * bound, -ENOMEM (the table is then incomplete, never wrong). */
int fb_topology_learn(struct fb_topology *t, const struct fb_event *ev);

/* The (switch key, port) an event is about, as the table keys it: the
 * switch GUID and port, or for an Ethernet switch without a GUID the key
 * derived from its fabric and name and the ifIndex. 0 if it names no
 * switch. */
int fb_topology_key(const struct fb_event *ev, uint64_t *guid, uint16_t *port);
/* "up", "down", "degraded", "unknown". */
const char *fb_link_state_name(unsigned state);
/* The state to show for p: "unknown" while its switch is unreachable. */
enum fb_link_state fb_topology_shown_state(const struct fb_topology *t, const struct fb_topo_port *p);

/* The switch port cabled to (peer_guid, peer_port) -- the newest report
 * wins when two ports claim the same peer (a moved cable) -- or, failing
 * that, one reported with peer port 0 (unknown). NULL if none. */
const struct fb_topo_port *fb_topology_by_peer(const struct fb_topology *t, uint64_t peer_guid,
					       uint16_t peer_port);
const struct fb_topo_port *fb_topology_port(const struct fb_topology *t, uint64_t switch_guid,
					    uint16_t port);
const struct fb_topo_switch *fb_topology_switch(const struct fb_topology *t, uint64_t guid);
/* The switch port an event is about (by switch GUID and port, or for an
 * Ethernet switch by its fabric, name and ifIndex), or NULL. */
const struct fb_topo_port *fb_topology_event_port(const struct fb_topology *t,
					      const struct fb_event *ev);

/* Iteration, in the order first seen. */
size_t fb_topology_n_switches(const struct fb_topology *t);
size_t fb_topology_n_ports(const struct fb_topology *t);
const struct fb_topo_switch *fb_topology_switch_at(const struct fb_topology *t, size_t i);
const struct fb_topo_port *fb_topology_port_at(const struct fb_topology *t, size_t i);
/* The i of fb_topology_*_at for an entry this topology returned. */
size_t fb_topology_switch_index(const struct fb_topology *t, const struct fb_topo_switch *s);
size_t fb_topology_port_index(const struct fb_topology *t, const struct fb_topo_port *p);

#endif

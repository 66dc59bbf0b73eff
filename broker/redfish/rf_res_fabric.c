/* rf_res_fabric.c - Fabrics, their Switches, Ports, port Metrics and
 * Endpoints, from the loop's topology (switches, ports, peers, link
 * states), the fabric map (which node port is cabled where) and the port
 * counters (rf_ctr.h).
 *
 * Ids match the OriginOfCondition paths proto/fb_redfish.c renders: a
 * switch is known by its name when it has one (the node description),
 * else by its GUID ("0x0008f10400411a08"); a port by its number (the
 * ifIndex on Ethernet). A name two switches share falls back to the GUID
 * for the second. A switch is in the fabric its events name (subj.fabric:
 * the IB agent's --fabric, the SNMP agent's switch fabric), else in the
 * broker's FabricName, as in OriginOfCondition; host Endpoints are in the
 * broker's fabric. A fabric with Ethernet switches (keys tagged
 * FB_TOPO_ETH_KEY_TAG) is FabricType Ethernet.
 */
#include "rf_res.h"

#include "fb_event.h"
#include "rf_ctr.h"
#include "rf_service.h"
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P_MAX 1024

struct fab {
	struct fb_rf_build *b;
	const struct fb_topology *topo;
	const struct fb_rf_ctrs *ctrs;
	const char *ib_fabric;
	json_t *sw_path;   /* switch GUID hex -> its path */
	json_t *used;      /* switch paths in use */
	json_t *endpoint;  /* "guid:port" of a switch port -> endpoint path */
	json_t *fabrics;   /* fabric id -> {"sw": [paths], "ep": [paths]} */
};

static int is_eth(uint64_t guid)
{
	return (guid & 0xff00000000000000ULL) == FB_TOPO_ETH_KEY_TAG;
}

static void guid_hex(char out[19], uint64_t g)
{
	snprintf(out, 19, "0x%016llx", (unsigned long long)g);
}

/* The form Port.InfiniBand wants: "0008:f104:0041:1a08". */
static void guid_colons(char out[20], uint64_t g)
{
	snprintf(out, 20, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48), (unsigned)(g >> 32) & 0xffff,
		 (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

static json_t *fabric_lists(struct fab *f, const char *id)
{
	json_t *l = json_object_get(f->fabrics, id);
	if (!l) {
		l = json_pack("{s:[],s:[]}", "sw", "ep");
		json_object_set_new(f->fabrics, id, l);
	}
	return l;
}

static void fabric_path(char *p, size_t sz, const char *fabric)
{
	snprintf(p, sz, "/redfish/v1/Fabrics");
	fb_rf_path_append(p, sz, fabric);
}

/* ---- switches ---- */

/* The fabric its events name, else the broker's own (FabricName): where
 * OriginOfCondition puts it. */
static const char *switch_fabric(const struct fab *f, uint64_t guid)
{
	const char *named = fb_rf_ctrs_fabric(f->ctrs, guid);
	return named && named[0] ? named : f->ib_fabric;
}

static void name_switch(struct fab *f, const struct fb_topo_switch *sw, char *path, size_t sz)
{
	char g[19];
	guid_hex(g, sw->guid);
	fabric_path(path, sz, switch_fabric(f, sw->guid));
	fb_rf_path_append(path, sz, "Switches");
	size_t base = strlen(path);
	fb_rf_path_append(path, sz, sw->name[0] ? sw->name : g);
	if (json_object_get(f->used, path)) {
		path[base] = '\0';
		fb_rf_path_append(path, sz, g);
	}
	json_object_set_new(f->used, path, json_true());
	json_object_set_new(f->sw_path, g, json_string(path));
}

static const char *switch_path(const struct fab *f, uint64_t guid)
{
	char g[19];
	guid_hex(g, guid);
	return json_string_value(json_object_get(f->sw_path, g));
}

static int add_switch(struct fab *f, const struct fb_topo_switch *sw, const char *path)
{
	char g[19], ports[P_MAX];
	guid_hex(g, sw->guid);
	fb_rf_path_cat(ports, sizeof(ports), path, "/Ports");
	const char *id = strrchr(path, '/') + 1;
	char desc[160];
	snprintf(desc, sizeof(desc), "GUID %s, reported by %s", g, sw->agent[0] ? sw->agent : "?");
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s,s:s},s:o}", "@odata.type",
			      "#Switch.v1_11_0.Switch", "Id", id, "Name", sw->name[0] ? sw->name : g,
			      "Description", desc, "SwitchType",
			      is_eth(sw->guid) ? "Ethernet" : "InfiniBand", "Status", "State",
			      sw->reachable ? "Enabled" : "UnavailableOffline", "Health",
			      sw->reachable ? "OK" : "Critical", "Ports", fb_rf_ref(ports));
	json_t *lists = fabric_lists(f, switch_fabric(f, sw->guid));
	json_array_append_new(json_object_get(lists, "sw"), json_string(path));
	if (is_eth(sw->guid))
		json_object_set_new(lists, "eth", json_true());
	return fb_rf_build_add(f->b, path, "Switch", o);
}

/* ---- ports ---- */

static const char *link_status(unsigned st)
{
	return st == FB_LS_UP || st == FB_LS_DEGRADED ? "LinkUp" : st == FB_LS_DOWN ? "LinkDown" : NULL;
}

static const char *port_type(unsigned cls)
{
	return cls == FB_LINK_HOST ? "DownstreamPort" : cls == FB_LINK_ISL ? "InterswitchPort"
		: cls == FB_LINK_UPLINK ? "UpstreamPort" : NULL;
}

static void set_state(json_t *o, const struct fb_topo_port *p, unsigned st)
{
	const char *health = st == FB_LS_UP ? "OK" : st == FB_LS_DEGRADED ? "Warning"
			     : st == FB_LS_DOWN && p->peer_guid ? "Critical" : NULL;
	json_t *s = json_pack("{s:s}", "State", st == FB_LS_UNKNOWN ? "UnavailableOffline" : "Enabled");
	if (health)
		json_object_set_new(s, "Health", json_string(health));
	json_object_set_new(o, "Status", s);
	const char *ls = link_status(st);
	if (ls)
		json_object_set_new(o, "LinkStatus", json_string(ls));
}

static void set_speed(json_t *o, const struct fb_rf_port_ctrs *c)
{
	if (c && (c->have & (1ull << FB_CTR_LINK_SPEED_MBPS)))
		json_object_set_new(o, "CurrentSpeedGbps", json_real((double)c->v[FB_CTR_LINK_SPEED_MBPS] / 1000.0));
	if (c && (c->have & (1ull << FB_CTR_LINK_WIDTH)))
		json_object_set_new(o, "Width", json_integer((json_int_t)c->v[FB_CTR_LINK_WIDTH]));
}

/* Links to the peer: a switch port (ConnectedSwitchPorts, and the generic
 * ConnectedPorts a client that knows only Port.Links follows), or the
 * endpoint of a host port (whose ConnectedEntities name the system). With
 * them a client rebuilds the cabling from Switches/{id}/Ports alone. */
static json_t *port_links(struct fab *f, const struct fb_topo_port *p)
{
	json_t *links = json_object();
	const char *peer_sw = p->peer_guid ? switch_path(f, p->peer_guid) : NULL;
	if (peer_sw && p->peer_port) {
		char pp[P_MAX];
		fb_rf_path_port(pp, sizeof(pp), peer_sw, p->peer_port);
		json_object_set_new(links, "ConnectedSwitches", json_pack("[o]", fb_rf_ref(peer_sw)));
		json_object_set_new(links, "ConnectedSwitchPorts", json_pack("[o]", fb_rf_ref(pp)));
		json_object_set_new(links, "ConnectedPorts", json_pack("[o]", fb_rf_ref(pp)));
	}
	char k[48];
	snprintf(k, sizeof(k), "%016llx:%u", (unsigned long long)p->switch_guid, (unsigned)p->port);
	const char *ep = json_string_value(json_object_get(f->endpoint, k));
	if (ep)
		json_object_set_new(links, "AssociatedEndpoints", json_pack("[o]", fb_rf_ref(ep)));
	return links;
}

/* The peer as the switch agent reported it, for people (no OEM schema). */
static json_t *peer_text(const struct fb_topo_port *p)
{
	char g[19], d[FB_NAME_MAX + 96];
	guid_hex(g, p->peer_guid);
	if (!p->peer_guid)
		snprintf(d, sizeof(d), "no peer reported");
	else
		snprintf(d, sizeof(d), "cabled to %s%s%s port %u", p->peer_name[0] ? p->peer_name : "",
			 p->peer_name[0] ? " " : "", g, (unsigned)p->peer_port);
	return json_string(d);
}

static int add_metrics(struct fab *f, const char *port_path, const struct fb_rf_port_ctrs *c);

static int add_port(struct fab *f, const struct fb_topo_port *p, const char *sw_path)
{
	char path[P_MAX], id[16], metrics[P_MAX], g[20];
	snprintf(id, sizeof(id), "%u", (unsigned)p->port);
	fb_rf_path_port(path, sizeof(path), sw_path, p->port);
	fb_rf_path_cat(metrics, sizeof(metrics), path, "/Metrics");
	guid_colons(g, p->switch_guid);
	int eth = p->tech == FB_TECH_ETH || is_eth(p->switch_guid);
	const char *tech = eth ? "Ethernet" : "InfiniBand";
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "@odata.type", "#Port.v1_18_0.Port",
			      "Id", id, "Name", "Switch port", "PortId", id, "PortProtocol", tech,
			      "LinkNetworkTechnology", tech, "LinkState", "Enabled", "Metrics",
			      fb_rf_ref(metrics));
	if (port_type(p->link_class))
		json_object_set_new(o, "PortType", json_string(port_type(p->link_class)));
	set_state(o, p, fb_topology_shown_state(f->topo, p));
	const struct fb_rf_port_ctrs *c = fb_rf_ctrs_get(f->ctrs, p->switch_guid, p->port);
	set_speed(o, c);
	if (!eth)
		json_object_set_new(o, "InfiniBand", json_pack("{s:[s]}", "AssociatedNodeGUIDs", g));
	json_object_set_new(o, "Links", port_links(f, p));
	json_object_set_new(o, "Description", peer_text(p));
	int rc = fb_rf_build_add(f->b, path, "Port", o);
	return rc ? rc : add_metrics(f, path, c);
}

static void put_ctr(json_t *o, const struct fb_rf_port_ctrs *c, const char *name, unsigned id,
		    uint64_t mul)
{
	if (c && (c->have & (1ull << id)))
		json_object_set_new(o, name, json_integer((json_int_t)(c->v[id] * mul)));
}

/* Receive- and transmit-side error counters, summed into RXErrors and
 * TXErrors (IB PortCounters; IF-MIB on Ethernet). */
static const unsigned rx_errors[] = { FB_CTR_SYMBOL_ERROR, FB_CTR_RCV_ERRORS,
				      FB_CTR_RCV_REMOTE_PHYS_ERRORS, FB_CTR_RCV_SWITCH_RELAY_ERRORS,
				      FB_CTR_RCV_CONSTRAINT_ERRORS, FB_CTR_LOCAL_LINK_INTEGRITY_ERRORS,
				      FB_CTR_EXCESSIVE_BUFFER_OVERRUN, FB_CTR_IF_IN_ERRORS };
static const unsigned tx_errors[] = { FB_CTR_XMIT_CONSTRAINT_ERRORS, FB_CTR_IF_OUT_ERRORS };

static void put_sum(json_t *o, const struct fb_rf_port_ctrs *c, const char *name,
		    const unsigned *ids, size_t n)
{
	uint64_t sum = 0;
	int any = 0;
	for (size_t i = 0; c && i < n; i++)
		if (c->have & (1ull << ids[i])) {
			sum += c->v[ids[i]];
			any = 1;
		}
	if (any)
		json_object_set_new(o, name, json_integer((json_int_t)sum));
}

static int add_metrics(struct fab *f, const char *port_path, const struct fb_rf_port_ctrs *c)
{
	char path[P_MAX];
	fb_rf_path_cat(path, sizeof(path), port_path, "/Metrics");
	json_t *net = json_object();
	json_t *o = json_pack("{s:s,s:s,s:s}", "@odata.type", "#PortMetrics.v1_8_1.PortMetrics", "Id",
			      "Metrics", "Name", "Port metrics");
	put_sum(o, c, "RXErrors", rx_errors, sizeof(rx_errors) / sizeof(rx_errors[0]));
	put_sum(o, c, "TXErrors", tx_errors, sizeof(tx_errors) / sizeof(tx_errors[0]));
	put_ctr(o, c, "RXBytes", FB_CTR_RCV_DATA, 4); /* IB counts 4-byte words */
	put_ctr(o, c, "TXBytes", FB_CTR_XMIT_DATA, 4);
	put_ctr(net, c, "RXFrames", FB_CTR_RCV_PKTS, 1);
	put_ctr(net, c, "TXFrames", FB_CTR_XMIT_PKTS, 1);
	put_ctr(net, c, "TXDiscards", FB_CTR_XMIT_DISCARDS, 1);
	put_ctr(net, c, "TXDiscards", FB_CTR_IF_OUT_DISCARDS, 1);
	put_ctr(net, c, "RXDiscards", FB_CTR_IF_IN_DISCARDS, 1);
	if (json_object_size(net))
		json_object_set(o, "Networking", net);
	put_ctr(o, c, "LinkFailures", FB_CTR_LINK_DOWNED, 1);
	put_ctr(o, c, "TXBBCreditZero", FB_CTR_XMIT_WAIT, 1); /* IB PortXmitWait: ticks without credit */
	json_decref(net);
	(void)f;
	return fb_rf_build_add(f->b, path, "PortMetrics", o);
}

/* ---- endpoints: the host ports of the map's nodes ---- */

int fb_rf_endpoint_path(char *out, size_t sz, const char *ib_fabric, const char *node,
			const json_t *port)
{
	const char *tech = json_string_value(json_object_get(port, "Technology"));
	const char *dev = json_string_value(json_object_get(port, "Device"));
	json_int_t num = json_integer_value(json_object_get(port, "Port"));
	int eth = tech && strcmp(tech, "Ethernet") == 0;
	char id[3 * FB_NAME_MAX];
	if (eth || !num)
		snprintf(id, sizeof(id), "%s-%s", node, dev ? dev : "port");
	else
		snprintf(id, sizeof(id), "%s-%s-%lld", node, dev ? dev : "port", (long long)num);
	fabric_path(out, sz, ib_fabric); /* host ports: the broker's own fabric */
	fb_rf_path_append(out, sz, "Endpoints");
	return fb_rf_path_append(out, sz, id);
}

/* The switch port a node port is cabled to, or "" (needs switch paths). */
static void cabled_to(const struct fab *f, const json_t *port, char *out, size_t sz, char key[48])
{
	const char *g = json_string_value(json_object_get(port, "SwitchGUID"));
	json_int_t sp = json_integer_value(json_object_get(port, "SwitchPort"));
	const char *sw = g ? switch_path(f, strtoull(g, NULL, 16)) : NULL;
	out[0] = key[0] = '\0';
	if (!sw || !sp)
		return;
	snprintf(out, sz, "%s/Ports/%lld", sw, (long long)sp);
	snprintf(key, 48, "%016llx:%lld", strtoull(g, NULL, 16), (long long)sp);
}

/* Node, device, port and GUIDs, for people (no OEM schema). */
static json_t *endpoint_text(const char *node, const json_t *port)
{
	const char *guid = json_string_value(json_object_get(port, "PortGUID"));
	const char *mac = json_string_value(json_object_get(port, "MAC"));
	const char *dev = json_string_value(json_object_get(port, "Device"));
	char d[4 * FB_NAME_MAX];
	snprintf(d, sizeof(d), "%s %s port %lld%s%s", node, dev ? dev : "?",
		 (long long)json_integer_value(json_object_get(port, "Port")),
		 guid ? ", GUID " : mac ? ", MAC " : "", guid ? guid : mac ? mac : "");
	return json_string(d);
}

static int add_endpoint(struct fab *f, const char *node, const json_t *port)
{
	char path[P_MAX], sys[P_MAX], sp[P_MAX], key[48];
	fb_rf_endpoint_path(path, sizeof(path), f->ib_fabric, node, port);
	snprintf(sys, sizeof(sys), "/redfish/v1/Systems");
	fb_rf_path_append(sys, sizeof(sys), node);
	const char *tech = json_string_value(json_object_get(port, "Technology"));
	int eth = tech && strcmp(tech, "Ethernet") == 0;
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:[{s:s,s:s,s:o}]}", "@odata.type",
			      "#Endpoint.v1_8_2.Endpoint", "Id", strrchr(path, '/') + 1, "Name",
			      "Host port", "EndpointProtocol", eth ? "Ethernet" : "InfiniBand",
			      "ConnectedEntities", "EntityType", "NetworkController", "EntityRole",
			      "Initiator", "EntityLink", fb_rf_ref(sys));
	cabled_to(f, port, sp, sizeof(sp), key);
	if (sp[0]) {
		json_object_set_new(o, "Links", json_pack("{s:[o]}", "ConnectedPorts", fb_rf_ref(sp)));
		json_object_set_new(f->endpoint, key, json_string(path));
	}
	json_object_set_new(o, "Description", endpoint_text(node, port));
	json_array_append_new(json_object_get(fabric_lists(f, f->ib_fabric), "ep"), json_string(path));
	return fb_rf_build_add(f->b, path, "Endpoint", o);
}

static int add_endpoints(struct fab *f, const json_t *map)
{
	const char *node;
	json_t *n;
	json_object_foreach(json_object_get(map, "Nodes"), node, n) {
		size_t i;
		json_t *port;
		json_array_foreach(json_object_get(n, "Ports"), i, port) {
			int rc = add_endpoint(f, node, port);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* ---- fabrics and collections ---- */

static int add_fabric(struct fab *f, const char *id, json_t *lists)
{
	char path[P_MAX], sw[P_MAX], ep[P_MAX];
	fabric_path(path, sizeof(path), id);
	fb_rf_path_cat(sw, sizeof(sw), path, "/Switches");
	fb_rf_path_cat(ep, sizeof(ep), path, "/Endpoints");
	int eth = json_is_true(json_object_get(lists, "eth")); /* has Ethernet switches */
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:s},s:o,s:o}", "@odata.type",
			      "#Fabric.v1_4_0.Fabric", "Id", id, "Name", id, "FabricType",
			      eth ? "Ethernet" : "InfiniBand", "Status", "State", "Enabled", "Health",
			      "OK", "Switches", fb_rf_ref(sw), "Endpoints", fb_rf_ref(ep));
	int rc = fb_rf_build_add(f->b, path, "Fabric", o);
	if (!rc)
		rc = fb_rf_build_collection(f->b, sw, "SwitchCollection", "Switches",
					    json_incref(json_object_get(lists, "sw")));
	if (!rc)
		rc = fb_rf_build_collection(f->b, ep, "EndpointCollection", "Endpoints",
					    json_incref(json_object_get(lists, "ep")));
	return rc;
}

static int add_fabrics(struct fab *f)
{
	json_t *paths = json_array();
	const char *id;
	json_t *lists;
	int rc = 0;
	json_object_foreach(f->fabrics, id, lists) {
		char p[P_MAX];
		fabric_path(p, sizeof(p), id);
		json_array_append_new(paths, json_string(p));
		if (!rc)
			rc = add_fabric(f, id, lists);
	}
	return rc ? (json_decref(paths), rc)
		  : fb_rf_build_collection(f->b, "/redfish/v1/Fabrics", "FabricCollection", "Fabrics", paths);
}

/* Every switch with its ports (and their collection). */
static int add_switches(struct fab *f)
{
	size_t ns = fb_topology_n_switches(f->topo), np = fb_topology_n_ports(f->topo);
	json_t *ports = json_array();
	for (size_t i = 0; i < ns; i++)
		json_array_append_new(ports, json_array());
	int rc = 0;
	for (size_t i = 0; !rc && i < np; i++) {
		const struct fb_topo_port *p = fb_topology_port_at(f->topo, i);
		const char *sw = switch_path(f, p->switch_guid);
		char pp[P_MAX];
		fb_rf_path_port(pp, sizeof(pp), sw, p->port);
		json_array_append_new(json_array_get(ports, p->sw), json_string(pp));
		rc = add_port(f, p, sw);
	}
	for (size_t i = 0; !rc && i < ns; i++) {
		const struct fb_topo_switch *s = fb_topology_switch_at(f->topo, i);
		const char *sw = switch_path(f, s->guid);
		char pc[P_MAX];
		fb_rf_path_cat(pc, sizeof(pc), sw, "/Ports");
		rc = add_switch(f, s, sw);
		if (!rc)
			rc = fb_rf_build_collection(f->b, pc, "PortCollection", "Ports",
						    json_incref(json_array_get(ports, i)));
	}
	json_decref(ports);
	return rc;
}

int fb_rf_res_fabric(struct fb_rf_build *b, const json_t *map, const struct fb_topology *topo,
		     const struct fb_rf_ctrs *ctrs)
{
	const struct fb_rf_service *svc = fb_rf_build_service(b);
	struct fab f = { .b = b, .topo = topo, .ctrs = ctrs, .ib_fabric = svc->fabric,
			 .sw_path = json_object(), .used = json_object(), .endpoint = json_object(),
			 .fabrics = json_object() };
	fabric_lists(&f, svc->fabric); /* the default fabric is always there */
	for (size_t i = 0; topo && i < fb_topology_n_switches(topo); i++) {
		char path[P_MAX];
		name_switch(&f, fb_topology_switch_at(topo, i), path, sizeof(path));
	}
	int rc = map ? add_endpoints(&f, map) : 0;
	if (!rc && topo)
		rc = add_switches(&f);
	if (!rc)
		rc = add_fabrics(&f);
	json_decref(f.sw_path);
	json_decref(f.used);
	json_decref(f.endpoint);
	json_decref(f.fabrics);
	return rc;
}

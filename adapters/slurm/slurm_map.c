/* slurm_map.c - MapFile, the broker's /fabric/map, routing and seeding. */
#include "slurm_map.h"

#include "fb_conf.h"
#include "fb_err.h"
#include "fb_hostlist.h"
#include "fb_text.h"
#include "slurm_state.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- MapFile ------------------------------------------------------------------ */

struct map_entry {
	uint64_t guid;       /* 0 for a MAC entry */
	char mac[18];        /* "aa:bb:cc:dd:ee:ff", "" for a GUID entry */
	char node[FB_NAME_MAX];
	int line;
};

struct fbs_mapfile {
	size_t n, cap;
	struct map_entry *e;
};

/* "AA-bb:cc..." -> "aa:bb:cc:dd:ee:ff"; -1 if not a MAC. */
static int mac_norm(const char *s, char out[18])
{
	for (int i = 0; i < 6; i++) {
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]))
			return -1;
		out[i * 3] = (char)tolower((unsigned char)s[0]);
		out[i * 3 + 1] = (char)tolower((unsigned char)s[1]);
		s += 2;
		if (i < 5) {
			if (*s != ':' && *s != '-')
				return -1;
			out[i * 3 + 2] = ':';
			s++;
		}
	}
	out[17] = '\0';
	return *s ? -1 : 0;
}

static int map_add(struct fbs_mapfile *m, const struct map_entry *e, const char *origin, char *err,
		   size_t errsz)
{
	for (size_t i = 0; i < m->n; i++) {
		if ((e->guid && m->e[i].guid == e->guid) || (e->mac[0] && !strcmp(m->e[i].mac, e->mac)))
			return fb_err_set(err, errsz, FB_ECONFIG,
					  "%s: address is mapped twice (first at line %d, to %s)",
					  origin, m->e[i].line, m->e[i].node);
	}
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 64;
		struct map_entry *ne = realloc(m->e, nc * sizeof(*ne));
		if (!ne)
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: out of memory", origin);
		m->e = ne;
		m->cap = nc;
	}
	m->e[m->n++] = *e;
	return 0;
}

int fbs_mapfile_load(const char *path, struct fbs_mapfile **out, char *err, size_t errsz)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "%s: cannot open: %s", path, strerror(errno));
	struct fbs_mapfile *m = calloc(1, sizeof(*m));
	char line[1024];
	int lineno = 0, rc = m ? 0 : FB_ECONFIG;
	if (!m)
		fb_err_set(err, errsz, rc, "%s: out of memory", path);
	while (!rc && fgets(line, sizeof(line), f)) {
		char origin[600];
		snprintf(origin, sizeof(origin), "%.500s:%d", path, ++lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			rc = fb_err_set(err, errsz, FB_ECONFIG, "%s: line too long", origin);
			break;
		}
		line[strcspn(line, "#")] = '\0';
		char *save = NULL, *addr = strtok_r(line, " \t\r\n", &save);
		if (!addr)
			continue;
		char *node = strtok_r(NULL, " \t\r\n", &save), *extra = strtok_r(NULL, " \t\r\n", &save);
		struct map_entry e;
		memset(&e, 0, sizeof(e));
		e.line = lineno;
		if (!node || extra) {
			rc = fb_err_set(err, errsz, FB_ECONFIG,
					"%s: expected '<port GUID | node GUID | MAC> <nodename>'",
					origin);
		} else if (fb_text_parse_guid(addr, strlen(addr), &e.guid) && mac_norm(addr, e.mac)) {
			rc = fb_err_set(err, errsz, FB_ECONFIG,
					"%s: '%.40s' is neither a GUID (0x and up to 16 hex "
					"digits) nor a MAC (aa:bb:cc:dd:ee:ff)", origin, addr);
		} else if (e.guid == 0 && !e.mac[0]) {
			rc = fb_err_set(err, errsz, FB_ECONFIG, "%s: GUID 0 names no port", origin);
		} else if (!fbs_node_name_valid(node)) {
			rc = fb_err_set(err, errsz, FB_ECONFIG,
					"%s: '%.70s' is not a node name (1..%d of A-Z a-z 0-9 . _ -)",
					origin, node, FB_NAME_MAX - 1);
		} else {
			strcpy(e.node, node);
			rc = map_add(m, &e, origin, err, errsz);
		}
	}
	fclose(f);
	if (rc) {
		fbs_mapfile_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

void fbs_mapfile_free(struct fbs_mapfile *m)
{
	if (!m)
		return;
	free(m->e);
	free(m);
}

size_t fbs_mapfile_count(const struct fbs_mapfile *m) { return m ? m->n : 0; }

const char *fbs_mapfile_by_guid(const struct fbs_mapfile *m, uint64_t guid)
{
	for (size_t i = 0; m && guid && i < m->n; i++)
		if (m->e[i].guid == guid)
			return m->e[i].node;
	return NULL;
}

const char *fbs_mapfile_by_mac(const struct fbs_mapfile *m, const char *mac)
{
	char norm[18];
	if (!m || !mac || mac_norm(mac, norm))
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->e[i].mac, norm) == 0)
			return m->e[i].node;
	return NULL;
}

/* ---- /fabric/map -------------------------------------------------------------- */

void fbs_fabmap_free(struct fbs_fabmap *m)
{
	for (size_t i = 0; i < m->n_nodes; i++)
		free(m->nodes[i].ports);
	for (size_t i = 0; i < m->n_switches; i++)
		free(m->switches[i].hosts);
	free(m->nodes);
	free(m->switches);
	memset(m, 0, sizeof(*m));
}

static uint64_t guid_of(json_t *v)
{
	uint64_t g = 0;
	const char *s = json_string_value(v);
	if (!s || fb_text_parse_guid(s, strlen(s), &g))
		return 0;
	return g;
}

/* The broker keys an Ethernet switch, which has no GUID, by a made-up one
 * with this top byte (broker/fabric/topology.h, FB_TOPO_ETH_KEY_TAG; a
 * real EUI-64 never starts with it: its group bit is set). Live events
 * name such a switch by name only, so the map's must too, for the keys of
 * seeded conditions to be the live events' keys ("sw:leaf1/5"). */
#define ETH_SWITCH_KEY_TAG 0xe7u

static uint64_t switch_guid_of(json_t *v)
{
	uint64_t g = guid_of(v);
	return g >> 56 == ETH_SWITCH_KEY_TAG ? 0 : g;
}

static uint8_t link_of(json_t *v)
{
	const char *s = json_string_value(v);
	if (!s)
		return FBS_LINK_UNKNOWN;
	if (!strcmp(s, "up"))
		return FBS_LINK_UP;
	if (!strcmp(s, "down"))
		return FBS_LINK_DOWN;
	return !strcmp(s, "degraded") ? FBS_LINK_DEGRADED : FBS_LINK_UNKNOWN;
}

static void copy_name(char *dst, json_t *v)
{
	const char *s = json_string_value(v);
	snprintf(dst, FB_NAME_MAX, "%s", s && strlen(s) < FB_NAME_MAX ? s : "");
}

static int parse_node(struct fbs_fabmap_node *n, const char *name, json_t *o)
{
	snprintf(n->name, sizeof(n->name), "%s", name);
	json_t *ports = json_object_get(o, "Ports");
	size_t np = json_array_size(ports);
	if (np && !(n->ports = calloc(np, sizeof(*n->ports))))
		return -ENOMEM;
	for (size_t i = 0; i < np; i++) {
		json_t *p = json_array_get(ports, i);
		struct fbs_fabmap_port *x = &n->ports[n->n_ports];
		if (!json_is_object(p))
			continue;
		x->port_guid = guid_of(json_object_get(p, "PortGUID"));
		x->node_guid = guid_of(json_object_get(p, "NodeGUID"));
		x->switch_guid = switch_guid_of(json_object_get(p, "SwitchGUID"));
		json_int_t sp = json_integer_value(json_object_get(p, "SwitchPort"));
		x->switch_port = sp > 0 && sp < 65536 ? (unsigned)sp : 0;
		copy_name(x->switch_name, json_object_get(p, "Switch"));
		x->link = link_of(json_object_get(p, "LinkState"));
		n->n_ports++;
	}
	return 0;
}

static int parse_switch(struct fbs_fabmap_switch *s, uint64_t guid, json_t *o)
{
	s->guid = guid >> 56 == ETH_SWITCH_KEY_TAG ? 0 : guid;
	copy_name(s->name, json_object_get(o, "Name"));
	s->reachable = !json_is_false(json_object_get(o, "Reachable"));
	json_t *hosts = json_object_get(o, "Hosts");
	size_t nh = json_array_size(hosts);
	if (nh && !(s->hosts = calloc(nh, sizeof(*s->hosts))))
		return -ENOMEM;
	for (size_t i = 0; i < nh; i++) {
		const char *h = json_string_value(json_array_get(hosts, i));
		if (h && fbs_node_name_valid(h))
			strcpy(s->hosts[s->n_hosts++], h);
	}
	return 0;
}

int fbs_fabmap_parse(const char *json, size_t len, struct fbs_fabmap *m, char *err, size_t errsz)
{
	fbs_fabmap_free(m);
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	if (!json_is_object(root)) {
		fb_err_set(err, errsz, FB_EMALFORMED,
			   "not a JSON object: %s", root ? "wrong type" : je.text);
		json_decref(root);
		return FB_EMALFORMED;
	}
	json_int_t last = json_integer_value(json_object_get(root, "LastEventId"));
	m->last_event_id = last > 0 ? (uint64_t)last : 0;
	json_t *nodes = json_object_get(root, "Nodes"), *sws = json_object_get(root, "Switches");
	int rc = 0;
	if ((nodes && !json_is_object(nodes)) || (sws && !json_is_object(sws)))
		rc = fb_err_set(err, errsz, FB_EMALFORMED, "Nodes and Switches must be objects");
	size_t nn = json_object_size(nodes), ns = json_object_size(sws);
	if (!rc && ((nn && !(m->nodes = calloc(nn, sizeof(*m->nodes)))) ||
		    (ns && !(m->switches = calloc(ns, sizeof(*m->switches)))))) {
		rc = fb_err_set(err, errsz, -ENOMEM, "out of memory");
	}
	const char *k;
	json_t *v;
	json_object_foreach(rc ? NULL : nodes, k, v) {
		if (!fbs_node_name_valid(k) || !json_is_object(v)) {
			m->skipped++;
			continue;
		}
		if ((rc = parse_node(&m->nodes[m->n_nodes++], k, v)))
			break;
	}
	json_object_foreach(rc ? NULL : sws, k, v) {
		uint64_t g = 0;
		if (fb_text_parse_guid(k, strlen(k), &g) || !json_is_object(v)) {
			m->skipped++;
			continue;
		}
		if ((rc = parse_switch(&m->switches[m->n_switches++], g, v)))
			break;
	}
	json_decref(root);
	if (rc == -ENOMEM)
		fb_err_set(err, errsz, rc, "out of memory");
	if (rc)
		fbs_fabmap_free(m);
	return rc;
}

const struct fbs_fabmap_switch *fbs_fabmap_switch(const struct fbs_fabmap *m, uint64_t guid,
						  const char *name)
{
	for (size_t i = 0; guid && i < m->n_switches; i++)
		if (m->switches[i].guid == guid)
			return &m->switches[i];
	for (size_t i = 0; name && *name && i < m->n_switches; i++)
		if (strcmp(m->switches[i].name, name) == 0)
			return &m->switches[i];
	return NULL;
}

static const char *fabmap_by_guid(const struct fbs_fabmap *m, uint64_t g)
{
	for (size_t i = 0; g && i < m->n_nodes; i++)
		for (size_t k = 0; k < m->nodes[i].n_ports; k++)
			if (m->nodes[i].ports[k].port_guid == g || m->nodes[i].ports[k].node_guid == g)
				return m->nodes[i].name;
	return NULL;
}

static const char *fabmap_by_switch_port(const struct fbs_fabmap *m, uint64_t sw, unsigned port)
{
	for (size_t i = 0; sw && port && i < m->n_nodes; i++)
		for (size_t k = 0; k < m->nodes[i].n_ports; k++)
			if (m->nodes[i].ports[k].switch_guid == sw &&
			    m->nodes[i].ports[k].switch_port == port)
				return m->nodes[i].name;
	return NULL;
}

/* ---- routing ------------------------------------------------------------------ */

static int one(const char *node, const char *src, char (*out)[FB_NAME_MAX], size_t max, size_t *n,
	       const char **how)
{
	if (!node || !fbs_node_name_valid(node) || !max)
		return 0;
	strcpy(out[0], node);
	*n = 1;
	*how = src;
	return 1;
}

struct route_acc {
	char (*out)[FB_NAME_MAX];
	size_t max, *n;
};

static int route_one(void *arg, const char *name, size_t len)
{
	struct route_acc *r = arg;
	if (*r->n >= r->max)
		return 1; /* full: the cap refuses far fewer anyway */
	if (len >= FB_NAME_MAX)
		return 0;
	memcpy(r->out[*r->n], name, len + 1);
	(*r->n)++;
	return 0;
}

/* The names of a hostlist the broker wrote (a root cause's lists). */
static void route_hostlist(const char *hl, char (*out)[FB_NAME_MAX], size_t max, size_t *n)
{
	struct route_acc r = { out, max, n };
	char err[128];
	if (hl[0])
		(void)fb_hostlist_expand(hl, strlen(hl), max, route_one, &r, NULL, err, sizeof(err));
}

int fbs_route(const struct fb_event *ev, const struct fbs_obs *o, const struct fbs_mapfile *mf,
	      const struct fbs_fabmap *fm, char (*out)[FB_NAME_MAX], size_t max, size_t *n,
	      const char **how)
{
	const struct fb_subject *s = &ev->subj;
	*n = 0;
	*how = "none";
	if (o->root_cause) {
		route_hostlist(ev->text, out, max, n);
		if (o->with_degraded)
			route_hostlist(s->peer_name, out, max, n);
		*how = o->with_degraded ? "the root cause's NoPath and Degraded hosts" : "the root cause's NoPath hosts";
		return 0;
	}
	if (o->switch_wide) {
		const struct fbs_fabmap_switch *sw =
			fm ? fbs_fabmap_switch(fm, o->switch_guid, o->switch_name) : NULL;
		if (!sw)
			return FBS_ROUTE_NEED_MAP;
		for (size_t i = 0; i < sw->n_hosts && *n < max; i++)
			strcpy(out[(*n)++], sw->hosts[i]);
		*how = "/fabric/map switch hosts";
		return 0;
	}
	if (one(s->node, "event Node", out, max, n, how))
		return 0;
	if (one(fbs_mapfile_by_guid(mf, s->port_guid), "MapFile PortGUID", out, max, n, how) ||
	    one(fbs_mapfile_by_guid(mf, s->peer_guid), "MapFile PeerGUID", out, max, n, how) ||
	    one(fbs_mapfile_by_mac(mf, s->addr), "MapFile Address", out, max, n, how))
		return 0;
	if (!fm)
		return 0;
	if (one(fabmap_by_guid(fm, s->peer_guid), "/fabric/map PeerGUID", out, max, n, how) ||
	    (ev->link_class == FB_LINK_NODE &&
	     one(fabmap_by_guid(fm, s->port_guid), "/fabric/map PortGUID", out, max, n, how)))
		return 0;
	if (ev->link_class != FB_LINK_NODE)
		one(fabmap_by_switch_port(fm, s->switch_guid, s->port), "/fabric/map switch port",
		    out, max, n, how);
	return 0;
}

/* ---- seeding ------------------------------------------------------------------ */

static int seed_obs(struct fbs_policy *p, const char *node, struct fbs_obs *o, uint64_t now)
{
	int rc = fbs_policy_observe(p, node, o, now);
	return rc > 0 ? 1 : 0;
}

static int seed_port(struct fbs_policy *p, const char *node, const struct fbs_fabmap_port *x,
		     const struct fbs_classify_cfg *c, uint64_t event_id, uint64_t now)
{
	struct fbs_obs o;
	char label[FBS_CAUSE_MAX / 2];
	memset(&o, 0, sizeof(o));
	o.event_id = event_id;
	o.hold_ms = c->hold_ms;
	if (x->switch_guid || x->switch_name[0]) {
		fbs_port_key(x->switch_guid, x->switch_name, x->switch_port, o.key, sizeof(o.key));
		fbs_port_label(x->switch_guid, x->switch_name, x->switch_port, label, sizeof(label));
	} else if (x->port_guid) {
		fbs_fmt(o.key, sizeof(o.key), "pg:0x%016llx", (unsigned long long)x->port_guid);
		fbs_fmt(label, sizeof(label), "%s port 0x%016llx", node,
			 (unsigned long long)x->port_guid);
	} else {
		return 0;
	}
	switch (x->link) {
	case FBS_LINK_UP:
		o.op = FBS_OP_LINK_UP;
		return seed_obs(p, node, &o, now);
	case FBS_LINK_DOWN:
		o.op = FBS_OP_LINK_DOWN;
		o.type = FBS_C_LINK_DOWN;
		o.drains = !!(c->drain_on & FBS_C_BIT(FBS_C_LINK_DOWN));
		fbs_fmt(o.cause, sizeof(o.cause), "link down %s", label);
		return o.drains ? seed_obs(p, node, &o, now) : 0;
	case FBS_LINK_DEGRADED:
		if (!(c->drain_on & FBS_C_BIT(FBS_C_DEGRADED)))
			return 0;
		o.op = FBS_OP_START;
		o.type = FBS_C_DEGRADED;
		o.drains = 1;
		fbs_fmt(o.cause, sizeof(o.cause), "link degraded %s", label);
		return seed_obs(p, node, &o, now);
	default:
		return 0;
	}
}

int fbs_map_seed(struct fbs_policy *p, const struct fbs_fabmap *m,
		 const struct fbs_classify_cfg *c, uint64_t now_ms)
{
	int changed = 0;
	for (size_t i = 0; i < m->n_nodes; i++)
		for (size_t k = 0; k < m->nodes[i].n_ports; k++)
			changed += seed_port(p, m->nodes[i].name, &m->nodes[i].ports[k], c,
					     m->last_event_id, now_ms);
	for (size_t i = 0; i < m->n_switches; i++) {
		const struct fbs_fabmap_switch *sw = &m->switches[i];
		struct fbs_obs o;
		memset(&o, 0, sizeof(o));
		o.type = FBS_C_SWITCH;
		o.event_id = m->last_event_id;
		o.hold_ms = c->hold_ms;
		fbs_switch_key(sw->guid, sw->name, o.key, sizeof(o.key));
		fbs_fmt(o.cause, sizeof(o.cause), "switch %s unreachable",
			 sw->name[0] ? sw->name : o.key + 4);
		o.op = sw->reachable ? FBS_OP_CLEAR : FBS_OP_START;
		o.drains = !!(c->drain_on & FBS_C_BIT(FBS_C_SWITCH));
		if (o.op == FBS_OP_START && !o.drains)
			continue;
		for (size_t h = 0; h < sw->n_hosts; h++)
			changed += seed_obs(p, sw->hosts[h], &o, now_ms);
	}
	return changed;
}

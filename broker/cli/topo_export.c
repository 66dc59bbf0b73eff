/* topo_export.c - the switch tree of a fabric map as topology.conf or JSON
 * (see topo_export.h). */
#include "topo_export.h"

#include "blast.h"
#include "fb_buf.h"
#include "fb_err.h"
#include "fb_hostlist_fmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tx_switch {
	const char *guid;      /* the map's key */
	const char *name;      /* its Name, or "" */
	char slurm[80];        /* SwitchName= */
	int level;             /* -1: not in the tree */
	int kept;              /* in the Slurm form: has a named node below it */
	const char **nodes;    /* named nodes cabled to it (sorted, may repeat) */
	size_t n_nodes, cap_nodes;
	size_t unclaimed;      /* ports with neither a node nor a switch behind */
};

struct tx_link {
	size_t a, b;           /* switch indices */
	json_int_t pa, pb;
	const char *state;
};

struct tx_model {
	json_t *map;
	const char *fabric;
	struct tx_switch *sw;
	size_t n_sw;
	struct tx_link *links;
	size_t n_links, cap_links;
	size_t n_nodes;        /* named nodes on a switch */
};

/* ---- the model ----------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_sw_guid(const void *a, const void *b)
{
	return strcmp(((const struct tx_switch *)a)->guid, ((const struct tx_switch *)b)->guid);
}

static long find_switch(const struct tx_model *m, const char *guid)
{
	size_t lo = 0, hi = m->n_sw;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->sw[mid].guid, guid);
		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void model_free(struct tx_model *m)
{
	for (size_t i = 0; i < m->n_sw; i++)
		free(m->sw[i].nodes);
	free(m->sw);
	free(m->links);
}

static int valid_slurm_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '_' || *s == '.'))
			return 0;
	return 1;
}

/* A switch's Name when Slurm can take it and no other switch has it, else
 * "sw" and its GUID's hex (real switches are named "MF0;sw1:MSB7700/U1"). */
static void name_switches(struct tx_model *m)
{
	for (size_t i = 0; i < m->n_sw; i++) {
		struct tx_switch *s = &m->sw[i];
		int unique = valid_slurm_name(s->name) && strlen(s->name) < sizeof(s->slurm);
		for (size_t j = 0; j < m->n_sw && unique; j++)
			if (j != i && strcmp(m->sw[j].name, s->name) == 0)
				unique = 0;
		if (unique)
			snprintf(s->slurm, sizeof(s->slurm), "%s", s->name);
		else
			snprintf(s->slurm, sizeof(s->slurm), "sw%s",
				 strncmp(s->guid, "0x", 2) == 0 ? s->guid + 2 : s->guid);
	}
}

static int add_node(struct tx_switch *s, const char *node)
{
	if (s->n_nodes == s->cap_nodes) {
		size_t c = s->cap_nodes ? 2 * s->cap_nodes : 16;
		const char **v = realloc(s->nodes, c * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->nodes = v;
		s->cap_nodes = c;
	}
	s->nodes[s->n_nodes++] = node;
	return 0;
}

static int load_switches(struct tx_model *m, json_t *sws)
{
	const char *key;
	json_t *v;
	m->sw = calloc(json_object_size(sws) + 1, sizeof(*m->sw));
	if (!m->sw)
		return -ENOMEM;
	json_object_foreach(sws, key, v) {
		const char *name = json_string_value(json_object_get(v, "Name"));
		m->sw[m->n_sw++] = (struct tx_switch){ .guid = key, .name = name ? name : "", .level = -1 };
	}
	qsort(m->sw, m->n_sw, sizeof(*m->sw), cmp_sw_guid);
	name_switches(m);
	return 0;
}

/* Is port `port` of switch s claimed by some node's port? */
static int port_has_node(json_t *nodes, const char *guid, json_int_t port)
{
	const char *key;
	json_t *v;
	json_object_foreach(nodes, key, v) {
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(v, "Ports"), i, p) {
			const char *g = json_string_value(json_object_get(p, "SwitchGUID"));
			if (g && strcmp(g, guid) == 0 &&
			    json_integer_value(json_object_get(p, "SwitchPort")) == port)
				return 1;
		}
	}
	return 0;
}

static int load_nodes(struct tx_model *m, json_t *nodes)
{
	const char *key;
	json_t *v;
	json_object_foreach(nodes, key, v) {
		size_t i;
		json_t *p;
		int on_switch = 0;
		json_array_foreach(json_object_get(v, "Ports"), i, p) {
			const char *g = json_string_value(json_object_get(p, "SwitchGUID"));
			long s = g ? find_switch(m, g) : -1;
			if (s < 0)
				continue;
			if (add_node(&m->sw[s], key))
				return -ENOMEM;
			on_switch = 1;
		}
		m->n_nodes += (size_t)on_switch;
	}
	for (size_t i = 0; i < m->n_sw; i++)
		if (m->sw[i].n_nodes)
			qsort(m->sw[i].nodes, m->sw[i].n_nodes, sizeof(*m->sw[i].nodes), cmp_str);
	return 0;
}

/* The LinkState switch sw reports for port, or NULL. */
static const char *port_state(json_t *sws, const char *guid, json_int_t port)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(json_object_get(sws, guid), "Ports"), i, p)
		if (json_integer_value(json_object_get(p, "Port")) == port)
			return json_string_value(json_object_get(p, "LinkState"));
	return NULL;
}

/* A cable's state from both its ends: down if either end says so, then
 * degraded, up, unknown. */
static const char *worse_state(const char *a, const char *b)
{
	static const char *const order[] = { "down", "degraded", "up" };
	for (size_t i = 0; i < 3; i++)
		if ((a && !strcmp(a, order[i])) || (b && !strcmp(b, order[i])))
			return order[i];
	return "unknown";
}

/* Does switch b report port pb cabled to (a's guid, pa)? */
static int reverse_reported(json_t *sws, const struct tx_switch *a, json_int_t pa,
			    const struct tx_switch *b, json_int_t pb)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(json_object_get(sws, b->guid), "Ports"), i, p) {
		const char *peer = json_string_value(json_object_get(p, "Peer"));
		if (peer && strcmp(peer, a->guid) == 0 && json_integer_value(json_object_get(p, "Port")) == pb &&
		    json_integer_value(json_object_get(p, "PeerPort")) == pa)
			return 1;
	}
	return 0;
}

static int add_link(struct tx_model *m, struct tx_link l)
{
	if (m->n_links == m->cap_links) {
		size_t c = m->cap_links ? 2 * m->cap_links : 64;
		struct tx_link *v = realloc(m->links, c * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->links = v;
		m->cap_links = c;
	}
	m->links[m->n_links++] = l;
	return 0;
}

/* Each cable once: from the end with the lower (GUID, port), or from the
 * only end that reported it. */
static int load_links(struct tx_model *m, json_t *sws, json_t *nodes)
{
	for (size_t a = 0; a < m->n_sw; a++) {
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(json_object_get(sws, m->sw[a].guid), "Ports"), i, p) {
			const char *peer = json_string_value(json_object_get(p, "Peer"));
			json_int_t pa = json_integer_value(json_object_get(p, "Port"));
			if (!peer) {
				if (!port_has_node(nodes, m->sw[a].guid, pa))
					m->sw[a].unclaimed++;
				continue;
			}
			long b = find_switch(m, peer);
			if (b < 0)
				continue;
			json_int_t pb = json_integer_value(json_object_get(p, "PeerPort"));
			int first = a < (size_t)b || (a == (size_t)b && pa < pb);
			if (!first && reverse_reported(sws, &m->sw[a], pa, &m->sw[b], pb))
				continue;
			const char *st = worse_state(json_string_value(json_object_get(p, "LinkState")),
						     port_state(sws, m->sw[b].guid, pb));
			if (add_link(m, (struct tx_link){ a, (size_t)b, pa, pb, st }))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Breadth first from the switches with hosts (level 0): those with named
 * nodes, and those with ports that have neither a node nor a switch behind
 * them -- hosts without a node agent, since the switch agent reports only
 * ports with a peer. Without the latter, a leaf whose hosts are not named
 * yet would sit above the spines. Then, in BFS (level) order, a switch is
 * kept for the Slurm form if it has named nodes (level 0) or a kept
 * switch one level down. */
static int place_levels(struct tx_model *m)
{
	size_t *q = malloc((m->n_sw + 1) * sizeof(*q)), qh = 0, qt = 0;
	if (!q)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_sw; i++)
		if (m->sw[i].n_nodes || m->sw[i].unclaimed) {
			m->sw[i].level = 0;
			m->sw[i].kept = m->sw[i].n_nodes > 0;
			q[qt++] = i;
		}
	while (qh < qt) {
		size_t s = q[qh++];
		for (size_t k = 0; k < m->n_links; k++) {
			const struct tx_link *l = &m->links[k];
			size_t o = l->a == s ? l->b : l->b == s ? l->a : s;
			if (o == s)
				continue;
			if (m->sw[o].level < 0) {
				m->sw[o].level = m->sw[s].level + 1;
				q[qt++] = o;
			}
			if (m->sw[o].level == m->sw[s].level + 1 && m->sw[s].kept)
				m->sw[o].kept = 1;
		}
	}
	free(q);
	return 0;
}

static int model_build(struct tx_model *m, json_t *map, char *err, size_t errsz)
{
	memset(m, 0, sizeof(*m));
	json_t *sws = json_object_get(map, "Switches"), *nodes = json_object_get(map, "Nodes");
	if (!json_is_object(map) || !json_is_object(sws) || !json_is_object(nodes))
		return fb_err_set(err, errsz, -EINVAL,
				  "not a fabric map: want an object with \"Nodes\" and \"Switches\" "
				  "(GET /fabric/map)");
	m->map = map;
	const char *f = json_string_value(json_object_get(map, "Fabric"));
	m->fabric = f ? f : "";
	int rc = load_switches(m, sws);
	rc = rc ? rc : load_nodes(m, nodes);
	rc = rc ? rc : load_links(m, sws, nodes);
	rc = rc ? rc : place_levels(m);
	if (rc == -ENOMEM)
		fb_err_set(err, errsz, rc, "out of memory");
	return rc;
}

static void fill_stats(const struct tx_model *m, struct fb_topo_export_stats *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	st->switches = m->n_sw;
	st->nodes = m->n_nodes;
	st->links = m->n_links;
	for (size_t i = 0; i < m->n_sw; i++) {
		st->tree_switches += (size_t)m->sw[i].kept;
		st->unnamed_hosts += m->sw[i].unclaimed;
	}
}

/* The Slurm names of s's neighbours one level down (only the kept ones
 * when kept_only), sorted, unique. */
static size_t children(const struct tx_model *m, size_t s, int kept_only, const char **out)
{
	size_t n = 0;
	for (size_t k = 0; k < m->n_links; k++) {
		const struct tx_link *l = &m->links[k];
		size_t o = l->a == s ? l->b : l->b == s ? l->a : s;
		if (o != s && m->sw[o].level == m->sw[s].level - 1 && (m->sw[o].kept || !kept_only))
			out[n++] = m->sw[o].slurm;
	}
	qsort(out, n, sizeof(*out), cmp_str);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || strcmp(out[u - 1], out[i]))
			out[u++] = out[i];
	return u;
}

static int cmp_level_name(const void *pa, const void *pb)
{
	const struct tx_switch *a = *(const struct tx_switch *const *)pa;
	const struct tx_switch *b = *(const struct tx_switch *const *)pb;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	return strcmp(a->slurm, b->slurm);
}

/* ---- topology.conf ------------------------------------------------------- */

static int put_slurm_switch(const struct tx_model *m, size_t s, const char **scratch, struct fb_buf *out)
{
	const struct tx_switch *sw = &m->sw[s];
	char *hl;
	const char *what = "Nodes";
	if (sw->level == 0) {
		hl = fb_hostlist_format(sw->nodes, sw->n_nodes);
	} else {
		size_t n = children(m, s, 1, scratch);
		hl = fb_hostlist_format(scratch, n);
		what = "Switches";
	}
	if (!hl)
		return -ENOMEM;
	int rc = fb_buf_printf(out, "SwitchName=%s %s=%s\n", sw->slurm, what, hl);
	free(hl);
	return rc;
}

char *fb_topo_export_slurm(json_t *map, struct fb_topo_export_stats *st, char *err, size_t errsz)
{
	struct tx_model m;
	struct fb_buf out = { 0 };
	const struct tx_switch **order = NULL;
	const char **scratch = NULL;
	int rc = model_build(&m, map, err, errsz);
	if (rc)
		goto done;
	fill_stats(&m, st);
	order = calloc(m.n_sw + 1, sizeof(*order));
	scratch = calloc(2 * m.n_links + 1, sizeof(*scratch));
	rc = order && scratch ? 0 : -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < m.n_sw && !rc; i++)
		if (m.sw[i].kept)
			order[n++] = &m.sw[i];
	if (!rc) {
		qsort(order, n, sizeof(*order), cmp_level_name);
		rc = fb_buf_printf(&out, "# Slurm topology.conf (TopologyPlugin=topology/tree) written by "
				   "`fabricbus topology` from fabric \"%s\":\n# %zu switches, %zu nodes.\n",
				   m.fabric, n, m.n_nodes);
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = put_slurm_switch(&m, (size_t)(order[i] - m.sw), scratch, &out);
	rc = rc ? rc : fb_buf_put(&out, "", 1);
	if (rc == -ENOMEM)
		fb_err_set(err, errsz, rc, "out of memory");
done:
	free(order);
	free(scratch);
	model_free(&m);
	if (rc) {
		fb_buf_free(&out);
		return NULL;
	}
	return (char *)out.data;
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *switch_json(const struct tx_model *m, size_t s, const char **scratch)
{
	const struct tx_switch *sw = &m->sw[s];
	json_t *nodes = json_array(), *kids = json_array();
	size_t nk = sw->level > 0 ? children(m, s, 0, scratch) : 0;
	for (size_t i = 0; i < sw->n_nodes; i++)
		if (!i || strcmp(sw->nodes[i - 1], sw->nodes[i]))
			json_array_append_new(nodes, json_string(sw->nodes[i]));
	for (size_t i = 0; i < nk; i++)
		json_array_append_new(kids, json_string(scratch[i]));
	return json_pack("{s:s,s:s,s:s,s:o,s:o,s:o}", "GUID", sw->guid, "Name", sw->name, "SlurmName",
			 sw->slurm, "Level", sw->level >= 0 ? json_integer(sw->level) : json_null(),
			 "Nodes", nodes, "Switches", kids);
}

static json_t *node_ports_json(const struct tx_model *m)
{
	json_t *out = json_array();
	json_t *nodes = json_object_get(m->map, "Nodes");
	const char **names = calloc(json_object_size(nodes) + 1, sizeof(*names));
	size_t n = 0;
	const char *key;
	json_t *v;
	if (!out || !names) {
		free(names);
		json_decref(out);
		return NULL;
	}
	json_object_foreach(nodes, key, v)
		names[n++] = key;
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t k = 0; k < n; k++) {
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(json_object_get(nodes, names[k]), "Ports"), i, p) {
			if (!json_object_get(p, "SwitchGUID"))
				continue;
			json_t *e = json_pack("{s:s,s:O,s:O,s:O,s:O,s:O,s:O}", "Node", names[k], "Device",
					      json_object_get(p, "Device"), "Port", json_object_get(p, "Port"),
					      "SwitchGUID", json_object_get(p, "SwitchGUID"), "Switch",
					      json_object_get(p, "Switch"), "SwitchPort",
					      json_object_get(p, "SwitchPort"), "LinkState",
					      json_object_get(p, "LinkState"));
			if (e)
				json_array_append_new(out, e);
		}
	}
	free(names);
	return out;
}

json_t *fb_topo_export_json(json_t *map, struct fb_topo_export_stats *st, char *err, size_t errsz)
{
	struct tx_model m;
	json_t *out = NULL;
	const char **scratch = NULL;
	if (model_build(&m, map, err, errsz))
		goto done;
	fill_stats(&m, st);
	scratch = calloc(2 * m.n_links + 1, sizeof(*scratch));
	json_t *sws = json_array(), *links = json_array(), *nodes = node_ports_json(&m);
	if (scratch && sws && links && nodes) {
		for (size_t i = 0; i < m.n_sw; i++)
			json_array_append_new(sws, switch_json(&m, i, scratch));
		for (size_t k = 0; k < m.n_links; k++) {
			const struct tx_link *l = &m.links[k];
			json_array_append_new(links, json_pack("{s:s,s:I,s:s,s:I,s:s}", "Switch",
							       m.sw[l->a].guid, "Port", l->pa, "PeerSwitch",
							       m.sw[l->b].guid, "PeerPort", l->pb,
							       "LinkState", l->state));
		}
		out = json_pack("{s:s,s:o,s:o,s:o}", "Fabric", m.fabric, "Switches", sws, "Links", links,
				"Nodes", nodes);
	} else {
		json_decref(sws);
		json_decref(links);
		json_decref(nodes);
	}
	if (!out)
		fb_err_set(err, errsz, -ENOMEM, "out of memory");
done:
	free(scratch);
	model_free(&m);
	return out;
}

/* ---- diff ------------------------------------------------------------------ */

/* Is the line s[0..n) one of text's lines? */
static int has_line(const char *text, const char *s, size_t n)
{
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && memcmp(p, s, n) == 0)
			return 1;
		p += len + (e != NULL);
	}
	return 0;
}

static int put_missing(struct fb_buf *out, const char *from, const char *in, char sign)
{
	int rc = 0;
	for (const char *p = from; *p && !rc;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (!has_line(in, p, len))
			rc = fb_buf_printf(out, "%c%.*s\n", sign, (int)len, p);
		p += len + (e != NULL);
	}
	return rc;
}

char *fb_topo_line_diff(const char *old, const char *new_text)
{
	struct fb_buf out = { 0 };
	int rc = put_missing(&out, old, new_text, '-');
	rc = rc ? rc : put_missing(&out, new_text, old, '+');
	rc = rc ? rc : fb_buf_put(&out, "", 1);
	if (rc) {
		fb_buf_free(&out);
		return NULL;
	}
	return (char *)out.data;
}

/* ---- blast radius ----------------------------------------------------------- */

struct bl_host {
	const char *node;
	size_t sw;
	json_int_t port;
	int up;
};

/* Each named node port on a switch, as a host of the blast graph. */
static int blast_hosts(const struct tx_model *m, struct bl_host **out, size_t *n)
{
	json_t *nodes = json_object_get(m->map, "Nodes");
	size_t cap = 0;
	const char *key;
	json_t *v;
	*out = NULL;
	*n = 0;
	json_object_foreach(nodes, key, v)
		cap += json_array_size(json_object_get(v, "Ports"));
	*out = calloc(cap + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	json_object_foreach(nodes, key, v) {
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(v, "Ports"), i, p) {
			const char *g = json_string_value(json_object_get(p, "SwitchGUID"));
			const char *st = json_string_value(json_object_get(p, "LinkState"));
			long s = g ? find_switch(m, g) : -1;
			if (s < 0)
				continue;
			/* "unknown" (its switch unreachable, or not reported yet)
			 * is not a failure: the cables say whether it is cut off. */
			(*out)[(*n)++] = (struct bl_host){ key, (size_t)s,
							   json_integer_value(json_object_get(p, "SwitchPort")),
							   !st || strcmp(st, "down") != 0 };
		}
	}
	return 0;
}

static long switch_named(const struct tx_model *m, const char *s, size_t len)
{
	for (size_t i = 0; i < m->n_sw; i++)
		if ((strlen(m->sw[i].name) == len && !strncmp(m->sw[i].name, s, len)) ||
		    (strlen(m->sw[i].slurm) == len && !strncmp(m->sw[i].slurm, s, len)) ||
		    (strlen(m->sw[i].guid) == len && !strncmp(m->sw[i].guid, s, len)))
			return (long)i;
	return -1;
}

/* Mark what (SWITCH or SWITCH:PORT) as failed; 0 or -ENOENT with err. */
static int mark_failure(const struct tx_model *m, const struct bl_host *h, size_t nh, const char *what,
			uint8_t *swf, uint8_t *lf, uint8_t *hf, char *err, size_t errsz)
{
	const char *colon = strrchr(what, ':');
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;
	if (colon && (end == colon + 1 || *end || port <= 0))
		colon = NULL; /* not a port number: a name with a ':' */
	long s = switch_named(m, what, colon ? (size_t)(colon - what) : strlen(what));
	if (s < 0)
		return fb_err_set(err, errsz, -ENOENT,
				  "no switch named \"%.*s\" in the map (give its Name or GUID, as "
				  "--format json lists them)", (int)(colon ? colon - what : (long)strlen(what)), what);
	if (!colon) {
		swf[s] = 1;
		return 0;
	}
	int found = 0;
	for (size_t k = 0; k < m->n_links; k++) {
		const struct tx_link *l = &m->links[k];
		if ((l->a == (size_t)s && l->pa == port) || (l->b == (size_t)s && l->pb == port))
			lf[k] = found = 1;
	}
	for (size_t i = 0; i < nh; i++)
		if (h[i].sw == (size_t)s && h[i].port == port)
			hf[i] = found = 1;
	if (!found)
		return fb_err_set(err, errsz, -ENOENT,
				  "%s: no cable or named node's port at %s port %ld in the map", what,
				  m->sw[s].name, port);
	return 0;
}

static json_t *effect_list(const struct bl_host *h, const uint8_t *eff, size_t nh, uint8_t want)
{
	const char **names = calloc(nh + 1, sizeof(*names));
	size_t n = 0;
	if (!names)
		return NULL;
	for (size_t i = 0; i < nh; i++)
		if (eff[i] == want)
			names[n++] = h[i].node;
	char *hl = fb_hostlist_format(names, n);
	free(names);
	json_t *j = hl ? json_string(hl) : NULL;
	free(hl);
	return j;
}

json_t *fb_topo_blast_json(json_t *map, const char *what, char *err, size_t errsz)
{
	struct tx_model m;
	struct bl_host *h = NULL;
	size_t nh = 0;
	json_t *out = NULL;
	struct fb_blast_link *links = NULL;
	struct fb_blast_host *hosts = NULL;
	uint8_t *swf = NULL, *lf = NULL, *hf = NULL, *eff = NULL;
	int rc = model_build(&m, map, err, errsz);
	if (rc)
		goto done;
	rc = blast_hosts(&m, &h, &nh);
	links = calloc(m.n_links + 1, sizeof(*links));
	hosts = calloc(nh + 1, sizeof(*hosts));
	swf = calloc(m.n_sw + 1, 1);
	lf = calloc(m.n_links + 1, 1);
	hf = calloc(nh + 1, 1);
	eff = calloc(nh + 1, 1);
	if (rc || !links || !hosts || !swf || !lf || !hf || !eff) {
		fb_err_set(err, errsz, -ENOMEM, "out of memory");
		goto done;
	}
	for (size_t k = 0; k < m.n_links; k++)
		links[k] = (struct fb_blast_link){ (uint32_t)m.links[k].a, (uint32_t)m.links[k].b,
						   (uint8_t)(strcmp(m.links[k].state, "down") != 0) };
	for (size_t i = 0; i < nh; i++)
		hosts[i] = (struct fb_blast_host){ (uint32_t)h[i].sw, (uint8_t)h[i].up };
	if (what && mark_failure(&m, h, nh, what, swf, lf, hf, err, errsz))
		goto done;
	struct fb_blast_graph g = { m.n_sw, links, m.n_links, hosts, nh };
	struct fb_blast_counts c;
	if (fb_blast_compute(&g, swf, lf, hf, eff, &c)) {
		fb_err_set(err, errsz, -ENOMEM, "out of memory");
		goto done;
	}
	out = json_pack("{s:o,s:o*,s:o*,s:{s:I,s:I,s:I}}", "Failed", what ? json_string(what) : json_null(),
			"NoPath", effect_list(h, eff, nh, FB_BLAST_NO_PATH), "Degraded",
			effect_list(h, eff, nh, FB_BLAST_DEGRADED), "Counts", "ok", (json_int_t)c.ok,
			"degraded", (json_int_t)c.degraded, "no_path", (json_int_t)c.no_path);
	if (!out)
		fb_err_set(err, errsz, -ENOMEM, "out of memory");
done:
	free(links);
	free(hosts);
	free(swf);
	free(lf);
	free(hf);
	free(eff);
	free(h);
	model_free(&m);
	return out;
}

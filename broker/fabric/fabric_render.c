/* fabric_render.c - the fabric map's JSON and its index (see
 * fabric_render.h; the format is in docs/fabric-map.md).
 *
 * Rendering walks the inventory through its JSON form (its only public
 * iteration), joins each node port to the switch port cabled to it, and
 * writes the JSON directly with every object's keys in strcmp order, so the
 * same state always renders to the same bytes. jansson trees and
 * JSON_SORT_KEYS cost ~15 us a node, 150 ms of loop time for 10000 nodes.
 *
 * While it writes, it indexes each node and switch member (struct
 * fb_fabric_frag) so that GET /fabric/map?nodes= (ws_fabric_map.c) copies
 * members without parsing JSON. The buffers end up in the snapshot, which
 * is fabric_map.c's from then on (fb_fabric_snap_unref frees them).
 *
 * A render is two steps so that the costly one can leave the loop:
 * fb_fabric_render_take copies what the map shows off the loop's tables
 * (the inventory's JSON form, a clone of the topology, and a reference to
 * each job's immutable node list: O(jobs), not O(job nodes)), and
 * fb_fabric_render_in writes the map from that copy on whichever thread
 * holds it, turning the jobs' node lists into each node's jobs there.
 */
#include "fabric_render.h"

#include "fb_buf.h"
#include "inventory.h"
#include "jobs.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One node port from the inventory, joined to its switch port. */
struct mport {
	const char *node, *device, *guid_s, *node_guid_s, *mac_s;
	const char *link_s;  /* the node agent's own view: "up", "down" or NULL */
	json_int_t port, lid;
	int eth;
	const struct fb_topo_port *tp;
};

/* One (node, job) pair of the registry. */
struct member {
	const char *node, *id;
};

/* A node with jobs: its pairs are members[first..first+n), ids ascending. */
struct jnode {
	const char *name;
	size_t first, n;
};

struct fb_fabric_render_in {
	json_t *inv_json;         /* the inventory's JSON form: no other reference */
	struct fb_topology *topo; /* a clone: nothing else reads or learns into it */
	struct fb_job_names **jobs; /* a reference to each job's (immutable) nodes */
	size_t n_jobs;
	char fabric[FB_FABRIC_MAX];
	uint64_t last_event_id;
};

struct swkey {
	uint64_t guid;
	uint32_t sw;
};

struct render {
	const struct fb_topology *topo;
	struct mport *mp;
	size_t n_mp;
	struct member *mb;
	struct jnode *jn;
	size_t n_jn;
	struct swkey *order; /* switches by GUID, as rendered */
	uint32_t *rank;      /* topology switch index -> its place in order */
	struct fb_buf out;
	/* the snapshot's index (struct fb_fabric_snap), built as out is */
	size_t head_len;
	struct fb_buf nodes_ix, names, sw_of, sws_ix;
	int rc;
	size_t nodes;
};

static uint64_t hex_u64(const char *s)
{
	return s ? strtoull(s, NULL, 16) : 0;
}

/* "aa:bb:cc:dd:ee:ff" -> 48 bits, as an Ethernet peer would be reported. */
static uint64_t mac_u64(const char *s)
{
	unsigned b[6];
	if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return 0;
	uint64_t v = 0;
	for (int i = 0; i < 6; i++)
		v = v << 8 | b[i];
	return v;
}

static const char *str_of(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static int nz_strcmp(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

static int cmp_mport(const void *pa, const void *pb)
{
	const struct mport *a = pa, *b = pb;
	int c = strcmp(a->node, b->node);
	if (!c)
		c = a->eth - b->eth;
	if (!c)
		c = nz_strcmp(a->device, b->device);
	if (!c)
		c = a->port < b->port ? -1 : a->port > b->port;
	if (!c)
		c = nz_strcmp(a->mac_s, b->mac_s);
	return c;
}

/* The switch port a node port is cabled to: the switch agent names the
 * peer by its node GUID (sometimes by port GUID) and port number. */
static const struct fb_topo_port *join(const struct fb_topology *t, const struct mport *p)
{
	const struct fb_topo_port *tp = NULL;
	if (p->eth) {
		tp = fb_topology_by_peer(t, mac_u64(p->mac_s), 0);
		return tp && tp->tech == FB_TECH_ETH ? tp : NULL;
	}
	uint64_t ng = hex_u64(p->node_guid_s), pg = hex_u64(p->guid_s);
	if (ng)
		tp = fb_topology_by_peer(t, ng, (uint16_t)p->port);
	if (!tp)
		tp = fb_topology_by_peer(t, pg, (uint16_t)p->port);
	return tp && tp->tech != FB_TECH_ETH ? tp : NULL;
}

/* The inventory's ports, sorted, borrowing strings from inv_json. */
static int collect_ports(struct render *r, const json_t *inv_json)
{
	const json_t *ports = json_object_get(inv_json, "ports");
	size_t cap = json_array_size(ports), i;
	json_t *p;
	r->mp = calloc(cap ? cap : 1, sizeof(*r->mp));
	if (!r->mp)
		return -ENOMEM;
	json_array_foreach(ports, i, p) {
		struct mport *x = &r->mp[r->n_mp];
		x->node = str_of(p, "node");
		x->device = str_of(p, "device");
		x->guid_s = str_of(p, "guid");
		x->node_guid_s = str_of(p, "node_guid");
		x->mac_s = str_of(p, "mac");
		x->link_s = str_of(p, "link");
		x->port = json_integer_value(json_object_get(p, "port"));
		x->lid = json_integer_value(json_object_get(p, "lid"));
		x->eth = x->guid_s == NULL;
		if (!x->node || (!x->guid_s && !x->mac_s))
			continue;
		x->tp = join(r->topo, x);
		r->n_mp++;
	}
	qsort(r->mp, r->n_mp, sizeof(*r->mp), cmp_mport);
	return 0;
}

/* Job ids compare as numbers: no leading zeros, so shorter is smaller. */
static int cmp_id(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

static int cmp_member(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;
	int c = strcmp(a->node, b->node);
	return c ? c : cmp_id(a->id, b->id);
}

/* Each node with jobs and its ids, ascending (as the registry keeps them),
 * from the jobs' node lists: every (node, job) pair, sorted, grouped. */
static int collect_jnodes(struct render *r, const struct fb_fabric_render_in *in)
{
	size_t n = 0, k = 0;
	for (size_t i = 0; i < in->n_jobs; i++)
		n += in->jobs[i]->n;
	if (!n)
		return 0;
	r->mb = malloc(n * sizeof(*r->mb));
	r->jn = malloc(n * sizeof(*r->jn));
	if (!r->mb || !r->jn)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_jobs; i++)
		for (size_t j = 0; j < in->jobs[i]->n; j++)
			r->mb[k++] = (struct member){ in->jobs[i]->nodes[j], in->jobs[i]->id };
	qsort(r->mb, n, sizeof(*r->mb), cmp_member);
	size_t out = 0; /* a node listed twice in one job counts once */
	for (size_t i = 0; i < n; i++)
		if (!out || cmp_member(&r->mb[out - 1], &r->mb[i]))
			r->mb[out++] = r->mb[i];
	for (size_t i = 0; i < out; i++) {
		if (r->n_jn && strcmp(r->jn[r->n_jn - 1].name, r->mb[i].node) == 0)
			r->jn[r->n_jn - 1].n++;
		else
			r->jn[r->n_jn++] = (struct jnode){ r->mb[i].node, i, 1 };
	}
	return 0;
}

/* Writers; the first error sticks in r->rc. Keys are written in strcmp
 * order, so the map is the same bytes for the same state. */
static void put(struct render *r, const char *s)
{
	if (!r->rc)
		r->rc = fb_buf_puts(&r->out, s);
}

static void put_str(struct render *r, const char *s)
{
	if (!r->rc)
		r->rc = fb_buf_put_json_str(&r->out, s ? s : "");
}

static void put_int(struct render *r, long long v)
{
	if (!r->rc)
		r->rc = fb_buf_printf(&r->out, "%lld", v);
}

static void put_guid(struct render *r, uint64_t g)
{
	if (!r->rc)
		r->rc = fb_buf_printf(&r->out, "\"0x%016" PRIx64 "\"", g);
}

static void put_port(struct render *r, const struct mport *p)
{
	const struct fb_topo_port *tp = p->tp;
	const struct fb_topo_switch *sw = tp ? fb_topology_switch_at(r->topo, tp->sw) : NULL;
	put(r, "{\"Device\":");
	put_str(r, p->device);
	if (!p->eth) {
		put(r, ",\"LID\":");
		put_int(r, p->lid);
	}
	if (tp) {
		put(r, ",\"LinkState\":");
		put_str(r, fb_link_state_name(fb_topology_shown_state(r->topo, tp)));
	}
	if (p->eth) {
		put(r, ",\"MAC\":");
		put_str(r, p->mac_s);
	} else if (hex_u64(p->node_guid_s)) {
		put(r, ",\"NodeGUID\":");
		put_str(r, p->node_guid_s);
	}
	if (p->link_s) {
		put(r, ",\"NodeLinkState\":");
		put_str(r, p->link_s);
	}
	if (!p->eth) {
		put(r, ",\"Port\":");
		put_int(r, p->port);
		put(r, ",\"PortGUID\":");
		put_str(r, p->guid_s);
	}
	if (tp) {
		put(r, ",\"Switch\":");
		put_str(r, sw->name);
		put(r, ",\"SwitchGUID\":");
		put_guid(r, sw->guid);
		put(r, ",\"SwitchPort\":");
		put_int(r, tp->port);
	}
	put(r, p->eth ? ",\"Technology\":\"Ethernet\"}" : ",\"Technology\":\"IB\"}");
}

/* Index the node member that starts at out[off]: its name and the
 * switches its ports hang off (a node has a few ports: a linear check for
 * repeats is enough). Filled in as the member is written. */
static struct fb_fabric_frag *index_node(struct render *r, size_t off, const char *name)
{
	size_t n = strlen(name);
	struct fb_fabric_frag f = { .off = off, .name_off = (uint32_t)r->names.len,
				    .name_len = (uint32_t)n,
				    .sw_first = (uint32_t)(r->sw_of.len / sizeof(uint32_t)) };
	if (r->rc || (r->rc = fb_buf_put(&r->names, name, n + 1)) ||
	    (r->rc = fb_buf_put(&r->nodes_ix, &f, sizeof(f))))
		return NULL;
	return (struct fb_fabric_frag *)(r->nodes_ix.data + r->nodes_ix.len) - 1;
}

static void index_node_switch(struct render *r, struct fb_fabric_frag *f, const struct mport *p)
{
	if (!f || !p->tp || r->rc)
		return;
	uint32_t rank = r->rank[p->tp->sw];
	for (uint32_t j = 0; j < f->sw_n; j++)
		if (((const uint32_t *)r->sw_of.data)[f->sw_first + j] == rank)
			return;
	if (!(r->rc = fb_buf_put(&r->sw_of, &rank, sizeof(rank))))
		f->sw_n++;
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return a < b ? -1 : a > b;
}

/* "Nodes": every node with a port or a job, merged from both sorted lists. */
static void put_nodes(struct render *r)
{
	size_t i = 0, k = 0;
	put(r, "\"Nodes\":{");
	while (!r->rc && (i < r->n_mp || k < r->n_jn)) {
		const char *name;
		if (k == r->n_jn || (i < r->n_mp && strcmp(r->mp[i].node, r->jn[k].name) <= 0))
			name = r->mp[i].node;
		else
			name = r->jn[k].name;
		put(r, r->nodes++ ? "," : "");
		struct fb_fabric_frag *f = index_node(r, r->out.len, name);
		put_str(r, name);
		put(r, ":{\"Jobs\":[");
		if (k < r->n_jn && strcmp(r->jn[k].name, name) == 0) {
			for (size_t j = 0; j < r->jn[k].n; j++) {
				put(r, j ? "," : "");
				put_str(r, r->mb[r->jn[k].first + j].id);
			}
			k++;
		}
		put(r, "],\"Ports\":[");
		for (size_t first = i; i < r->n_mp && strcmp(r->mp[i].node, name) == 0; i++) {
			put(r, i > first ? "," : "");
			put_port(r, &r->mp[i]);
			index_node_switch(r, f, &r->mp[i]);
		}
		put(r, "]}");
		if (f && !r->rc)
			f->len = r->out.len - f->off;
		if (f && !r->rc && f->sw_n > 1)
			qsort(r->sw_of.data + f->sw_first * sizeof(uint32_t), f->sw_n, sizeof(uint32_t),
			      cmp_u32);
	}
	put(r, "}");
}

struct host {
	uint32_t sw;
	const char *node;
};

static int cmp_host(const void *pa, const void *pb)
{
	const struct host *a = pa, *b = pb;
	return a->sw != b->sw ? (a->sw < b->sw ? -1 : 1) : strcmp(a->node, b->node);
}

static int cmp_swkey(const void *pa, const void *pb)
{
	const struct swkey *a = pa, *b = pb;
	return a->guid < b->guid ? -1 : a->guid > b->guid;
}

/* The switches in GUID order (r->order), and each one's place in it
 * (r->rank), which the node index needs before the switches are written. */
static void sort_switches(struct render *r)
{
	const struct fb_topology *t = r->topo;
	size_t n_sw = fb_topology_n_switches(t);
	r->order = calloc(n_sw ? n_sw : 1, sizeof(*r->order));
	r->rank = calloc(n_sw ? n_sw : 1, sizeof(*r->rank));
	if (!r->order || !r->rank) {
		r->rc = r->rc ? r->rc : -ENOMEM;
		return;
	}
	for (uint32_t s = 0; s < n_sw; s++)
		r->order[s] = (struct swkey){ fb_topology_switch_at(t, s)->guid, s };
	qsort(r->order, n_sw, sizeof(*r->order), cmp_swkey);
	for (uint32_t k = 0; k < n_sw; k++)
		r->rank[r->order[k].sw] = k;
}

/* The topology's ports by (switch, port number): each switch's "Ports". */
static int cmp_swport(const void *pa, const void *pb, void *arg)
{
	const struct fb_topology *t = arg;
	const struct fb_topo_port *a = fb_topology_port_at(t, *(const uint32_t *)pa);
	const struct fb_topo_port *b = fb_topology_port_at(t, *(const uint32_t *)pb);
	if (a->sw != b->sw)
		return a->sw < b->sw ? -1 : 1;
	return (a->port > b->port) - (a->port < b->port);
}

/* "Ports":[{"LinkState":"down","Port":3},...]: every port of the switch its
 * agents reported, with the state as last reported (also while the switch
 * is unreachable): what a restarted agent diffs its fresh view against. */
static void put_switch_ports(struct render *r, const uint32_t *by_sw, size_t from, size_t to)
{
	put(r, ",\"Ports\":[");
	for (size_t i = from; i < to; i++) {
		const struct fb_topo_port *p = fb_topology_port_at(r->topo, by_sw[i]);
		put(r, i > from ? ",{\"LinkState\":\"" : "{\"LinkState\":\"");
		put(r, fb_link_state_name(p->state));
		if (p->tech == FB_TECH_ETH && p->peer_guid && !(p->peer_guid >> 48)) {
			char mac[24];
			uint64_t m = p->peer_guid;
			snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
				 (unsigned)(m >> 40) & 0xff, (unsigned)(m >> 32) & 0xff,
				 (unsigned)(m >> 24) & 0xff, (unsigned)(m >> 16) & 0xff,
				 (unsigned)(m >> 8) & 0xff, (unsigned)m & 0xff);
			put(r, "\",\"PeerMAC\":\"");
			put(r, mac);
		} else if (p->link_class == FB_LINK_ISL && p->peer_guid) {
			/* An inter-switch link: what `fabricbus topology` builds the
			 * switch tree from (docs/topology.md). Host ports need not
			 * say: the node's own entry names its switch port. */
			char g[24];
			snprintf(g, sizeof(g), "0x%016" PRIx64, p->peer_guid);
			put(r, "\",\"Peer\":\"");
			put(r, g);
			put(r, "\",\"PeerPort\":");
			put_int(r, p->peer_port);
			put(r, ",\"Port\":");
			put_int(r, p->port);
			put(r, "}");
			continue;
		}
		put(r, "\",\"Port\":");
		put_int(r, p->port);
		put(r, "}");
	}
	put(r, "]");
}

/* The first place in by_sw (sorted by cmp_swport) of a port of switch sw
 * or a later one. */
static size_t lower_port(const struct fb_topology *t, const uint32_t *by_sw, size_t n, uint32_t sw)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fb_topology_port_at(t, by_sw[mid])->sw < sw)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void index_switch(struct render *r, size_t off)
{
	struct fb_fabric_frag f = { .off = off, .len = r->out.len - off };
	if (!r->rc)
		r->rc = fb_buf_put(&r->sws_ix, &f, sizeof(f));
}

/* "Switches": by GUID, each with the nodes cabled to it (sorted, unique). */
static void put_switches(struct render *r)
{
	const struct fb_topology *t = r->topo;
	size_t n_sw = fb_topology_n_switches(t), nh = 0;
	struct host *h = calloc(r->n_mp ? r->n_mp : 1, sizeof(*h));
	size_t *first = calloc(n_sw + 1, sizeof(*first));
	size_t n_p = fb_topology_n_ports(t);
	uint32_t *by_sw = calloc(n_p ? n_p : 1, sizeof(*by_sw));
	if (!h || !first || !by_sw || r->rc) {
		r->rc = r->rc ? r->rc : -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->n_mp; i++)
		if (r->mp[i].tp)
			h[nh++] = (struct host){ r->mp[i].tp->sw, r->mp[i].node };
	qsort(h, nh, sizeof(*h), cmp_host);
	for (size_t i = 0, s = 0; s <= n_sw; s++) { /* hosts of switch s: first[s]..first[s+1] */
		while (i < nh && h[i].sw < s)
			i++;
		first[s] = i;
	}
	for (uint32_t i = 0; i < n_p; i++)
		by_sw[i] = i;
	qsort_r(by_sw, n_p, sizeof(*by_sw), cmp_swport, (void *)t);
	put(r, "\"Switches\":{");
	for (size_t k = 0; k < n_sw; k++) {
		uint32_t s = r->order[k].sw;
		const struct fb_topo_switch *sw = fb_topology_switch_at(t, s);
		put(r, k ? "," : "");
		size_t off = r->out.len;
		put_guid(r, sw->guid);
		put(r, ":{");
		if (sw->agent[0]) {
			put(r, "\"Agent\":");
			put_str(r, sw->agent);
			put(r, ",");
		}
		put(r, "\"Hosts\":[");
		for (size_t i = first[s]; i < first[s + 1]; i++) {
			if (i > first[s] && strcmp(h[i - 1].node, h[i].node) == 0)
				continue;
			put(r, i > first[s] ? "," : "");
			put_str(r, h[i].node);
		}
		put(r, "],\"Name\":");
		put_str(r, sw->name);
		size_t p0 = lower_port(t, by_sw, n_p, s), p1 = lower_port(t, by_sw, n_p, s + 1);
		put_switch_ports(r, by_sw, p0, p1);
		put(r, sw->reachable ? ",\"Reachable\":true}" : ",\"Reachable\":false}");
		index_switch(r, off);
	}
	put(r, "}");
out:
	free(by_sw);
	free(h);
	free(first);
}

static void render_free(struct render *r)
{
	free(r->mp);
	free(r->mb);
	free(r->jn);
	free(r->order);
	free(r->rank);
	fb_buf_free(&r->out);
	fb_buf_free(&r->nodes_ix);
	fb_buf_free(&r->names);
	fb_buf_free(&r->sw_of);
	fb_buf_free(&r->sws_ix);
}

/* The render's buffers become the snapshot's (32-bit name offsets: the
 * registry's 4194304 names of at most 63 bytes stay far below 4 GB). */
static struct fb_fabric_snap *render_to_snap(struct render *r)
{
	struct fb_fabric_snap *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	atomic_init(&s->refs, 1);
	s->len = r->out.len - 1;
	s->json = (char *)r->out.data;
	s->head_len = r->head_len;
	s->nodes = (const struct fb_fabric_frag *)r->nodes_ix.data;
	s->n_nodes = r->nodes_ix.len / sizeof(*s->nodes);
	s->names = (const char *)r->names.data;
	s->sw_of = (const uint32_t *)r->sw_of.data;
	s->sws = (const struct fb_fabric_frag *)r->sws_ix.data;
	s->n_sws = r->sws_ix.len / sizeof(*s->sws);
	r->out = r->nodes_ix = r->names = r->sw_of = r->sws_ix = (struct fb_buf)FB_BUF_INIT;
	return s;
}

void fb_fabric_render_in_free(struct fb_fabric_render_in *in)
{
	if (!in)
		return;
	json_decref(in->inv_json);
	fb_topology_free(in->topo);
	for (size_t i = 0; i < in->n_jobs; i++)
		fb_job_names_unref(in->jobs[i]);
	free(in->jobs);
	free(in);
}

struct fb_fabric_render_in *fb_fabric_render_take(const struct fb_inventory *inv,
						  const struct fb_topology *topo,
						  const struct fb_jobs *jobs, const char *fabric,
						  uint64_t last_event_id)
{
	struct fb_fabric_render_in *in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	snprintf(in->fabric, sizeof(in->fabric), "%s", fabric ? fabric : "");
	in->last_event_id = last_event_id;
	in->inv_json = fb_inventory_json(inv, SIZE_MAX);
	in->topo = fb_topology_clone(topo);
	long n = fb_jobs_take_names(jobs, &in->jobs);
	in->n_jobs = n > 0 ? (size_t)n : 0;
	if (!in->inv_json || !in->topo || n < 0) {
		fb_fabric_render_in_free(in);
		return NULL;
	}
	return in;
}

struct fb_fabric_snap *fb_fabric_render_in(const struct fb_fabric_render_in *in, size_t *nodes)
{
	struct render r = { .topo = in->topo };
	struct fb_fabric_snap *s = NULL;
	r.rc = collect_ports(&r, in->inv_json);
	if (!r.rc)
		r.rc = collect_jnodes(&r, in);
	sort_switches(&r);
	put(&r, "{\"Fabric\":");
	put_str(&r, in->fabric);
	put(&r, ",\"LastEventId\":");
	put_int(&r, (long long)in->last_event_id);
	put(&r, ",");
	r.head_len = r.out.len;
	put_nodes(&r);
	put(&r, ",");
	put_switches(&r);
	put(&r, "}");
	if (!r.rc)
		r.rc = fb_buf_put(&r.out, "", 1); /* the NUL, not counted */
	if (!r.rc && (s = render_to_snap(&r)))
		*nodes = r.nodes;
	render_free(&r);
	return s;
}

struct fb_fabric_snap *fb_fabric_render(const struct fb_inventory *inv, const struct fb_topology *topo,
					const struct fb_jobs *jobs, const char *fabric,
					uint64_t last_event_id, size_t *nodes)
{
	struct fb_fabric_render_in *in = fb_fabric_render_take(inv, topo, jobs, fabric, last_event_id);
	struct fb_fabric_snap *s = in ? fb_fabric_render_in(in, nodes) : NULL;
	fb_fabric_render_in_free(in);
	return s;
}

/* inventory.c - the port GUID/MAC -> node map (see inventory.h).
 *
 * Entries live in one array (one per port, in the order first seen); two
 * open-addressing indexes map a 64-bit key to an entry: GUIDs (port and node
 * GUIDs both point at the port's entry) and MACs (48 bits in a u64).
 */
#include "inventory.h"

#include <errno.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint8_t tech;
	uint64_t port_guid, node_guid, mac;
	char node[FB_NAME_MAX];
	char device[FB_NAME_MAX];
	uint16_t port;
	uint16_t lid;
	uint32_t ifindex;
	uint8_t link;   /* 0 not said, 1 up, 2 down: as the node agent last said */
};

/* key -> entry index + 1 (0: empty slot). Key 0 is never stored. */
struct index {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n; /* cap is a power of two */
};

struct fb_inventory {
	struct entry *e;
	size_t n, cap;
	struct index guids, macs;
};

static size_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k;
}

static uint32_t *index_slot(const struct index *ix, uint64_t key, int *found)
{
	if (!ix->cap) {
		*found = 0;
		return NULL;
	}
	for (size_t i = hash64(key) & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
		if (ix->keys[i] == key || ix->vals[i] == 0) {
			*found = ix->vals[i] != 0;
			return &ix->vals[i];
		}
	}
}

static int index_put(struct index *ix, uint64_t key, uint32_t val);

static int index_grow(struct index *ix)
{
	struct index nx = { 0 };
	nx.cap = ix->cap ? ix->cap * 2 : 64;
	nx.keys = calloc(nx.cap, sizeof(*nx.keys));
	nx.vals = calloc(nx.cap, sizeof(*nx.vals));
	if (!nx.keys || !nx.vals) {
		free(nx.keys);
		free(nx.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ix->cap; i++)
		if (ix->vals[i])
			index_put(&nx, ix->keys[i], ix->vals[i]);
	free(ix->keys);
	free(ix->vals);
	*ix = nx;
	return 0;
}

static int index_put(struct index *ix, uint64_t key, uint32_t val)
{
	if ((ix->n + 1) * 2 > ix->cap && index_grow(ix))
		return -ENOMEM;
	int found;
	uint32_t *v = index_slot(ix, key, &found);
	ix->keys[v - ix->vals] = key;
	if (!found)
		ix->n++;
	*v = val;
	return 0;
}

/* Entry index + 1 for key, or 0. */
static uint32_t index_get(const struct index *ix, uint64_t key)
{
	int found;
	uint32_t *v = key ? index_slot(ix, key, &found) : NULL;
	return v && found ? *v : 0;
}

struct fb_inventory *fb_inventory_new(void) { return calloc(1, sizeof(struct fb_inventory)); }

void fb_inventory_free(struct fb_inventory *inv)
{
	if (!inv)
		return;
	free(inv->e);
	free(inv->guids.keys);
	free(inv->guids.vals);
	free(inv->macs.keys);
	free(inv->macs.vals);
	free(inv);
}

/* "aa:bb:cc:dd:ee:ff" (either case) -> 48 bits; 0 if it is not a MAC. */
static uint64_t parse_mac(const char *s)
{
	unsigned b[6];
	char tail;
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return 0;
	uint64_t m = 0;
	for (int i = 0; i < 6; i++)
		m = m << 8 | b[i];
	return m;
}

static uint64_t parse_node_guid(const char *text)
{
	const char *p = strstr(text, "node_guid=0x");
	if (!p)
		return 0;
	char *end;
	unsigned long long v = strtoull(p + 12, &end, 16);
	return end == p + 12 ? 0 : (uint64_t)v;
}

static struct entry *new_entry(struct fb_inventory *inv, uint32_t *idx)
{
	if (inv->n == inv->cap) {
		size_t cap = inv->cap ? inv->cap * 2 : 64;
		struct entry *e = realloc(inv->e, cap * sizeof(*e));
		if (!e)
			return NULL;
		inv->e = e;
		inv->cap = cap;
	}
	*idx = (uint32_t)++inv->n;
	struct entry *e = &inv->e[inv->n - 1];
	memset(e, 0, sizeof(*e));
	return e;
}

/* A node port's own state, as its agent (node_port.up) sees it: 0 when the
 * event does not say. */
static uint8_t link_of(const struct fb_event *ev)
{
	uint8_t s = ev->tech == FB_TECH_ETH ? ev->port_state : ev->phys_state;
	uint8_t up = ev->tech == FB_TECH_ETH ? 1 : 5; /* ifOperStatus up, PhysState LinkUp */
	return !s ? 0 : s == up ? 1 : 2;
}

/* A node-side link_down/link_up of a port we know: its state. */
static void learn_link(struct fb_inventory *inv, const struct fb_event *ev)
{
	uint32_t idx = ev->subj.port_guid ? index_get(&inv->guids, ev->subj.port_guid)
					  : index_get(&inv->macs, parse_mac(ev->subj.addr));
	if (idx)
		inv->e[idx - 1].link = ev->kind == FB_KIND_LINK_UP ? 1 : 2;
}

int fb_inventory_learn(struct fb_inventory *inv, const struct fb_event *ev)
{
	if (ev->link_class == FB_LINK_NODE &&
	    (ev->kind == FB_KIND_LINK_DOWN || ev->kind == FB_KIND_LINK_UP)) {
		learn_link(inv, ev);
		return 0;
	}
	if (ev->kind != FB_KIND_INVENTORY || !ev->subj.node[0])
		return 0;
	uint64_t pg = ev->subj.port_guid, ng = parse_node_guid(ev->text), mac = parse_mac(ev->subj.addr);
	if (!pg && !mac)
		return 0;
	/* The port's entry is found by its own key: GUID for IB, MAC otherwise. */
	uint32_t idx = pg ? index_get(&inv->guids, pg) : index_get(&inv->macs, mac);
	struct entry *e = idx ? &inv->e[idx - 1] : new_entry(inv, &idx);
	if (!e)
		return -ENOMEM;
	e->tech = ev->tech;
	e->port_guid = pg;
	e->node_guid = ng;
	e->mac = mac;
	e->port = ev->subj.port;
	e->lid = ev->subj.lid;
	e->ifindex = ev->subj.ifindex;
	/* The inventory gives a new port its state; a known port's changes only
	 * come as link events, so a restarted agent's inventory cannot move it
	 * without the event its resync sends (proto/PROTOCOL.md). */
	if (!e->link)
		e->link = link_of(ev);
	memcpy(e->node, ev->subj.node, sizeof(e->node));
	memcpy(e->device, ev->subj.device, sizeof(e->device));
	int rc = 0;
	if (pg)
		rc |= index_put(&inv->guids, pg, idx);
	if (ng && ng != pg)
		rc |= index_put(&inv->guids, ng, idx);
	if (mac)
		rc |= index_put(&inv->macs, mac, idx);
	return rc ? -ENOMEM : 0;
}

const char *fb_inventory_node_by_guid(const struct fb_inventory *inv, uint64_t guid)
{
	uint32_t idx = index_get(&inv->guids, guid);
	return idx ? inv->e[idx - 1].node : NULL;
}

int fb_inventory_enrich(const struct fb_inventory *inv, struct fb_event *ev)
{
	if (ev->subj.node[0])
		return 0;
	/* An Ethernet switch port's peer is a host MAC (48 bits in peer_guid). */
	if (ev->tech == FB_TECH_ETH && ev->link_class != FB_LINK_NODE) {
		uint32_t idx = ev->subj.peer_guid >> 48 ? 0 : index_get(&inv->macs, ev->subj.peer_guid);
		if (!idx)
			return 0;
		memcpy(ev->subj.node, inv->e[idx - 1].node, sizeof(ev->subj.node));
		return 1;
	}
	const char *node = fb_inventory_node_by_guid(inv, ev->subj.peer_guid);
	if (!node)
		node = fb_inventory_node_by_guid(inv, ev->subj.port_guid);
	/* subj.addr is a switch address on switch-side events; a MAC only
	 * on node-side ones. */
	if (!node && ev->link_class == FB_LINK_NODE) {
		uint32_t idx = index_get(&inv->macs, parse_mac(ev->subj.addr));
		node = idx ? inv->e[idx - 1].node : NULL;
	}
	if (!node)
		return 0;
	memcpy(ev->subj.node, node, sizeof(ev->subj.node));
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static size_t count_nodes(const struct fb_inventory *inv)
{
	if (!inv->n)
		return 0;
	const char **names = malloc(inv->n * sizeof(*names));
	if (!names)
		return 0;
	for (size_t i = 0; i < inv->n; i++)
		names[i] = inv->e[i].node;
	qsort(names, inv->n, sizeof(*names), cmp_str);
	size_t n = 1;
	for (size_t i = 1; i < inv->n; i++)
		n += strcmp(names[i], names[i - 1]) != 0;
	free(names);
	return n;
}

static json_t *entry_json(const struct entry *e)
{
	char buf[24];
	json_t *o = json_pack("{s:s, s:s}", "node", e->node, "device", e->device);
	if (!o)
		return NULL;
	if (e->port_guid) {
		snprintf(buf, sizeof(buf), "0x%016" PRIx64, e->port_guid);
		json_object_set_new(o, "guid", json_string(buf));
		snprintf(buf, sizeof(buf), "0x%016" PRIx64, e->node_guid);
		json_object_set_new(o, "node_guid", json_string(buf));
		json_object_set_new(o, "port", json_integer(e->port));
		json_object_set_new(o, "lid", json_integer(e->lid));
	}
	if (e->mac) {
		snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", (unsigned)(e->mac >> 40) & 0xff,
			 (unsigned)(e->mac >> 32) & 0xff, (unsigned)(e->mac >> 24) & 0xff,
			 (unsigned)(e->mac >> 16) & 0xff, (unsigned)(e->mac >> 8) & 0xff,
			 (unsigned)e->mac & 0xff);
		json_object_set_new(o, "mac", json_string(buf));
		json_object_set_new(o, "ifindex", json_integer(e->ifindex));
	}
	if (e->link)
		json_object_set_new(o, "link", json_string(e->link == 1 ? "up" : "down"));
	return o;
}

json_t *fb_inventory_json(const struct fb_inventory *inv, size_t cap)
{
	size_t ib = 0;
	for (size_t i = 0; i < inv->n; i++)
		ib += inv->e[i].port_guid != 0;
	json_t *ports = json_array();
	json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:b}", "nodes", (json_int_t)count_nodes(inv),
			      "n_ports", (json_int_t)inv->n, "ib_ports", (json_int_t)ib, "eth_ports",
			      (json_int_t)(inv->n - ib), "cap", (json_int_t)cap, "truncated", inv->n > cap);
	if (!o || !ports) {
		json_decref(o);
		json_decref(ports);
		return NULL;
	}
	for (size_t i = 0; i < inv->n && i < cap; i++)
		json_array_append_new(ports, entry_json(&inv->e[i]));
	json_object_set_new(o, "ports", ports);
	return o;
}

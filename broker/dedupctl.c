/* dedupctl.c - fabric/dedup.c and the root cause's symptoms as a quiet
 * stage (see dedupctl.h). */
#include "dedupctl.h"

#include "broker.h"
#include "dedup.h"
#include "fabric_map.h"
#include "storm.h"
#include "topology.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define RECENT_SHOWN 16

struct fb_dedupctl {
	struct fb_broker *b;
	struct fb_dedup *d;
	uint64_t reports, conditions, duplicates, symptoms;
};

struct fb_dedupctl *fb_dedupctl_new(struct fb_broker *b, uint64_t window_ns)
{
	struct fb_dedupctl *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->b = b;
	d->d = fb_dedup_new(window_ns, 0);
	if (!d->d) {
		free(d);
		return NULL;
	}
	return d;
}

void fb_dedupctl_free(struct fb_dedupctl *d)
{
	if (!d)
		return;
	fb_dedup_free(d->d);
	free(d);
}

/* 0: ev says a link went down, 1: up, -1: not a link-state report. A
 * port_state is not one: it follows a port's states one by one (Init, then
 * Active) from one source, each of them news, not a repeat. */
static int direction(const struct fb_event *ev)
{
	if (ev->kind == FB_KIND_LINK_DOWN)
		return 0;
	return ev->kind == FB_KIND_LINK_UP ? 1 : -1;
}

/* The switch port cabled to a host port named by its port GUID (a node
 * agent's event, or the OpenSM plugin's trap 64/65, which carries no port
 * number). The switch agents name a host by its node GUID and port: try the
 * port GUID as that (HCAs whose port 1 GUID is the node GUID), then as node
 * GUID + port number (ibsim, and HCAs that number their port GUIDs so).
 * Only a switch port facing a host counts. */
static const struct fb_topo_port *host_port(const struct fb_topology *t, uint64_t pg, uint16_t port)
{
	if (!pg)
		return NULL;
	uint16_t n = port ? port : 1;
	const struct fb_topo_port *p = fb_topology_by_peer(t, pg, n);
	if (p && p->link_class == FB_LINK_HOST)
		return p;
	p = pg > n ? fb_topology_by_peer(t, pg - n, n) : NULL;
	return p && p->link_class == FB_LINK_HOST ? p : NULL;
}

/* The cable ev reports on: the end it was seen from (*me) and the cable's
 * ends as a condition keys them (*a, *b; b zero when there is no other
 * switch end), and the switch port as the topology has it (NULL if
 * unknown). A cable between switches is its two switch ports; a host's
 * cable is its switch port alone, from either end (agents name a host
 * port by its node GUID or its port GUID: the switch port is the one
 * name they share). */
static const struct fb_topo_port *ends(const struct fb_topology *t, const struct fb_event *ev,
				       struct fb_dedup_end *me, struct fb_dedup_end *a, struct fb_dedup_end *b)
{
	const struct fb_subject *s = &ev->subj;
	const struct fb_topo_port *p = NULL;
	*b = (struct fb_dedup_end){ 0, 0 };
	uint64_t guid;
	uint16_t port;
	if (!fb_topology_key(ev, &guid, &port)) {
		*me = *a = (struct fb_dedup_end){ s->port_guid, s->port };
		p = host_port(t, s->port_guid, s->port);
		if (p)
			*a = (struct fb_dedup_end){ p->switch_guid, p->port };
		return p;
	}
	/* Port 0: an IB switch's management port, or an ifIndex past 65535
	 * that the key cannot hold; no cable to compare. */
	if (!port) {
		*me = *a = (struct fb_dedup_end){ 0, 0 };
		return NULL;
	}
	*me = *a = (struct fb_dedup_end){ guid, port };
	p = fb_topology_event_port(t, ev);
	int isl = p ? p->link_class == FB_LINK_ISL : ev->link_class == FB_LINK_ISL;
	if (isl && p && p->peer_guid)
		*b = (struct fb_dedup_end){ p->peer_guid, p->peer_port };
	else if (isl)
		*b = (struct fb_dedup_end){ s->peer_guid, s->peer_port };
	return p;
}

unsigned fb_dedupctl_stage(void *arg, struct fb_event *ev, uint64_t event_id, unsigned quiet, uint64_t now_ns)
{
	(void)quiet;
	struct fb_dedupctl *d = arg;
	/* A node's own port is another resource (its NetworkDevice port) that
	 * a node's drain follows; like flap control and the root cause, the
	 * switch side of the cable is what is compared. */
	int up = ev->link_class == FB_LINK_NODE ? -1 : direction(ev);
	if (up < 0)
		return 0;
	const struct fb_topology *t = fb_fabric_map_topology(d->b->fabric_map);
	struct fb_dedup_end me, a, b;
	const struct fb_topo_port *p = ends(t, ev, &me, &a, &b);
	if (!a.guid)
		return 0; /* names no port: nothing to compare it with */
	struct fb_dedup_cond c;
	fb_dedup_cond_make(a, b, up, &c);
	struct fb_dedup_entry *e;
	d->reports++;
	if (fb_dedup_observe(d->d, &c, ev->agent_id, me, event_id, now_ns, &e)) {
		d->duplicates++;
		(void)fb_event_add_counter(ev, FB_CTR_EVENT_GROUP_ID, e->group);
		(void)fb_event_add_counter(ev, FB_CTR_DEDUP_SOURCES, e->n_sources + e->sources_cut);
		(void)fb_event_add_counter(ev, FB_CTR_DEDUP_REPORTS, e->reports);
		return FB_QUIET_DUPLICATE;
	}
	d->conditions++;
	uint64_t group = !up && d->b->storm ? fb_storm_symptom(d->b->storm, p, event_id, now_ns) : 0;
	if (!group)
		return 0;
	e->group = group; /* its duplicates join the story too */
	d->symptoms++;
	(void)fb_event_add_counter(ev, FB_CTR_EVENT_GROUP_ID, group);
	return FB_QUIET_SYMPTOM;
}

/* "leaf1:3"; a host port named by its GUID alone (trap 64/65) "port GUID
 * 0x..."; the GUID and port when the topology does not know the switch. */
static void end_name(const struct fb_topology *t, struct fb_dedup_end e, char *buf, size_t sz)
{
	const struct fb_topo_switch *sw = fb_topology_switch(t, e.guid);
	if (sw && sw->name[0])
		snprintf(buf, sz, "%s:%u", sw->name, (unsigned)e.port);
	else if (!e.port)
		snprintf(buf, sz, "port GUID 0x%016" PRIx64, e.guid);
	else
		snprintf(buf, sz, "0x%016" PRIx64 ":%u", e.guid, (unsigned)e.port);
}

static json_t *entry_json(const struct fb_topology *t, const struct fb_dedup_entry *e)
{
	char a[96], b[96], cable[200], src[FB_AGENT_ID_MAX + 100];
	end_name(t, e->c.a, a, sizeof(a));
	if (e->c.b.guid) {
		end_name(t, e->c.b, b, sizeof(b));
		snprintf(cable, sizeof(cable), "%s - %s", a, b);
	} else {
		snprintf(cable, sizeof(cable), "%s", a);
	}
	json_t *srcs = json_array();
	for (uint32_t k = 0; srcs && k < e->n_sources; k++) {
		end_name(t, e->src[k].end, b, sizeof(b));
		snprintf(src, sizeof(src), "%s %s", e->src[k].agent, b);
		json_array_append_new(srcs, json_string(src));
	}
	return json_pack("{s:I,s:I,s:s,s:s,s:I,s:o*,s:I}", "EventId", (json_int_t)e->first_id, "EventGroupId",
			 (json_int_t)e->group, "Cable", cable, "Direction", e->c.up ? "up" : "down", "Reports",
			 (json_int_t)e->reports, "Sources", srcs, "SourcesCut", (json_int_t)e->sources_cut);
}

json_t *fb_dedupctl_json(const struct fb_dedupctl *d)
{
	const struct fb_topology *t = fb_fabric_map_topology(d->b->fabric_map);
	json_t *recent = json_array();
	const struct fb_dedup_entry *e;
	for (size_t i = 0, shown = 0; recent && shown < RECENT_SHOWN && (e = fb_dedup_recent(d->d, i)); i++) {
		if (e->reports < 2)
			continue;
		json_array_append_new(recent, entry_json(t, e));
		shown++;
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:o*}", "window_ms", (json_int_t)(fb_dedup_window_ns(d->d) / 1000000),
			 "reports", (json_int_t)d->reports, "conditions", (json_int_t)d->conditions, "duplicates",
			 (json_int_t)d->duplicates, "symptoms", (json_int_t)d->symptoms, "recent", recent);
}

/* ib_resync.c - diff our fresh view against the broker's map (ib_resync.h). */
#include "ib_resync.h"

#include "fb_log.h"
#include "fb_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_guid(const void *key, const void *elem)
{
	uint64_t g = *(const uint64_t *)key, h = ((const struct ib_switch *)elem)->guid;
	return (g > h) - (g < h);
}

/* The topology is sorted by GUID after discovery. */
static const struct ib_switch *find_switch(const struct ib_topo *t, uint64_t guid)
{
	return t->n ? bsearch(&guid, t->sw, t->n, sizeof(*t->sw), cmp_guid) : NULL;
}

/* A port that is down now and was down at discovery has no peer we know;
 * the map still names the node cabled to it (Nodes.*.Ports), so the event
 * names it as a live one would have. */
static void peer_from_map(struct fb_event *ev, const json_t *map)
{
	const char *node;
	const json_t *n;
	json_object_foreach(json_object_get(map, "Nodes"), node, n) {
		size_t i;
		const json_t *p;
		json_array_foreach(json_object_get(n, "Ports"), i, p) {
			uint64_t sw = 0, guid = 0;
			const char *s = json_string_value(json_object_get(p, "SwitchGUID"));
			const char *g = json_string_value(json_object_get(p, "NodeGUID"));
			if (!g)
				g = json_string_value(json_object_get(p, "PortGUID"));
			if (!s || !g || fb_text_parse_guid(s, strlen(s), &sw) || sw != ev->subj.switch_guid ||
			    json_integer_value(json_object_get(p, "SwitchPort")) != ev->subj.port ||
			    fb_text_parse_guid(g, strlen(g), &guid))
				continue;
			ev->link_class = FB_LINK_HOST;
			ev->subj.peer_guid = guid;
			ev->subj.peer_port = (uint16_t)json_integer_value(json_object_get(p, "Port"));
			(void)fb_strlcpy_field(ev->subj.node, sizeof(ev->subj.node), node);
			(void)fb_strlcpy_field(ev->subj.peer_name, sizeof(ev->subj.peer_name), node);
			return;
		}
	}
}

static void emit(struct ib_poll_ctx *c, const json_t *map, const struct ib_switch *sw,
		 unsigned port, uint8_t kind, uint8_t sev, const char *text)
{
	struct fb_event ev;
	ib_poll_fill(&ev, c, sw, port, kind, sev);
	if (port && !ev.subj.peer_guid)
		peer_from_map(&ev, map);
	(void)fb_event_add_counter(&ev, FB_CTR_RESYNC, 1); /* the first counter: never full */
	snprintf(ev.text, sizeof(ev.text), "%s", text);
	fb_log_info("resync: %s: switch '%s' (GUID 0x%016" PRIx64 ")%s%.0u: %s",
		    fb_kind_name(kind), sw->desc, sw->guid, port ? " port " : "", port, text);
	c->emit(c->emit_arg, &ev);
}

/* One port the map knows: "up"/"degraded" while we see it down gives
 * link_down, "down" while we see it up gives link_up. "unknown" (never
 * reported) says nothing to differ from. */
static size_t diff_port(struct ib_poll_ctx *c, const json_t *map, const struct ib_switch *sw,
			unsigned port, const char *was)
{
	const struct ib_port *p = &sw->ports[port];
	if (!p->have_pi || p->live)
		return 0; /* reported live since the resync began: the map will follow */
	int up = p->pi.phys == IB_PHYS_LINKUP;
	if (up && strcmp(was, "down") == 0) {
		emit(c, map, sw, port, FB_KIND_LINK_UP, FB_SEV_OK, "link up, found at resync (was down)");
		return 1;
	}
	if (!up && (strcmp(was, "up") == 0 || strcmp(was, "degraded") == 0)) {
		char text[64];
		snprintf(text, sizeof(text), "link down, found at resync (was %s)", was);
		emit(c, map, sw, port, FB_KIND_LINK_DOWN, FB_SEV_WARNING, text);
		return 1;
	}
	return 0;
}

static size_t diff_switch(struct ib_poll_ctx *c, const json_t *map, const struct ib_switch *sw,
			  const json_t *m)
{
	size_t n = 0;
	int reachable = !json_is_false(json_object_get(m, "Reachable"));
	if (sw->live)
		reachable = !sw->unreachable; /* reported live since the resync began */
	if (sw->unreachable) {
		if (reachable)
			emit(c, map, sw, 0, FB_KIND_SWITCH_UNREACHABLE, FB_SEV_CRITICAL,
			     "no answer to PortInfo, found at resync");
		return reachable ? 1 : 0;
	}
	if (!reachable) {
		emit(c, map, sw, 0, FB_KIND_SWITCH_REACHABLE, FB_SEV_OK, "answers PortInfo, found at resync");
		n++;
	}
	size_t i;
	const json_t *p;
	json_array_foreach(json_object_get(m, "Ports"), i, p) {
		json_int_t port = json_integer_value(json_object_get(p, "Port"));
		const char *was = json_string_value(json_object_get(p, "LinkState"));
		if (port >= 1 && port <= sw->nports && was)
			n += diff_port(c, map, sw, (unsigned)port, was);
	}
	return n;
}

void ib_gone_free(struct ib_gone *g)
{
	free(g->guid);
	memset(g, 0, sizeof(*g));
}

void ib_gone_remove(struct ib_gone *g, size_t i)
{
	g->guid[i] = g->guid[--g->n];
}

static void gone_add(struct ib_gone *g, uint64_t guid)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->guid[i] == guid)
			return;
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 8;
		uint64_t *v = realloc(g->guid, nc * sizeof(*v));
		if (!v) {
			fb_log_warn("resync: out of memory: switch 0x%016" PRIx64 " will not be looked "
				    "for again until this agent restarts", guid);
			return;
		}
		g->guid = v;
		g->cap = nc;
	}
	g->guid[g->n++] = guid;
}

size_t ib_resync_diff(struct ib_poll_ctx *c, const json_t *map, const char *agent_id,
		      struct ib_gone *gone)
{
	const json_t *sws = json_object_get(map, "Switches");
	size_t n = 0;
	for (size_t i = 0; i < c->topo->n; i++) {
		const struct ib_switch *sw = &c->topo->sw[i];
		char key[24];
		snprintf(key, sizeof(key), "0x%016" PRIx64, sw->guid);
		const json_t *m = json_object_get(sws, key);
		if (sw->assigned && m)
			n += diff_switch(c, map, sw, m);
	}
	/* A switch we reported last that discovery did not find failed while
	 * we were away: nobody else will say so. */
	const char *key;
	const json_t *m;
	json_object_foreach((json_t *)sws, key, m) {
		uint64_t guid;
		const char *owner = json_string_value(json_object_get(m, "Agent"));
		if (!owner || strcmp(owner, agent_id) != 0 || json_is_false(json_object_get(m, "Reachable")) ||
		    fb_text_parse_guid(key, strlen(key), &guid) != 0 || find_switch(c->topo, guid))
			continue;
		struct ib_switch lost = { .guid = guid };
		snprintf(lost.desc, sizeof(lost.desc), "%s",
			 json_string_value(json_object_get(m, "Name")) ? json_string_value(json_object_get(m, "Name")) : "");
		emit(c, map, &lost, 0, FB_KIND_SWITCH_UNREACHABLE, FB_SEV_CRITICAL,
		     "not found by discovery, found at resync");
		n++;
		if (gone)
			gone_add(gone, guid);
	}
	return n;
}

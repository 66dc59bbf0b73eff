/* ib_poll.c - PortInfo polling of one switch, diffed into fb_events. */
#include "ib_poll.h"

#include "fb_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define REROUTE_TRIES 4 /* candidate routes checked per attempt */

_Static_assert(IB_DESC_SZ == FB_NAME_MAX, "node descriptions must fit fb_subject names");

void ib_poll_fill(struct fb_event *ev, const struct ib_poll_ctx *c, const struct ib_switch *sw,
		  unsigned port, uint8_t kind, uint8_t sev)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = fb_now_ns();
	ev->kind = kind;
	ev->severity = sev;
	ev->tech = FB_TECH_IB;
	/* Fit by construction: --fabric is checked, IB_DESC_SZ == FB_NAME_MAX. */
	snprintf(ev->subj.fabric, sizeof(ev->subj.fabric), "%s", c->fabric);
	snprintf(ev->subj.switch_name, sizeof(ev->subj.switch_name), "%s", sw->desc);
	ev->subj.switch_guid = sw->guid;
	if (!port)
		return;
	const struct ib_port *p = &sw->ports[port];
	ev->subj.port = (uint16_t)port;
	ev->port_state = p->have_pi ? p->pi.state : 0;
	ev->phys_state = p->have_pi ? p->pi.phys : 0;
	if (p->peer.guid) {
		ev->link_class = p->peer.type == IB_NT_SWITCH ? FB_LINK_ISL : FB_LINK_HOST;
		ev->subj.peer_guid = p->peer.guid;
		ev->subj.peer_port = p->peer.port;
		snprintf(ev->subj.peer_name, sizeof(ev->subj.peer_name), "%s", p->peer.desc);
	}
}

void ib_poll_topology(struct ib_poll_ctx *c, const struct ib_switch *sw)
{
	struct fb_event ev;
	for (unsigned p = 1; p <= sw->nports; p++) {
		if (!sw->ports[p].peer.guid)
			continue;
		ib_poll_fill(&ev, c, sw, p, FB_KIND_TOPOLOGY, FB_SEV_OK);
		c->emit(c->emit_arg, &ev);
	}
}

static void emit_switch(struct ib_poll_ctx *c, struct ib_switch *sw, uint8_t kind,
			uint8_t sev, const char *text)
{
	sw->live = 1; /* newer than whatever a resync's map says of it */
	struct fb_event ev;
	ib_poll_fill(&ev, c, sw, 0, kind, sev);
	snprintf(ev.text, sizeof(ev.text), "%s", text);
	c->emit(c->emit_arg, &ev);
}

/* A link came up: is it cabled to what we knew? (a moved cable, a new
 * host). A lost MAD here keeps the old peer; the next link_up retries. */
static void recheck_peer(struct ib_poll_ctx *c, struct ib_switch *sw, unsigned port)
{
	struct ib_peer peer;
	if (ib_discover_peer(c->mad, c->topo, sw, port, &peer) != 0)
		return;
	struct ib_peer *old = &sw->ports[port].peer;
	if (old->guid == peer.guid && old->port == peer.port && strcmp(old->desc, peer.desc) == 0)
		return;
	fb_log_info("switch '%s' (GUID 0x%016" PRIx64 ") port %u: peer is now '%s' (GUID 0x%016"
		    PRIx64 " port %u), was '%s' (GUID 0x%016" PRIx64 ")", sw->desc, sw->guid, port,
		    peer.desc, peer.guid, peer.port, old->desc, old->guid);
	*old = peer;
	struct fb_event ev;
	ib_poll_fill(&ev, c, sw, port, FB_KIND_TOPOLOGY, FB_SEV_OK);
	c->emit(c->emit_arg, &ev);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* After a link_down event: the port's flap count, and ONE flap event a
 * window when it reaches --flap-count. */
static void check_flap(struct ib_poll_ctx *c, struct ib_switch *sw, unsigned port)
{
	unsigned n;
	if (!c->flap || !ib_flap_note(&sw->ports[port].flap, c->flap, mono_ms(), &n))
		return;
	struct fb_event ev;
	ib_poll_fill(&ev, c, sw, port, FB_KIND_FLAP, FB_SEV_WARNING);
	(void)fb_event_add_counter(&ev, FB_CTR_FLAP_COUNT, n);       /* 2 of 16: never full */
	(void)fb_event_add_counter(&ev, FB_CTR_FLAP_WINDOW_S, c->flap->window_s);
	snprintf(ev.text, sizeof(ev.text), "link went down %u times within %u s", n,
		 c->flap->window_s);
	fb_log_warn("flap: switch '%s' (GUID 0x%016" PRIx64 ") port %u peer '%s': %s", sw->desc,
		    sw->guid, port, sw->ports[port].peer.desc, ev.text);
	c->emit(c->emit_arg, &ev);
}

static void diff_port(struct ib_poll_ctx *c, struct ib_switch *sw, unsigned port,
		      const struct ib_port_info *now)
{
	struct ib_port *p = &sw->ports[port];
	struct ib_port_info was = p->pi;
	int had = p->have_pi;
	p->pi = *now;
	p->have_pi = 1;
	if (!had)
		return; /* first answer is the baseline, not a change */
	int was_up = was.phys == IB_PHYS_LINKUP, is_up = now->phys == IB_PHYS_LINKUP;
	uint8_t kind, sev = FB_SEV_OK;
	if (was_up && !is_up) {
		kind = FB_KIND_LINK_DOWN;
		sev = FB_SEV_WARNING;
	} else if (!was_up && is_up) {
		recheck_peer(c, sw, port);
		kind = FB_KIND_LINK_UP;
	} else if (is_up && was.state != now->state) {
		kind = FB_KIND_PORT_STATE;
	} else {
		return;
	}
	struct fb_event ev;
	ib_poll_fill(&ev, c, sw, port, kind, sev);
	p->live = 1; /* newer than whatever a resync's map says of it */
	fb_log_info("%s: switch '%s' (GUID 0x%016" PRIx64 ") port %u peer '%s' port %u: "
		    "PortState %u->%u PhysState %u->%u", fb_kind_name(kind), sw->desc, sw->guid,
		    port, p->peer.desc, p->peer.port, was.state, now->state, was.phys, now->phys);
	c->emit(c->emit_arg, &ev);
	if (kind == FB_KIND_LINK_DOWN)
		check_flap(c, sw, port);
}

/* The route may be what failed (a link on the way went down), not the
 * switch. Look for another route at the first loss and then once every
 * unreachable_after polls, so a dead switch costs extra MADs only rarely.
 * Returns 1 when the port answered on a new route. */
static int try_reroute(struct ib_poll_ctx *c, struct ib_switch *sw, unsigned port,
		       struct ib_port_info *pi)
{
	if (sw->fails % c->unreachable_after != 0 ||
	    ib_discover_reroute(c->mad, c->topo, sw, REROUTE_TRIES) != 0)
		return 0;
	return ib_mad_port_info(c->mad, &sw->dr, port, pi) == 0;
}

static void poll_failed(struct ib_poll_ctx *c, struct ib_switch *sw, unsigned port)
{
	sw->resume_port = (uint8_t)port;
	if (++sw->fails == c->unreachable_after && !sw->unreachable) {
		char route[4 * IB_DR_MAX_HOPS + 2];
		ib_dr_format(&sw->dr, route, sizeof(route));
		sw->unreachable = 1;
		fb_log_warn("switch '%s' (GUID 0x%016" PRIx64 ") unreachable: no PortInfo answer "
			    "in %u polls in a row (directed route %s)", sw->desc, sw->guid,
			    sw->fails, route);
		emit_switch(c, sw, FB_KIND_SWITCH_UNREACHABLE, FB_SEV_CRITICAL,
			    "no answer to PortInfo");
	} else {
		fb_log_debug("switch '%s' (GUID 0x%016" PRIx64 ") port %u: PortInfo lost (%u "
			     "failed polls in a row)", sw->desc, sw->guid, port, sw->fails);
	}
}

int ib_poll_switch(struct ib_poll_ctx *c, struct ib_switch *sw)
{
	int answered = 0;
	unsigned n = sw->nports;
	unsigned start = sw->resume_port >= 1 && sw->resume_port <= n ? sw->resume_port : 1;
	for (unsigned k = 0; k < n; k++) {
		if (c->stop && atomic_load(c->stop))
			break;
		unsigned port = (start - 1 + k) % n + 1;
		struct ib_port_info pi;
		if (ib_mad_port_info(c->mad, &sw->dr, port, &pi) != 0 &&
		    !try_reroute(c, sw, port, &pi)) {
			poll_failed(c, sw, port);
			return answered;
		}
		answered++;
		if (sw->unreachable) {
			sw->unreachable = 0;
			fb_log_warn("switch '%s' (GUID 0x%016" PRIx64 ") reachable again after %u "
				    "failed polls", sw->desc, sw->guid, sw->fails);
			emit_switch(c, sw, FB_KIND_SWITCH_REACHABLE, FB_SEV_OK, "answers PortInfo again");
		}
		sw->fails = 0;
		diff_port(c, sw, port, &pi);
	}
	sw->resume_port = 1;
	return answered;
}

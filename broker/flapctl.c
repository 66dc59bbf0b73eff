/* flapctl.c - fabric/flap.c fed by the output seam (see flapctl.h). */
#include "flapctl.h"

#include "broker.h"
#include "fabric_map.h"
#include "flap.h"
#include "fb_log.h"
#include "quiet.h"
#include "rc_event.h"
#include "stage_events.h"
#include "topology.h"

#include <event2/event.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE_MAX 1024 /* detections waiting for the loop (one per port at most) */

struct fb_flapctl {
	struct fb_broker *b;
	struct fb_flap *flap;
	struct fb_stage_events ev; /* timer: the next summary or stable event;
				    * wake: emit the detections queued */
	struct fb_flap_out queue[QUEUE_MAX];
	size_t n_queue;
	uint64_t transitions, detected, agent_flaps, summaries, stable, lost;
	uint64_t quiet; /* transitions made quiet (FB_QUIET_FLAP) */
};

static void arm(struct fb_flapctl *f, uint64_t now)
{
	fb_stage_arm(&f->ev, fb_flap_next_due(f->flap), now);
}

/* The event for a decision, named like the port's own events. */
static void fill(struct fb_flapctl *f, const struct fb_flap_out *o, struct fb_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	const struct fb_topology *t = fb_fabric_map_topology(f->b->fabric_map);
	const struct fb_topo_switch *sw = fb_topology_switch(t, o->guid);
	const struct fb_topo_port *p = fb_topology_port(t, o->guid, o->port);
	ev->subj.switch_guid = o->guid;
	ev->subj.port = o->port;
	if (sw)
		memcpy(ev->subj.switch_name, sw->name, sizeof(ev->subj.switch_name));
	ev->tech = p ? p->tech : FB_TECH_IB;
	ev->link_class = p ? p->link_class : FB_LINK_UNKNOWN;
	if (p) {
		ev->subj.peer_guid = p->peer_guid;
		ev->subj.peer_port = p->peer_port;
		memcpy(ev->subj.peer_name, p->peer_name, sizeof(ev->subj.peer_name));
	}
	const struct fb_flap_cfg *c = fb_flap_cfg(f->flap);
	switch (o->what) {
	case FB_FLAP_DETECTED:
		ev->kind = FB_KIND_FLAP;
		ev->severity = FB_SEV_WARNING;
		fb_event_add_counter(ev, FB_CTR_FLAP_COUNT, o->n);
		fb_event_add_counter(ev, FB_CTR_FLAP_WINDOW_S, (c->window_ns + 999999999ULL) / 1000000000ULL);
		fb_event_add_counter(ev, FB_CTR_EVENT_GROUP_ID, f->b->last_event_id + 1);
		break;
	case FB_FLAP_SUMMARY:
		ev->kind = FB_KIND_FLAP_SUPPRESSED;
		ev->severity = FB_SEV_WARNING;
		fb_event_add_counter(ev, FB_CTR_SUPPRESSED, o->n);
		fb_event_add_counter(ev, FB_CTR_INTERVAL_MS, c->summary_ns / 1000000ULL);
		break;
	default:
		ev->kind = FB_KIND_FLAP_STABLE;
		ev->severity = FB_SEV_OK;
		fb_event_add_counter(ev, FB_CTR_SUPPRESSED, o->n);
		fb_event_add_counter(ev, FB_CTR_INTERVAL_MS, c->stable_ns / 1000000ULL);
		break;
	}
	if (o->what != FB_FLAP_DETECTED && o->group)
		fb_event_add_counter(ev, FB_CTR_EVENT_GROUP_ID, o->group);
}

static void emit(struct fb_flapctl *f, const struct fb_flap_out *o)
{
	struct fb_event ev;
	fill(f, o, &ev);
	uint64_t id = 0;
	int rc = fb_broker_emit(f->b, &ev, &id);
	if (rc) {
		fb_log_warn("flap control: switch %s port %u: event not emitted (%s)", ev.subj.switch_name, o->port,
			    strerror(-rc));
		return;
	}
	if (o->what == FB_FLAP_DETECTED) {
		fb_flap_set_group(f->flap, o->guid, o->port, id);
		fb_log_warn("flap: switch %s port %u: %" PRIu64 " link transitions within the window; "
			    "further ones are summarised (EventGroupId %" PRIu64 ")",
			    ev.subj.switch_name, o->port, o->n, id);
		f->detected++;
	} else if (o->what == FB_FLAP_SUMMARY) {
		f->summaries++;
	} else {
		fb_log_info("flap over: switch %s port %u is stable; %" PRIu64 " transitions were summarised",
			    ev.subj.switch_name, o->port, o->n);
		f->stable++;
	}
}

static void emit_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_flapctl *f = arg;
	for (size_t i = 0; i < f->n_queue; i++)
		emit(f, &f->queue[i]);
	f->n_queue = 0;
	arm(f, fb_now_ns());
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_flapctl *f = arg;
	uint64_t now = fb_now_ns();
	struct fb_flap_out out[64];
	size_t n;
	do {
		n = fb_flap_tick(f->flap, now, out, 64);
		for (size_t i = 0; i < n; i++)
			emit(f, &out[i]);
	} while (n == 64);
	arm(f, now);
}

struct fb_flapctl *fb_flapctl_new(struct fb_broker *b)
{
	struct fb_flapctl *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->b = b;
	const struct fb_config *c = b->cfg;
	struct fb_flap_cfg fc = { (uint32_t)c->flap_transitions, c->flap_window_ms * 1000000ULL,
				  c->flap_summary_ms * 1000000ULL, c->flap_stable_ms * 1000000ULL, 0 };
	f->flap = fb_flap_new(&fc);
	if (!f->flap || fb_stage_events_init(&f->ev, b->base, timer_cb, emit_cb, f)) {
		fb_flapctl_free(f);
		return NULL;
	}
	return f;
}

void fb_flapctl_free(struct fb_flapctl *f)
{
	if (!f)
		return;
	fb_stage_events_free(&f->ev);
	fb_flap_free(f->flap);
	free(f);
}

/* A switch port's link went down or up (an agent's, not ours). */
static int is_transition(const struct fb_event *ev)
{
	return (ev->kind == FB_KIND_LINK_DOWN || ev->kind == FB_KIND_LINK_UP) && ev->subj.switch_guid &&
	       ev->subj.port && ev->link_class != FB_LINK_NODE;
}

unsigned fb_flapctl_quiet(void *arg, struct fb_event *ev, uint64_t event_id, unsigned quiet, uint64_t now_ns)
{
	(void)quiet; /* whatever else it is, the port's state must follow it */
	struct fb_flapctl *f = arg;
	if (ev->kind == FB_KIND_FLAP && ev->subj.switch_guid && ev->subj.port) {
		fb_flap_agent_flap(f->flap, ev->subj.switch_guid, ev->subj.port, event_id, now_ns);
		f->agent_flaps++;
		arm(f, now_ns);
		return 0;
	}
	if (!is_transition(ev))
		return 0;
	f->transitions++;
	int was = fb_flap_is_suppressed(f->flap, ev->subj.switch_guid, ev->subj.port);
	struct fb_flap_out o;
	if (fb_flap_transition(f->flap, ev->subj.switch_guid, ev->subj.port, now_ns, &o) == FB_FLAP_DETECTED) {
		if (f->n_queue < QUEUE_MAX)
			f->queue[f->n_queue++] = o;
		else
			f->lost++; /* suppressed all the same; its summaries still come */
		/* Not from here: the event being staged is not journaled yet. */
		fb_stage_wake(&f->ev);
	} else if (was && !evtimer_pending(f->ev.timer, NULL)) {
		arm(f, now_ns);
	}
	if (was)
		f->quiet++;
	return was ? FB_QUIET_FLAP : 0;
}

json_t *fb_flapctl_json(const struct fb_flapctl *f)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "quiet", (json_int_t)f->quiet, "transitions", (json_int_t)f->transitions, "detected",
			 (json_int_t)f->detected, "agent_flaps", (json_int_t)f->agent_flaps, "summaries",
			 (json_int_t)f->summaries, "stable", (json_int_t)f->stable, "suppressed_ports",
			 (json_int_t)fb_flap_suppressed(f->flap), "untracked", (json_int_t)fb_flap_untracked(f->flap),
			 "not_emitted", (json_int_t)f->lost);
}

/* storm.c - fabric/rootcause.c fed by the output seam (see storm.h). */
#include "storm.h"

#include "broker.h"
#include "fabric_map.h"
#include "fb_log.h"
#include "fb_time.h"
#include "incident.h"
#include "rc_event.h"
#include "rootcause.h"
#include "stage_events.h"
#include "topology.h"
#include "fb_hostlist_fmt.h"

#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Switches with cable-down reports coming in now, before any verdict: from
 * the third cable of one switch on, its reports are symptoms of the root
 * cause about to come (fb_storm_symptom). */
#define TALLY_MAX 64

struct tally {
	uint64_t guid;
	uint64_t group;      /* the EventId of the switch's first report */
	uint64_t last_ns;
	uint64_t cable[2];   /* the first two distinct cables */
	uint32_t cables;     /* distinct cables reported down (counted up to 3) */
	uint8_t used;        /* a symptom was given group */
};

struct fb_storm {
	struct fb_broker *b;
	uint64_t window_ns;
	struct tally tally[TALLY_MAX];
	uint64_t symptoms, early_symptoms;
	struct fb_rootcause *rc;
	struct fb_stage_events ev; /* timer: the next verdict due; wake: after a
				    * commit that brought a cable of an incident's
				    * switch up, is every one back? */
	struct fb_incidents *incidents;
	uint64_t reports, verdicts, explained;
	uint64_t emitted, emit_failed, recovered;
	json_t *last;      /* the last verdict, as /status shows it */
};

static void arm(struct fb_storm *s, uint64_t now)
{
	/* An armed timer is left as it is: timer_cb arms the next one. */
	if (!evtimer_pending(s->ev.timer, NULL))
		fb_stage_arm(&s->ev, fb_rootcause_deadline(s->rc), now);
}

static json_t *names_json(const char *const *names, size_t n)
{
	char *hl = fb_hostlist_format(names, n);
	json_t *j = hl ? json_string(hl) : NULL;
	free(hl);
	return j;
}

static json_t *verdict_json(const struct fb_rc_verdict *v, uint64_t now)
{
	char guid[24];
	snprintf(guid, sizeof(guid), "0x%016" PRIx64, v->switch_guid);
	json_t *ids = json_array();
	for (size_t i = 0; ids && i < v->n_symptoms; i++)
		json_array_append_new(ids, json_integer((json_int_t)v->symptoms[i]));
	return json_pack("{s:s,s:s,s:s,s:I,s:I,s:o*,s:I,s:I,s:o*,s:o*,s:I,s:I,s:I}", "MessageId",
			 v->kind == FB_RC_SWITCH_FAILED ? "Fabric.1.0.SwitchFailed" : "Fabric.1.0.SwitchDegraded",
			 "Switch", v->switch_name, "SwitchGUID", guid, "Cables", (json_int_t)v->cables,
			 "CablesDown", (json_int_t)v->cables_down, "Symptoms", ids, "Others",
			 (json_int_t)v->others, "Dropped", (json_int_t)v->dropped, "NoPath",
			 names_json(v->no_path, v->n_no_path), "Degraded", names_json(v->degraded, v->n_degraded),
			 "NoPathCount", (json_int_t)v->blast.no_path, "DegradedCount",
			 (json_int_t)v->blast.degraded, "DecidedNs", (json_int_t)now);
}

/* The verdict as the broker's own event: a new incident, or an update of
 * the switch's open one (same EventGroupId). */
static struct tally *tally_find(struct fb_storm *s, uint64_t guid, uint64_t now)
{
	for (size_t i = 0; i < TALLY_MAX; i++)
		if (s->tally[i].cables && s->tally[i].guid == guid && now - s->tally[i].last_ns <= s->window_ns)
			return &s->tally[i];
	return NULL;
}

/* The switch's tally that gave symptoms a group, if it is recent: the
 * verdict comes a window after its last report (at most 8 windows after the
 * first, rootcause.c), later than tally_find would look. */
static struct tally *tally_used(struct fb_storm *s, uint64_t guid, uint64_t now)
{
	for (size_t i = 0; i < TALLY_MAX; i++)
		if (s->tally[i].used && s->tally[i].guid == guid && now - s->tally[i].last_ns <= 10 * s->window_ns)
			return &s->tally[i];
	return NULL;
}

static void emit_verdict(struct fb_storm *s, const struct fb_rc_verdict *v, uint64_t now, json_t *j)
{
	/* A new incident whose reports were made symptoms before it existed
	 * takes the group they were given: one story, one EventGroupId. */
	struct tally *ta = tally_used(s, v->switch_guid, now);
	uint64_t group = ta && !fb_incidents_find(s->incidents, v->switch_guid) ? ta->group : s->b->last_event_id + 1;
	const struct fb_incident *inc = fb_incidents_verdict(s->incidents, v->switch_guid, group, now, v->n_no_path);
	if (ta)
		ta->used = 0; /* the incident has the group now */
	struct fb_event ev;
	uint64_t id = 0;
	int rc = fb_rc_event_fill(v, inc, &ev);
	if (!rc)
		rc = fb_broker_emit(s->b, &ev, &id);
	if (rc) {
		s->emit_failed++;
		fb_log_warn("root cause %s: not emitted as an event (%s); it is in /status \"storm\"",
			    v->switch_name, strerror(-rc));
		return;
	}
	s->emitted++;
	if (j) {
		json_object_set_new(j, "EventId", json_integer((json_int_t)id));
		json_object_set_new(j, "EventGroupId", json_integer((json_int_t)inc->group));
		json_object_set_new(j, "IncidentUpdate", json_integer((json_int_t)inc->updates));
	}
}

static void decided(struct fb_storm *s, const struct fb_rc_verdict *v, uint64_t now)
{
	json_t *j = verdict_json(v, now);
	emit_verdict(s, v, now, j);
	if (j) {
		json_decref(s->last);
		s->last = j;
	}
	s->verdicts++;
	s->explained += v->n_symptoms;
	fb_log_warn("root cause: %s %s: %zu of its %zu cables down, explains %zu reports; %zu hosts "
		    "without a path, %zu degraded",
		    v->kind == FB_RC_SWITCH_FAILED ? "SwitchFailed" : "SwitchDegraded", v->switch_name,
		    v->cables_down, v->cables, v->n_symptoms, v->blast.no_path, v->blast.degraded);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_storm *s = arg;
	uint64_t now = fb_now_ns();
	struct fb_rc_verdict v;
	int rc = fb_rootcause_decide(s->rc, fb_fabric_map_topology(s->b->fabric_map), s->b->inventory, now, &v);
	if (rc == 1 && v.kind != FB_RC_NONE)
		decided(s, &v, now);
	else if (rc < 0)
		fb_log_warn("root cause: out of memory weighing %" PRIu64 " reports; retrying", s->reports);
	if (rc == 1)
		fb_rc_verdict_free(&v);
	if (rc < 0) {
		struct timeval tv = { 0, 100000 };
		evtimer_add(s->ev.timer, &tv);
		return;
	}
	arm(s, now);
}

/* Close incident inc: every cable of its switch is back. */
static void recovered(struct fb_storm *s, const struct fb_topology *t, uint64_t guid, size_t cables)
{
	struct fb_incident done;
	fb_incidents_close(s->incidents, guid, &done);
	const struct fb_topo_switch *sw = fb_topology_switch(t, done.switch_guid);
	struct fb_event ev;
	fb_rc_event_recovered(&done, sw ? sw->name : "", cables, &ev);
	int rc = fb_broker_emit(s->b, &ev, NULL);
	if (rc)
		fb_log_warn("switch %s recovered: not emitted as an event (%s)", ev.subj.switch_name, strerror(-rc));
	else
		s->recovered++;
	fb_log_info("root cause over: switch %s has its %zu cables back (EventGroupId %" PRIu64 ")",
		    ev.subj.switch_name, cables, done.group);
}

/* After cables of incidents' switches came up: an incident whose switch
 * has every cable back closes (switch_recovered); one that now leaves
 * fewer hosts without a path is updated (the same group, the new lists),
 * so that what was drained for it can be resumed host by host. */
static void check_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_storm *s = arg;
	const struct fb_topology *t = fb_fabric_map_topology(s->b->fabric_map);
	uint64_t now = fb_now_ns();
	for (size_t i = 0; i < fb_incidents_count(s->incidents);) {
		const struct fb_incident *inc = fb_incidents_at(s->incidents, i);
		struct fb_rc_verdict v;
		if (fb_rootcause_reweigh(t, s->b->inventory, inc->switch_guid, &v) != 1) {
			i++;
			continue;
		}
		if (!v.cables_down) {
			recovered(s, t, inc->switch_guid, v.cables);
		} else {
			if (v.n_no_path != inc->no_path) {
				fb_log_info("root cause update: switch %s: %zu of its %zu cables down, %zu hosts "
					    "without a path now", v.switch_name, v.cables_down, v.cables, v.n_no_path);
				emit_verdict(s, &v, now, NULL);
			}
			i++;
		}
		fb_rc_verdict_free(&v);
	}
}

/* A report that a cable is up again (the opposite of rootcause.c's). Its
 * kinds are in FB_STORM_KINDS (storm.h). */
static int is_up_report(const struct fb_event *ev)
{
	if (ev->kind == FB_KIND_LINK_UP)
		return 1;
	return (ev->kind == FB_KIND_PORT_STATE || ev->kind == FB_KIND_TOPOLOGY) && ev->tech == FB_TECH_IB &&
	       (ev->port_state == 4 || ev->port_state == 5);
}

/* Does ev bring up a cable of a switch with an open incident? */
static int touches_incident(const struct fb_storm *s, const struct fb_topology *t, const struct fb_event *ev)
{
	if (!fb_incidents_count(s->incidents) || !is_up_report(ev))
		return 0;
	const struct fb_topo_port *p = fb_topology_event_port(t, ev);
	if (!p)
		return 0;
	return fb_incidents_find(s->incidents, p->switch_guid) ||
	       (p->link_class == FB_LINK_ISL && fb_incidents_find(s->incidents, p->peer_guid));
}

struct fb_storm *fb_storm_new(struct fb_broker *b, uint64_t window_ns)
{
	struct fb_storm *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->b = b;
	s->window_ns = window_ns ? window_ns : 500000000ULL; /* rootcause.c's default */
	s->rc = fb_rootcause_new(window_ns);
	s->incidents = fb_incidents_new(0);
	if (!s->rc || !s->incidents || fb_stage_events_init(&s->ev, b->base, timer_cb, check_cb, s)) {
		fb_storm_free(s);
		return NULL;
	}
	return s;
}

void fb_storm_free(struct fb_storm *s)
{
	if (!s)
		return;
	fb_stage_events_free(&s->ev);
	fb_incidents_free(s->incidents);
	fb_rootcause_free(s->rc);
	json_decref(s->last);
	free(s);
}

int fb_storm_committed(void *arg, struct fb_batch *batch, uint64_t last_id)
{
	(void)last_id;
	struct fb_storm *s = arg;
	const struct fb_topology *t = fb_fabric_map_topology(s->b->fabric_map);
	uint64_t now = fb_now_ns();
	int check = 0;
	/* Reading every record's kind here cost a cache miss per event (1.5% of
	 * the broker at full rate): the batch says which kinds it holds. */
	size_t n = batch->kinds & FB_STORM_KINDS ? batch->n : 0;
	struct fb_record rec;
	for (size_t i = 0; i < n; i++) {
		const struct fb_event *ev = fb_batch_get(batch, i, &rec);
		s->reports += (uint64_t)fb_rootcause_observe(s->rc, t, ev, rec.event_id, now);
		check = check || touches_incident(s, t, ev);
	}
	arm(s, now);
	/* Not from here: an emit appends to the batches being published. */
	if (check)
		fb_stage_wake(&s->ev);
	return 0;
}

/* Count a first report of cable `cable` down on switch guid; return its
 * group if the switch already had 2 other cables down in the window, else
 * 0. The same cable down again (a flap) is not another cable. */
static uint64_t tally_add(struct fb_storm *s, uint64_t guid, uint64_t cable, uint64_t event_id, uint64_t now)
{
	struct tally *t = tally_find(s, guid, now);
	if (!t) {
		/* The slot quiet the longest (a free one is the oldest of all). */
		t = &s->tally[0];
		for (size_t i = 1; i < TALLY_MAX && t->cables; i++)
			if (!s->tally[i].cables || s->tally[i].last_ns < t->last_ns)
				t = &s->tally[i];
		*t = (struct tally){ .guid = guid, .group = event_id };
	}
	t->last_ns = now;
	for (uint32_t k = 0; k < t->cables && k < 2; k++)
		if (t->cable[k] == cable)
			return t->cables > 2 && t->used ? t->group : 0;
	if (t->cables < 2) {
		t->cable[t->cables++] = cable;
		return 0;
	}
	t->cables = 3;
	t->used = 1;
	return t->group;
}

/* A cable's name for the tally, the same from either end. */
static uint64_t cable_id(const struct fb_topo_port *p)
{
	uint64_t a = (p->switch_guid ^ ((uint64_t)p->port << 48)) * 0x9e3779b97f4a7c15ULL;
	uint64_t b = p->link_class == FB_LINK_ISL
			     ? (p->peer_guid ^ ((uint64_t)p->peer_port << 48)) * 0x9e3779b97f4a7c15ULL
			     : 0;
	return a ^ b;
}

uint64_t fb_storm_symptom(struct fb_storm *s, const struct fb_topo_port *p, uint64_t event_id, uint64_t now_ns)
{
	if (!p || !p->peer_guid || (p->link_class != FB_LINK_ISL && p->link_class != FB_LINK_HOST))
		return 0;
	uint64_t peer = p->link_class == FB_LINK_ISL ? p->peer_guid : 0;
	const struct fb_incident *inc = fb_incidents_find(s->incidents, p->switch_guid);
	if (!inc && peer)
		inc = fb_incidents_find(s->incidents, peer);
	if (inc) {
		s->symptoms++;
		return inc->group;
	}
	uint64_t cable = cable_id(p);
	uint64_t g = tally_add(s, p->switch_guid, cable, event_id, now_ns);
	uint64_t h = peer ? tally_add(s, peer, cable, event_id, now_ns) : 0;
	if (g || h)
		s->early_symptoms++;
	return g ? g : h;
}

json_t *fb_storm_json(const struct fb_storm *s)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:O?}", "reports", (json_int_t)s->reports,
			 "symptoms", (json_int_t)s->symptoms, "early_symptoms", (json_int_t)s->early_symptoms,
			 "verdicts",
			 (json_int_t)s->verdicts, "explained", (json_int_t)s->explained, "emitted",
			 (json_int_t)s->emitted, "emit_failed", (json_int_t)s->emit_failed, "recovered",
			 (json_int_t)s->recovered, "open_incidents", (json_int_t)fb_incidents_count(s->incidents),
			 "last", s->last);
}

/* ratectl.c - fabric/ratelimit.c as a quiet stage (see ratectl.h). */
#include "ratectl.h"

#include "broker.h"
#include "fabric_map.h"
#include "fb_log.h"
#include "quiet.h"
#include "ratelimit.h"
#include "stage_events.h"
#include "topology.h"

#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fb_ratectl {
	struct fb_broker *b;
	struct fb_rl *rl;
	struct fb_stage_events ev; /* timer: the next window end of a limited key;
				    * wake: summaries waiting since an event closed a window */
	uint64_t quiet, summaries, lifted, not_emitted;
};

void fb_ratectl_subject(const struct fb_event *ev, char *out, size_t outsz)
{
	const struct fb_subject *s = &ev->subj;
	out[0] = '\0';
	/* Named as its OriginOfCondition names it (fb_redfish.c): the switch's
	 * name first, so that the summary points where the events do. */
	if (s->node[0] && (ev->link_class == FB_LINK_NODE || (!s->switch_guid && !s->switch_name[0])))
		snprintf(out, outsz, "node %s", s->node);
	else if (s->switch_name[0])
		snprintf(out, outsz, "switch %s port %u", s->switch_name,
			 ev->tech == FB_TECH_ETH && s->ifindex ? (unsigned)s->ifindex : s->port);
	else if (s->switch_guid)
		snprintf(out, outsz, "guid %016" PRIx64 " port %u", s->switch_guid, s->port);
	else if (s->addr[0])
		snprintf(out, outsz, "switch %s port %u", s->addr, s->ifindex ? (unsigned)s->ifindex : s->port);
}

static void arm(struct fb_ratectl *r, uint64_t now)
{
	fb_stage_arm(&r->ev, fb_rl_next_due(r->rl), now);
}

/* The subject back from its key (fb_ratectl_subject), named from the
 * topology like the port's own events. */
static void fill_subject(struct fb_ratectl *r, const char *key, struct fb_event *ev)
{
	uint64_t guid;
	unsigned port;
	if (sscanf(key, "guid %" SCNx64 " port %u", &guid, &port) == 2) {
		const struct fb_topology *t = fb_fabric_map_topology(r->b->fabric_map);
		const struct fb_topo_switch *sw = fb_topology_switch(t, guid);
		const struct fb_topo_port *p = fb_topology_port(t, guid, (uint16_t)port);
		ev->subj.switch_guid = guid;
		ev->subj.port = (uint16_t)port;
		if (sw)
			memcpy(ev->subj.switch_name, sw->name, sizeof(ev->subj.switch_name));
		ev->tech = p ? p->tech : FB_TECH_UNKNOWN;
		ev->link_class = p ? p->link_class : FB_LINK_UNKNOWN;
	} else if (strncmp(key, "node ", 5) == 0) {
		snprintf(ev->subj.node, sizeof(ev->subj.node), "%s", key + 5);
	} else if (strncmp(key, "switch ", 7) == 0) {
		const char *at = strstr(key, " port ");
		const char *last = at;
		while (last && (at = strstr(last + 1, " port ")))
			last = at;
		size_t n = last ? (size_t)(last - key - 7) : strlen(key + 7);
		if (n >= sizeof(ev->subj.switch_name))
			n = sizeof(ev->subj.switch_name) - 1;
		memcpy(ev->subj.switch_name, key + 7, n);
		ev->subj.switch_name[n] = '\0';
		if (last)
			ev->subj.port = (uint16_t)strtoul(last + 6, NULL, 10);
	}
}

static void emit(struct fb_ratectl *r, const struct fb_rl_out *o)
{
	const struct fb_rl_cfg *c = fb_rl_cfg(r->rl);
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = FB_KIND_EVENTS_SUPPRESSED;
	ev.severity = o->what == FB_RL_LIFTED ? FB_SEV_OK : FB_SEV_WARNING;
	if (o->scope == FB_RL_AGENT)
		snprintf(ev.text, sizeof(ev.text), "agent %s", o->key);
	else
		fill_subject(r, o->key, &ev);
	fb_event_add_counter(&ev, FB_CTR_SUPPRESSED, o->suppressed);
	fb_event_add_counter(&ev, FB_CTR_INTERVAL_MS, o->span_ns / 1000000ULL);
	fb_event_add_counter(&ev, FB_CTR_FIRST_SUPPRESSED_ID, o->first_id);
	fb_event_add_counter(&ev, FB_CTR_LAST_SUPPRESSED_ID, o->last_id);
	fb_event_add_counter(&ev, FB_CTR_RATE_LIMIT, o->scope == FB_RL_AGENT ? c->agent_limit : c->subject_limit);
	if (o->what == FB_RL_LIFTED)
		fb_event_add_counter(&ev, FB_CTR_LIMIT_LIFTED, 1);
	int rc = fb_broker_emit(r->b, &ev, NULL);
	if (rc) {
		r->not_emitted++;
		fb_log_warn("rate limit: %s: summary of %" PRIu64 " suppressed events (EventIds %" PRIu64 "-%" PRIu64
			    ") not emitted (%s)", o->key, o->suppressed, o->first_id, o->last_id, strerror(-rc));
		return;
	}
	if (o->what == FB_RL_LIFTED) {
		r->lifted++;
		fb_log_info("rate limit lifted: %s is under its limit again; %" PRIu64 " events were quiet "
			    "(EventIds %" PRIu64 "-%" PRIu64 ")", o->key, o->suppressed, o->first_id, o->last_id);
	} else {
		r->summaries++;
	}
}

static void flush(struct fb_ratectl *r)
{
	uint64_t now = fb_now_ns();
	struct fb_rl_out out[32];
	size_t n;
	do {
		n = fb_rl_take(r->rl, now, out, 32);
		for (size_t i = 0; i < n; i++)
			emit(r, &out[i]);
	} while (n == 32);
	arm(r, now);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flush(arg);
}

unsigned fb_ratectl_quiet(void *arg, struct fb_event *ev, uint64_t event_id, unsigned quiet, uint64_t now_ns)
{
	struct fb_ratectl *r = arg;
	if (quiet)
		return 0; /* already out of the default stream: not counted */
	char subject[FB_RL_KEY_MAX];
	fb_ratectl_subject(ev, subject, sizeof(subject));
	size_t before = fb_rl_limited(r->rl);
	int over = fb_rl_event(r->rl, ev->agent_id, subject, event_id, now_ns);
	if (fb_rl_ready(r->rl))
		fb_stage_wake(&r->ev); /* a window closed: its summary */
	else if (fb_rl_limited(r->rl) != before && !evtimer_pending(r->ev.timer, NULL))
		arm(r, now_ns);
	if (!over)
		return 0;
	if (fb_rl_limited(r->rl) != before)
		fb_log_warn("rate limit: %s %s is over its limit (%" PRIu64 " per %" PRIu64
			    " ms): further events are quiet until a window passes under it",
			    over == FB_RL_AGENT + 1 ? "agent" : "subject", over == FB_RL_AGENT + 1 ? ev->agent_id : subject,
			    over == FB_RL_AGENT + 1 ? r->b->cfg->rate_limit_agent : r->b->cfg->rate_limit_subject,
			    r->b->cfg->rate_limit_window_ms);
	r->quiet++;
	return FB_QUIET_RATE_LIMITED;
}

static void emit_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flush(arg);
}

struct fb_ratectl *fb_ratectl_new(struct fb_broker *b, int *err)
{
	*err = 0;
	const struct fb_config *c = b->cfg;
	if (!c->rate_limit_agent && !c->rate_limit_subject)
		return NULL;
	struct fb_ratectl *r = calloc(1, sizeof(*r));
	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	r->b = b;
	struct fb_rl_cfg rc = { (uint32_t)c->rate_limit_agent, (uint32_t)c->rate_limit_subject,
				c->rate_limit_window_ms * 1000000ULL, 0 };
	r->rl = fb_rl_new(&rc);
	if (!r->rl || fb_stage_events_init(&r->ev, b->base, timer_cb, emit_cb, r)) {
		fb_ratectl_free(r);
		*err = -ENOMEM;
		return NULL;
	}
	return r;
}

void fb_ratectl_free(struct fb_ratectl *r)
{
	if (!r)
		return;
	fb_stage_events_free(&r->ev);
	fb_rl_free(r->rl);
	free(r);
}

json_t *fb_ratectl_json(const struct fb_ratectl *r)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "quiet", (json_int_t)r->quiet, "summaries",
			 (json_int_t)r->summaries, "lifted", (json_int_t)r->lifted, "limited",
			 (json_int_t)fb_rl_limited(r->rl), "untracked", (json_int_t)fb_rl_untracked(r->rl),
			 "not_emitted", (json_int_t)r->not_emitted);
}

/* slurm_cond.c - classify a fabric event into a drain-condition observation. */
#include "slurm_cond.h"

#include "fb_err.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define FLAP_WINDOW_DEFAULT_S 60 /* the IB agent's default, for events without one */

void fbs_fmt(char *out, size_t outsz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, outsz, fmt, ap);
	va_end(ap);
}

static const char *const ctype_names[FBS_C__N] = {
	[FBS_C_LINK_DOWN] = "link_down",
	[FBS_C_FLAP] = "flap",
	[FBS_C_COUNTER] = "counter_threshold",
	[FBS_C_CONGESTION] = "congestion",
	[FBS_C_SWITCH] = "switch_unreachable",
	[FBS_C_DEGRADED] = "link_degraded",
	[FBS_C_ROOT_CAUSE] = "root_cause",
};

const char *fbs_ctype_name(unsigned t)
{
	return t < FBS_C__N ? ctype_names[t] : NULL;
}

int fbs_ctype_parse(const char *name)
{
	for (unsigned t = 0; t < FBS_C__N; t++)
		if (strcasecmp(name, ctype_names[t]) == 0)
			return (int)t;
	return -1;
}

int fbs_drain_on_parse(const char *s, unsigned *mask, char *why, size_t whysz)
{
	unsigned m = 0;
	const char *p = s;
	while (*p) {
		size_t n = strcspn(p, ",");
		char name[32];
		while (n && (*p == ' ' || *p == '\t'))
			p++, n--;
		size_t k = n;
		while (k && (p[k - 1] == ' ' || p[k - 1] == '\t'))
			k--;
		int t = -1;
		if (k && k < sizeof(name)) {
			memcpy(name, p, k);
			name[k] = '\0';
			t = fbs_ctype_parse(name);
		}
		if (t < 0) {
			snprintf(why, whysz, "'%.*s' is not one of link_down, flap, "
				 "counter_threshold, congestion, switch_unreachable, link_degraded, root_cause",
				 (int)(k > 40 ? 40 : k), p);
			return FB_ECONFIG;
		}
		m |= FBS_C_BIT(t);
		p += n;
		if (*p == ',' && !*++p) {
			snprintf(why, whysz, "empty name after the last ','");
			return FB_ECONFIG;
		}
	}
	*mask = m;
	return 0;
}

void fbs_drain_on_format(unsigned mask, char *out, size_t outsz)
{
	size_t off = 0;
	out[0] = '\0';
	for (unsigned t = 0; t < FBS_C__N; t++) {
		if (!(mask & FBS_C_BIT(t)))
			continue;
		int n = snprintf(out + off, outsz - off, "%s%s", off ? "," : "", ctype_names[t]);
		if (n < 0 || (size_t)n >= outsz - off)
			return;
		off += (size_t)n;
	}
}

void fbs_port_key(uint64_t guid, const char *name, unsigned port, char *key, size_t keysz)
{
	if (guid)
		fbs_fmt(key, keysz, "sw:0x%016" PRIx64 "/%u", guid, port);
	else
		fbs_fmt(key, keysz, "sw:%s/%u", name && *name ? name : "unknown", port);
}

void fbs_port_label(uint64_t guid, const char *name, unsigned port, char *out, size_t outsz)
{
	if (name && *name)
		fbs_fmt(out, outsz, "%s/%u", name, port);
	else if (guid)
		snprintf(out, outsz, "0x%016" PRIx64 "/%u", guid, port);
	else
		snprintf(out, outsz, "unknown/%u", port);
}

void fbs_switch_key(uint64_t guid, const char *name, char *key, size_t keysz)
{
	if (guid)
		fbs_fmt(key, keysz, "swu:0x%016" PRIx64, guid);
	else
		fbs_fmt(key, keysz, "swu:%s", name && *name ? name : "unknown");
}

/* The switch's name for people: its description, else GUID, else address. */
static const char *switch_label(const struct fb_subject *s, char *buf, size_t bufsz)
{
	if (s->switch_name[0])
		return s->switch_name;
	if (s->switch_guid) {
		snprintf(buf, bufsz, "0x%016" PRIx64, s->switch_guid);
		return buf;
	}
	return s->addr[0] ? s->addr : "unknown";
}

/* Where: key and label ("leaf1/3", "node003 mlx5_0/1"). A node-side event
 * is keyed by the adapter port, a switch-side one by the switch port. An
 * event that names only a host's port GUID (opensm's trap 64/65 through
 * libfabricbus_osm.so) is keyed by that port, as the node agent's are: keyed
 * as a switch port it would be "unknown/0", the same for every host. */
static void locate(const struct fb_event *ev, char *key, size_t keysz, char *label, size_t labelsz)
{
	const struct fb_subject *s = &ev->subj;
	char sw[24];
	if (ev->link_class != FB_LINK_NODE && s->port_guid && !s->switch_guid &&
	    !s->switch_name[0] && !s->addr[0]) {
		fbs_fmt(key, keysz, "pg:0x%016" PRIx64, s->port_guid);
		fbs_fmt(label, labelsz, "%s port 0x%016" PRIx64, s->node[0] ? s->node : "host",
			 s->port_guid);
		return;
	}
	if (ev->link_class == FB_LINK_NODE) {
		if (s->port_guid)
			fbs_fmt(key, keysz, "pg:0x%016" PRIx64, s->port_guid);
		else
			fbs_fmt(key, keysz, "nic:%s/%u", s->device[0] ? s->device : s->addr,
				 s->port ? s->port : (unsigned)s->ifindex);
		fbs_fmt(label, labelsz, "%s %s/%u", s->node[0] ? s->node : "node",
			 s->device[0] ? s->device : "port", s->port ? s->port : (unsigned)s->ifindex);
		return;
	}
	unsigned port = s->port ? s->port : (unsigned)s->ifindex;
	if (s->switch_guid || s->switch_name[0]) {
		fbs_port_key(s->switch_guid, s->switch_name, port, key, keysz);
	} else {
		fbs_fmt(key, keysz, "sw:%s/%u", s->addr[0] ? s->addr : "unknown", port);
	}
	fbs_fmt(label, labelsz, "%s/%u", switch_label(s, sw, sizeof(sw)), port);
}

/* The error counter an agent put first (meta counters such as threshold or
 * rate are skipped), for "error rate symbol_error leaf1/3". */
static const char *error_counter(const struct fb_event *ev)
{
	for (unsigned i = 0; i < ev->n_counters && i < FB_COUNTERS_MAX; i++) {
		unsigned id = ev->counters[i].id;
		if ((id >= FB_CTR_SYMBOL_ERROR && id <= FB_CTR_VL15_DROPPED) ||
		    id == FB_CTR_IF_IN_ERRORS || id == FB_CTR_IF_OUT_ERRORS) {
			const char *n = fb_counter_name(id);
			return n ? n : "errors";
		}
	}
	return "errors";
}

static int none(struct fbs_obs *o, const char **why, const char *w)
{
	o->op = FBS_OP_NONE;
	if (why)
		*why = w;
	return FBS_OP_NONE;
}

/* The broker's root cause (docs/topology.md): one condition per switch
 * incident, on the hosts it left without a path (its Degraded ones too with
 * DrainDegraded); an update of the incident names its hosts afresh (the
 * adapter ends it on those no longer named); one that cuts nobody off, and
 * switch_recovered (every cable back), clear it wherever it is. */
static int root_cause(const struct fb_event *ev, const struct fbs_classify_cfg *c, struct fbs_obs *o,
		      const char **why)
{
	const struct fb_subject *s = &ev->subj;
	char sw[24];
	if (!s->switch_guid && !s->switch_name[0])
		return none(o, why, "root cause names no switch");
	o->type = FBS_C_ROOT_CAUSE;
	o->root_cause = 1;
	o->with_degraded = !!c->drain_degraded;
	o->switch_guid = s->switch_guid;
	snprintf(o->switch_name, sizeof(o->switch_name), "%s", s->switch_name);
	if (s->switch_guid)
		fbs_fmt(o->key, sizeof(o->key), "rc:0x%016" PRIx64, s->switch_guid);
	else
		fbs_fmt(o->key, sizeof(o->key), "rc:%s", s->switch_name);
	const char *label = switch_label(s, sw, sizeof(sw));
	if (ev->kind == FB_KIND_SWITCH_RECOVERED) {
		fbs_fmt(o->cause, sizeof(o->cause), "switch %s has its cables back", label);
		o->op = FBS_OP_CLEAR;
		return o->op;
	}
	fbs_fmt(o->cause, sizeof(o->cause), "switch %s %s, hosts without a path", label,
		ev->kind == FB_KIND_SWITCH_FAILED ? "failed" : "degraded");
	o->drains = !!(c->drain_on & FBS_C_BIT(FBS_C_ROOT_CAUSE));
	if (!o->drains)
		return none(o, why, "root_cause is not in DrainOn");
	/* Nobody cut off (a dead spine; or, in an update, every host has a
	 * path again): the condition ends wherever the incident started it. */
	o->op = !ev->text[0] && !(o->with_degraded && s->peer_name[0]) ? FBS_OP_CLEAR : FBS_OP_START;
	return o->op;
}

int fbs_classify(const struct fb_event *ev, uint64_t event_id, const struct fbs_classify_cfg *c,
		 struct fbs_obs *o, const char **why)
{
	memset(o, 0, sizeof(*o));
	o->event_id = event_id;
	o->hold_ms = c->hold_ms;
	if (why)
		*why = NULL;
	char label[FBS_CAUSE_MAX / 2], sw[24];
	const struct fb_subject *s = &ev->subj;

	switch (ev->kind) {
	case FB_KIND_SWITCH_FAILED:
	case FB_KIND_SWITCH_DEGRADED:
	case FB_KIND_SWITCH_RECOVERED:
		return root_cause(ev, c, o, why);
	case FB_KIND_SWITCH_UNREACHABLE:
	case FB_KIND_SWITCH_REACHABLE:
		o->switch_wide = 1;
		o->type = FBS_C_SWITCH;
		o->switch_guid = s->switch_guid;
		snprintf(o->switch_name, sizeof(o->switch_name), "%s", s->switch_name);
		if (!s->switch_guid && !s->switch_name[0])
			return none(o, why, "switch event names no switch");
		fbs_switch_key(s->switch_guid, s->switch_name, o->key, sizeof(o->key));
		fbs_fmt(o->cause, sizeof(o->cause), "switch %s %s", switch_label(s, sw, sizeof(sw)),
			ev->kind == FB_KIND_SWITCH_REACHABLE ? "reachable" : "unreachable");
		if (ev->kind == FB_KIND_SWITCH_REACHABLE) {
			o->op = FBS_OP_CLEAR;
			return o->op;
		}
		o->drains = !!(c->drain_on & FBS_C_BIT(FBS_C_SWITCH));
		if (!o->drains)
			return none(o, why, "switch_unreachable is not in DrainOn");
		o->op = FBS_OP_START;
		return o->op;
	case FB_KIND_LINK_DOWN:
	case FB_KIND_LINK_UP:
	case FB_KIND_LINK_DEGRADED:
	case FB_KIND_FLAP:
	case FB_KIND_COUNTER_THRESHOLD:
	case FB_KIND_COUNTER_CLEARED:
	case FB_KIND_CONGESTION:
	case FB_KIND_CONGESTION_CLEARED:
		break;
	default:
		return none(o, why, "kind concerns no drain");
	}
	if (ev->link_class == FB_LINK_ISL || ev->link_class == FB_LINK_UPLINK)
		return none(o, why, "inter-switch or uplink port: the subnet manager reroutes");

	locate(ev, o->key, sizeof(o->key), label, sizeof(label));
	unsigned t;
	switch (ev->kind) {
	case FB_KIND_LINK_DOWN:
		o->op = FBS_OP_LINK_DOWN;
		o->type = FBS_C_LINK_DOWN;
		o->drains = !!(c->drain_on & FBS_C_BIT(FBS_C_LINK_DOWN));
		fbs_fmt(o->cause, sizeof(o->cause), "link down %s", label);
		return o->op; /* even when not draining: a flap condition needs to know */
	case FB_KIND_LINK_UP:
		o->op = FBS_OP_LINK_UP;
		o->type = FBS_C_LINK_DOWN;
		fbs_fmt(o->cause, sizeof(o->cause), "link up %s", label);
		return o->op;
	case FB_KIND_LINK_DEGRADED:
		t = FBS_C_DEGRADED;
		fbs_fmt(o->cause, sizeof(o->cause), "link degraded %s", label);
		break;
	case FB_KIND_FLAP: {
		t = FBS_C_FLAP;
		uint64_t w = fb_event_counter(ev, FB_CTR_FLAP_WINDOW_S, FLAP_WINDOW_DEFAULT_S);
		o->window_ms = (w ? w : FLAP_WINDOW_DEFAULT_S) * 1000;
		fbs_fmt(o->cause, sizeof(o->cause), "link flapping %s", label);
		break;
	}
	case FB_KIND_COUNTER_THRESHOLD:
	case FB_KIND_COUNTER_CLEARED: {
		t = FBS_C_COUNTER;
		const char *name = error_counter(ev);
		size_t kl = strlen(o->key);
		fbs_fmt(o->key + kl, sizeof(o->key) - kl, "#%s", name);
		fbs_fmt(o->cause, sizeof(o->cause), "error rate %s %s%s", name, label,
			ev->kind == FB_KIND_COUNTER_CLEARED ? " cleared" : "");
		if (ev->kind == FB_KIND_COUNTER_CLEARED) {
			o->op = FBS_OP_CLEAR;
			o->type = (uint8_t)t;
			return o->op;
		}
		break;
	}
	case FB_KIND_CONGESTION: {
		t = FBS_C_CONGESTION;
		uint64_t ppm = fb_event_counter(ev, FB_CTR_CONGESTION_PPM, 0);
		fbs_fmt(o->cause, sizeof(o->cause), "congestion %s %" PRIu64 " ppm%s", label, ppm,
			ppm < c->congestion_ppm ? " (under CongestionPpm)" : "");
		if (ppm < c->congestion_ppm) { /* under our threshold: ends ours, if any */
			o->op = FBS_OP_CLEAR;
			o->type = (uint8_t)t;
			return o->op;
		}
		if (c->congestion_for_ms > o->hold_ms)
			o->hold_ms = c->congestion_for_ms;
		break;
	}
	default: /* FB_KIND_CONGESTION_CLEARED */
		o->op = FBS_OP_CLEAR;
		o->type = FBS_C_CONGESTION;
		fbs_fmt(o->cause, sizeof(o->cause), "congestion %s cleared", label);
		return o->op;
	}
	o->type = (uint8_t)t;
	o->drains = !!(c->drain_on & FBS_C_BIT(t));
	if (!o->drains)
		return none(o, why, "condition type is not in DrainOn");
	o->op = FBS_OP_START;
	return o->op;
}

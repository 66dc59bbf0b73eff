/* rc_event.c - a root-cause verdict as an event (see rc_event.h). */
#include "rc_event.h"

#include "fb_hostlist_fmt.h"
#include "topology.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 if the first k names fit in dstsz bytes (copied), 0 if not, -ENOMEM. */
static int try_names(const char *const *names, size_t k, char *dst, size_t dstsz)
{
	char *hl = fb_hostlist_format(names, k);
	if (!hl)
		return -ENOMEM;
	size_t len = strlen(hl);
	int fits = len < dstsz;
	if (fits)
		memcpy(dst, hl, len + 1);
	free(hl);
	return fits;
}

int fb_rc_hostlist_fit(const char *const *names, size_t n, char *dst, size_t dstsz)
{
	dst[0] = '\0';
	int rc = try_names(names, n, dst, dstsz);
	if (rc)
		return rc;
	/* The most names that fit: a hostlist only grows with more names. */
	size_t lo = 0, hi = n; /* lo fits, hi does not */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		rc = try_names(names, mid, dst, dstsz);
		if (rc < 0)
			return rc;
		if (rc)
			lo = mid;
		else
			hi = mid;
	}
	rc = try_names(names, lo, dst, dstsz);
	return rc < 0 ? rc : 0;
}

int fb_rc_ranges_fit(const uint64_t *ids, size_t n, char *dst, size_t dstsz)
{
	size_t len = 0;
	dst[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && ids[j + 1] == ids[j] + 1)
			j++;
		char item[48];
		int k = j > i ? snprintf(item, sizeof(item), "%s%" PRIu64 "-%" PRIu64, len ? "," : "", ids[i], ids[j])
			      : snprintf(item, sizeof(item), "%s%" PRIu64, len ? "," : "", ids[i]);
		if (k < 0 || len + (size_t)k >= dstsz)
			return 0;
		memcpy(dst + len, item, (size_t)k + 1);
		len += (size_t)k;
		i = j + 1;
	}
	return 1;
}

static void add(struct fb_event *ev, uint16_t id, uint64_t v)
{
	(void)fb_event_add_counter(ev, id, v); /* at most 11 of FB_COUNTERS_MAX */
}

static void subject(struct fb_event *ev, uint64_t guid, const char *name)
{
	memset(ev, 0, sizeof(*ev));
	memcpy(ev->agent_id, FB_BROKER_AGENT_ID, sizeof(FB_BROKER_AGENT_ID));
	/* An Ethernet switch's key is the topology's own (topology.h), not a
	 * GUID anybody else knows: it is named by its name only. */
	int eth = (guid & 0xff00000000000000ULL) == FB_TOPO_ETH_KEY_TAG;
	ev->tech = eth ? FB_TECH_ETH : FB_TECH_IB;
	ev->subj.switch_guid = eth ? 0 : guid;
	(void)fb_strlcpy_field(ev->subj.switch_name, sizeof(ev->subj.switch_name), name);
}

int fb_rc_event_fill(const struct fb_rc_verdict *v, const struct fb_incident *inc, struct fb_event *ev)
{
	subject(ev, v->switch_guid, v->switch_name);
	int failed = v->kind == FB_RC_SWITCH_FAILED;
	ev->kind = failed ? FB_KIND_SWITCH_FAILED : FB_KIND_SWITCH_DEGRADED;
	/* Hosts without a path are what a scheduler acts on. */
	ev->severity = failed || v->n_no_path ? FB_SEV_CRITICAL : FB_SEV_WARNING;
	int a = fb_rc_hostlist_fit(v->no_path, v->n_no_path, ev->text, sizeof(ev->text));
	int b = fb_rc_hostlist_fit(v->degraded, v->n_degraded, ev->subj.peer_name, sizeof(ev->subj.peer_name));
	if (a < 0 || b < 0)
		return -ENOMEM;
	int c = fb_rc_ranges_fit(v->symptoms, v->n_symptoms, ev->subj.device, sizeof(ev->subj.device));
	add(ev, FB_CTR_EVENT_GROUP_ID, inc->group);
	add(ev, FB_CTR_INCIDENT_UPDATE, inc->updates);
	add(ev, FB_CTR_SYMPTOMS, v->n_symptoms + v->dropped);
	if (v->n_symptoms) {
		add(ev, FB_CTR_FIRST_SYMPTOM_ID, v->symptoms[0]);
		add(ev, FB_CTR_LAST_SYMPTOM_ID, v->symptoms[v->n_symptoms - 1]);
	}
	add(ev, FB_CTR_HOSTS_NO_PATH, v->n_no_path);
	add(ev, FB_CTR_HOSTS_DEGRADED, v->n_degraded);
	add(ev, FB_CTR_CABLES, v->cables);
	add(ev, FB_CTR_CABLES_DOWN, v->cables_down);
	if (!a || !b || !c || v->dropped)
		add(ev, FB_CTR_LISTS_CUT, 1);
	return 0;
}

void fb_rc_event_recovered(const struct fb_incident *inc, const char *switch_name, size_t cables,
			   struct fb_event *ev)
{
	subject(ev, inc->switch_guid, switch_name);
	ev->kind = FB_KIND_SWITCH_RECOVERED;
	ev->severity = FB_SEV_OK;
	add(ev, FB_CTR_EVENT_GROUP_ID, inc->group);
	add(ev, FB_CTR_INCIDENT_UPDATE, inc->updates + 1);
	add(ev, FB_CTR_CABLES, cables);
	add(ev, FB_CTR_CABLES_DOWN, 0);
}

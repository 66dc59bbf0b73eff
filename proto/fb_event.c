#include "fb_event.h"

#include "fb_err.h"

#include <string.h>
#include <strings.h>
#include <time.h>

static const char kind_names[FB_KIND__END][FB_NAME_SLOT] = {
	[FB_KIND_LINK_DOWN] = "link_down",
	[FB_KIND_LINK_UP] = "link_up",
	[FB_KIND_LINK_DEGRADED] = "link_degraded",
	[FB_KIND_PORT_STATE] = "port_state",
	[FB_KIND_COUNTER_THRESHOLD] = "counter_threshold",
	[FB_KIND_COUNTER_CLEARED] = "counter_cleared",
	[FB_KIND_CONGESTION] = "congestion",
	[FB_KIND_CONGESTION_CLEARED] = "congestion_cleared",
	[FB_KIND_FLAP] = "flap",
	[FB_KIND_SWITCH_UNREACHABLE] = "switch_unreachable",
	[FB_KIND_SWITCH_REACHABLE] = "switch_reachable",
	[FB_KIND_INVENTORY] = "inventory",
	[FB_KIND_TOPOLOGY] = "topology",
	[FB_KIND_TEST] = "test",
	[FB_KIND_ACTION] = "action",
	[FB_KIND_SWITCH_FAILED] = "switch_failed",
	[FB_KIND_SWITCH_DEGRADED] = "switch_degraded",
	[FB_KIND_SWITCH_RECOVERED] = "switch_recovered",
	[FB_KIND_FLAP_SUPPRESSED] = "flap_suppressed",
	[FB_KIND_FLAP_STABLE] = "flap_stable",
	[FB_KIND_EVENTS_SUPPRESSED] = "events_suppressed",
};

static const char sev_names[FB_SEV__END][FB_NAME_SLOT] = { "OK", "Warning", "Critical" };

static const char class_names[FB_LINK__END][FB_NAME_SLOT] = {
	[FB_LINK_UNKNOWN] = "unknown", [FB_LINK_HOST] = "host", [FB_LINK_ISL] = "isl",
	[FB_LINK_NODE] = "node", [FB_LINK_UPLINK] = "uplink",
};

static const char tech_names[FB_TECH__END][FB_NAME_SLOT] = { "unknown", "infiniband", "ethernet" };

static const char counter_names[FB_CTR__END][FB_NAME_SLOT] = {
	[FB_CTR_SYMBOL_ERROR] = "symbol_error",
	[FB_CTR_LINK_ERROR_RECOVERY] = "link_error_recovery",
	[FB_CTR_LINK_DOWNED] = "link_downed",
	[FB_CTR_RCV_ERRORS] = "rcv_errors",
	[FB_CTR_RCV_REMOTE_PHYS_ERRORS] = "rcv_remote_phys_errors",
	[FB_CTR_RCV_SWITCH_RELAY_ERRORS] = "rcv_switch_relay_errors",
	[FB_CTR_XMIT_DISCARDS] = "xmit_discards",
	[FB_CTR_XMIT_CONSTRAINT_ERRORS] = "xmit_constraint_errors",
	[FB_CTR_RCV_CONSTRAINT_ERRORS] = "rcv_constraint_errors",
	[FB_CTR_LOCAL_LINK_INTEGRITY_ERRORS] = "local_link_integrity_errors",
	[FB_CTR_EXCESSIVE_BUFFER_OVERRUN] = "excessive_buffer_overrun",
	[FB_CTR_VL15_DROPPED] = "vl15_dropped",
	[FB_CTR_XMIT_WAIT] = "xmit_wait",
	[FB_CTR_XMIT_DATA] = "xmit_data",
	[FB_CTR_RCV_DATA] = "rcv_data",
	[FB_CTR_XMIT_PKTS] = "xmit_pkts",
	[FB_CTR_RCV_PKTS] = "rcv_pkts",
	[FB_CTR_IF_IN_ERRORS] = "if_in_errors",
	[FB_CTR_IF_OUT_ERRORS] = "if_out_errors",
	[FB_CTR_FLAP_COUNT] = "flap_count",
	[FB_CTR_FLAP_WINDOW_S] = "flap_window_s",
	[FB_CTR_CONGESTION_PPM] = "congestion_ppm",
	[FB_CTR_INTERVAL_MS] = "interval_ms",
	[FB_CTR_THRESHOLD] = "threshold",
	[FB_CTR_RATE_PER_S] = "rate_per_s",
	[FB_CTR_LINK_SPEED_MBPS] = "link_speed_mbps",
	[FB_CTR_LINK_WIDTH] = "link_width",
	[FB_CTR_CAUSE_EVENT_ID] = "cause_event_id",
	[FB_CTR_NODE_COUNT] = "node_count",
	[FB_CTR_NODE_LIMIT] = "node_limit",
	[FB_CTR_IF_IN_DISCARDS] = "if_in_discards",
	[FB_CTR_IF_OUT_DISCARDS] = "if_out_discards",
	[FB_CTR_RESYNC] = "resync",
	[FB_CTR_EVENT_GROUP_ID] = "event_group_id",
	[FB_CTR_SYMPTOMS] = "symptoms",
	[FB_CTR_FIRST_SYMPTOM_ID] = "first_symptom_id",
	[FB_CTR_LAST_SYMPTOM_ID] = "last_symptom_id",
	[FB_CTR_HOSTS_NO_PATH] = "hosts_no_path",
	[FB_CTR_HOSTS_DEGRADED] = "hosts_degraded",
	[FB_CTR_CABLES] = "cables",
	[FB_CTR_CABLES_DOWN] = "cables_down",
	[FB_CTR_INCIDENT_UPDATE] = "incident_update",
	[FB_CTR_LISTS_CUT] = "lists_cut",
	[FB_CTR_SUPPRESSED] = "suppressed",
	[FB_CTR_QUIET] = "quiet",
	[FB_CTR_FIRST_SUPPRESSED_ID] = "first_suppressed_id",
	[FB_CTR_LAST_SUPPRESSED_ID] = "last_suppressed_id",
	[FB_CTR_RATE_LIMIT] = "rate_limit",
	[FB_CTR_LIMIT_LIFTED] = "limit_lifted",
	[FB_CTR_DEDUP_SOURCES] = "dedup_sources",
	[FB_CTR_DEDUP_REPORTS] = "dedup_reports",
};

static const char quiet_names[FB_QUIET__END][FB_NAME_SLOT] = {
	[FB_QUIET_SYMPTOM] = "symptom", [FB_QUIET_DUPLICATE] = "duplicate",
	[FB_QUIET_RATE_LIMITED] = "rate_limited", [FB_QUIET_FLAP] = "flap",
};

/* Names live in NUL-padded slots (fb_event.h, FB_NAME_SLOT); an empty
 * slot is a value without a name. */
static const char *name_of(const char (*names)[FB_NAME_SLOT], unsigned n, unsigned v)
{
	return v < n && names[v][0] ? names[v] : NULL;
}

static int parse_of(const char (*names)[FB_NAME_SLOT], unsigned n, const char *s)
{
	if (!s)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (names[i][0] && strcasecmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

#define NAMES(a) a, (unsigned)(sizeof(a) / sizeof(a[0]))

const char *fb_kind_name(unsigned v) { return name_of(NAMES(kind_names), v); }
const char *fb_severity_name(unsigned v) { return name_of(NAMES(sev_names), v); }
const char *fb_link_class_name(unsigned v) { return name_of(NAMES(class_names), v); }
const char *fb_tech_name(unsigned v) { return name_of(NAMES(tech_names), v); }
const char *fb_counter_name(unsigned v) { return name_of(NAMES(counter_names), v); }
int fb_kind_parse(const char *s) { return parse_of(NAMES(kind_names), s); }
int fb_severity_parse(const char *s) { return parse_of(NAMES(sev_names), s); }
int fb_link_class_parse(const char *s) { return parse_of(NAMES(class_names), s); }
int fb_tech_parse(const char *s) { return parse_of(NAMES(tech_names), s); }
int fb_counter_parse(const char *s) { return parse_of(NAMES(counter_names), s); }

int fb_event_jobs_check(const char *s, size_t n, const char **why)
{
	const char *w = NULL;
	if (n >= FB_JOBS_MAX)
		w = "jobs: longer than 95 bytes";
	else if (n && (s[0] == ',' || s[n - 1] == ','))
		w = "jobs: leading or trailing comma";
	for (size_t i = 0; !w && i < n; i++) {
		if (s[i] == ',' && s[i + 1] == ',')
			w = "jobs: empty job id between commas";
		else if (s[i] != ',' && (s[i] < '0' || s[i] > '9'))
			w = "jobs: only decimal job ids and commas allowed";
	}
	if (why)
		*why = w;
	return w ? FB_EMALFORMED : 0;
}

int fb_event_check_fixed(const struct fb_event *ev, const char **why)
{
	const char *w = NULL;
	if (!fb_kind_name(ev->kind))
		w = "kind: unknown value";
	else if (ev->severity >= FB_SEV__END)
		w = "severity: must be OK, Warning or Critical";
	else if (ev->link_class >= FB_LINK__END)
		w = "link_class: unknown value";
	else if (ev->tech >= FB_TECH__END)
		w = "tech: unknown value";
	else if (ev->seq == 0)
		w = "seq: must be at least 1";
	else if (ev->n_counters > FB_COUNTERS_MAX)
		w = "counters: too many";
	if (why)
		*why = w;
	return w ? FB_EMALFORMED : 0;
}

int fb_event_check(const struct fb_event *ev, const char **why)
{
	if (fb_event_check_fixed(ev, why))
		return FB_EMALFORMED;
	const char *w = NULL;
	const char *jobs_end = memchr(ev->jobs, 0, sizeof(ev->jobs));
	if (!jobs_end)
		w = "jobs: longer than 95 bytes";
	else
		(void)fb_event_jobs_check(ev->jobs, (size_t)(jobs_end - ev->jobs), &w);
	if (why)
		*why = w;
	return w ? FB_EMALFORMED : 0;
}

int fb_event_add_counter(struct fb_event *ev, uint16_t id, uint64_t value)
{
	if (ev->n_counters >= FB_COUNTERS_MAX)
		return FB_EFULL;
	ev->counters[ev->n_counters].id = id;
	ev->counters[ev->n_counters].value = value;
	ev->n_counters++;
	return 0;
}

uint64_t fb_event_counter(const struct fb_event *ev, uint16_t id, uint64_t def)
{
	for (unsigned i = 0; i < ev->n_counters && i < FB_COUNTERS_MAX; i++)
		if (ev->counters[i].id == id)
			return ev->counters[i].value;
	return def;
}

const char *fb_quiet_name(unsigned reason)
{
	return name_of(NAMES(quiet_names), reason);
}

unsigned fb_event_quiet(const struct fb_event *ev)
{
	uint64_t v = fb_event_counter(ev, FB_CTR_QUIET, 0);
	return v > 255 ? 255u : (unsigned)v;
}

int fb_event_set_quiet(struct fb_event *ev, unsigned reason)
{
	if (reason == FB_QUIET_NONE || reason >= FB_QUIET__END)
		return FB_EMALFORMED;
	for (unsigned i = 0; i < ev->n_counters && i < FB_COUNTERS_MAX; i++) {
		if (ev->counters[i].id != FB_CTR_QUIET)
			continue;
		if (!ev->counters[i].value || reason < ev->counters[i].value)
			ev->counters[i].value = reason;
		return 0;
	}
	return fb_event_add_counter(ev, FB_CTR_QUIET, reason);
}

int fb_event_clear_quiet(struct fb_event *ev)
{
	unsigned n = ev->n_counters < FB_COUNTERS_MAX ? ev->n_counters : FB_COUNTERS_MAX, out = 0;
	for (unsigned i = 0; i < n; i++)
		if (ev->counters[i].id != FB_CTR_QUIET)
			ev->counters[out++] = ev->counters[i];
	int had = out != n;
	ev->n_counters = (uint8_t)out;
	return had;
}

_Static_assert(FB_FABRIC_MAX == 32, "FB_FABRIC_NAME_RULE says 1..31 bytes");

int fb_fabric_name_valid(const char *s)
{
	size_t n = strlen(s);
	return n > 0 && n < FB_FABRIC_MAX && !strpbrk(s, FB_FABRIC_NAME_BAD);
}

int fb_strlcpy_field(char *dst, size_t dstsz, const char *s)
{
	size_t n = strlen(s);
	if (n >= dstsz) {
		dst[0] = '\0';
		return FB_ETOOBIG;
	}
	memcpy(dst, s, n + 1);
	return 0;
}

uint64_t fb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

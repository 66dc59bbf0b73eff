/* fb_osm_plugin.c - libfabricbus_osm.so, an OpenSM event plugin that reports
 * what the subnet manager sees (traps, PerfMgr error deltas) to fabricbusd.
 *
 * opensm calls report() from several of its threads at once and must never
 * wait on us: report() only turns the event into an fb_event, pushes it on a
 * bounded queue (osm_queue.c: drop and count when full) and wakes the
 * plugin's own thread. That thread runs a libevent base with one fb_session
 * to the broker, so reconnects, acks and resends are the session's business.
 *
 * Options (event_plugin_options, space separated key=value):
 *   broker=HOST:PORT  agent_id=ID  fabric=NAME  queue=N
 * The mapping from OpenSM events to fabricbus kinds is in docs/agents.md.
 */
#include "fb_addr.h"
#include "fb_err.h"
#include "fb_event.h"
#include "fb_log.h"
#include "fb_session.h"
#include "fb_wire.h"
#include "osm_queue.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <opensm/osm_event_plugin.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_version.h>

#define PLUGIN "fabricbus_osm"
#define DEFAULT_BROKER "127.0.0.1:7411"
#define QUEUE_DEFAULT 4096
#define SESSION_BUFFER 8192
#define FLUSH_WAIT_MS 2000 /* bounded wait for acks in delete() */
#define POP_BATCH 64

struct fb_osm {
	osm_log_t *log; /* opensm's, thread safe */
	char host[256];
	int port;
	char agent_id[FB_AGENT_ID_MAX];
	char fabric[FB_FABRIC_MAX];
	size_t queue_cap;

	struct osm_queue q;
	atomic_int subnet_up_seen; /* only the first SUBNET_UP is forwarded */
	atomic_ulong ignored;      /* events with no mapping, or all-zero deltas */

	pthread_t thread;
	struct event_base *base;
	struct event *wake, *stop;
	struct fb_session *s;
	uint64_t session_dropped;
};

/* ---- logging: into osm.log, which is where an operator looks ------------- */

static void plog(struct fb_osm *p, osm_log_level_t lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void plog(struct fb_osm *p, osm_log_level_t lvl, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (p->log)
		osm_log(p->log, lvl, PLUGIN ": %s\n", line);
	else
		fprintf(stderr, PLUGIN ": %s\n", line);
}

/* ---- options ------------------------------------------------------------- */

/* A bad option is logged and left at its default: opensm runs on either way,
 * and refusing the plugin would only hide the events. */
static void parse_options(struct fb_osm *p, const char *opts)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", opts ? opts : "");
	char *save = NULL;
	for (char *tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq) {
			plog(p, OSM_LOG_ERROR, "event_plugin_options: '%s' is not key=value, ignored",
			     tok);
			continue;
		}
		*eq = '\0';
		const char *k = tok, *v = eq + 1;
		if (!strcmp(k, "broker")) {
			char host[sizeof(p->host)];
			int port;
			if (fb_addr_parse(v, "127.0.0.1", host, sizeof(host), &port) == 0) {
				memcpy(p->host, host, sizeof(host));
				p->port = port;
			} else {
				plog(p, OSM_LOG_ERROR, "event_plugin_options: bad broker '%s' (want "
				     "HOST:PORT), using %s:%d", v, p->host, p->port);
			}
		} else if (!strcmp(k, "agent_id")) {
			if (fb_agent_id_valid(v))
				snprintf(p->agent_id, sizeof(p->agent_id), "%s", v);
			else
				plog(p, OSM_LOG_ERROR, "event_plugin_options: bad agent_id '%s' (want "
				     "1..%d of [A-Za-z0-9._:@-]), using '%s'", v, FB_AGENT_ID_MAX - 1,
				     p->agent_id);
		} else if (!strcmp(k, "fabric")) {
			if (fb_fabric_name_valid(v))
				snprintf(p->fabric, sizeof(p->fabric), "%s", v);
			else
				plog(p, OSM_LOG_ERROR, "event_plugin_options: bad fabric '%s' (want "
				     "%s), using '%s'", v, FB_FABRIC_NAME_RULE, p->fabric);
		} else if (!strcmp(k, "queue")) {
			char *end;
			unsigned long n = strtoul(v, &end, 10);
			if (*v && !*end && n >= 16 && n <= 1000000)
				p->queue_cap = n;
			else
				plog(p, OSM_LOG_ERROR, "event_plugin_options: bad queue '%s' (want "
				     "16..1000000), using %zu", v, p->queue_cap);
		} else {
			plog(p, OSM_LOG_ERROR, "event_plugin_options: unknown key '%s', ignored", k);
		}
	}
}

/* ---- the plugin's thread ------------------------------------------------- */

static void drain(struct fb_osm *p)
{
	struct fb_event evs[POP_BATCH];
	size_t n;
	while ((n = osm_queue_pop(&p->q, evs, POP_BATCH)) > 0) {
		for (size_t i = 0; i < n; i++) {
			int rc = fb_session_submit(p->s, &evs[i]);
			if (rc != 0 && p->session_dropped++ % 1000 == 0)
				plog(p, OSM_LOG_ERROR, "dropped %s event: %s (%" PRIu64 " so far; is "
				     "fabricbusd at %s:%d up?)", fb_kind_name(evs[i].kind),
				     rc == FB_EFULL ? "session buffer full" : fb_strerror(rc),
				     p->session_dropped, p->host, p->port);
		}
	}
	fb_session_flush(p->s);
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	drain(arg);
}

static void on_err(void *arg, int code, const char *text)
{
	plog(arg, OSM_LOG_INFO, "session: %s (code %d)", text, code);
}

/* The session's drain is over: everything acked, or the wait ran out. */
static void on_drained(void *arg, size_t unacked)
{
	struct fb_osm *p = arg;
	if (unacked)
		plog(p, OSM_LOG_ERROR, "stopping with %zu events not acked by %s:%d", unacked,
		     p->host, p->port);
	event_base_loopbreak(p->base);
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_osm *p = arg;
	drain(p);
	if (fb_session_drain(p->s, FLUSH_WAIT_MS, on_drained, p) != 0)
		event_base_loopbreak(p->base); /* out of memory: stop without waiting */
}

static void *thread_main(void *arg)
{
	struct fb_osm *p = arg;
	int rc = fb_session_start(p->s);
	if (rc)
		plog(p, OSM_LOG_ERROR, "cannot start a session to %s:%d: %s", p->host, p->port,
		     fb_strerror(rc));
	event_base_dispatch(p->base);
	return NULL;
}

/* ---- opensm events -> fb_events ------------------------------------------ */

static void ev_init(struct fb_osm *p, struct fb_event *ev, uint8_t kind, uint8_t sev)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = fb_now_ns();
	ev->kind = kind;
	ev->severity = sev;
	ev->tech = FB_TECH_IB;
	memcpy(ev->subj.fabric, p->fabric, sizeof(ev->subj.fabric));
}

/* Traps 128 (a switch's link state changed: carries only its LID) and 64/65
 * (a GID came into / went out of service: carries the port GUID). */
static int map_trap(struct fb_osm *p, const ib_mad_notice_attr_t *ntc, struct fb_event *ev)
{
	if (!ib_notice_is_generic(ntc))
		return 0;
	unsigned trap = cl_ntoh16(ntc->g_or_v.generic.trap_num);
	unsigned issuer = cl_ntoh16(ntc->issuer_lid);
	if (trap == 128) {
		ev_init(p, ev, FB_KIND_PORT_STATE, FB_SEV_WARNING);
		unsigned sw_lid = cl_ntoh16(ntc->data_details.ntc_128.sw_lid);
		ev->subj.lid = (uint16_t)(sw_lid ? sw_lid : issuer);
		/* opensm fills the issuer GID with the switch's port GUID when it
		 * knows the sender. */
		ev->subj.switch_guid = cl_ntoh64(ntc->issuer_gid.unicast.interface_id);
		snprintf(ev->text, sizeof(ev->text),
			 "trap 128 (link state change) from LID %u: poll its ports", ev->subj.lid);
		return 1;
	}
	if (trap == 64 || trap == 65) {
		int up = trap == 64;
		ev_init(p, ev, up ? FB_KIND_LINK_UP : FB_KIND_LINK_DOWN,
			up ? FB_SEV_OK : FB_SEV_WARNING);
		ev->link_class = FB_LINK_HOST;
		ev->subj.port_guid = cl_ntoh64(ntc->data_details.ntc_64_67.gid.unicast.interface_id);
		snprintf(ev->text, sizeof(ev->text), "trap %u: port GUID 0x%016" PRIx64 " %s service",
			 trap, ev->subj.port_guid, up ? "in" : "out of");
		return 1;
	}
	return 0;
}

/* PerfMgr hands deltas since its last reading of this port, for every port
 * every sweep: only non-zero error deltas make an event. */
static int map_port_errors(struct fb_osm *p, const osm_epi_pe_event_t *pe, struct fb_event *ev)
{
	const struct { uint16_t id; uint64_t v; } c[] = {
		{ FB_CTR_SYMBOL_ERROR, pe->symbol_err_cnt },
		{ FB_CTR_LINK_ERROR_RECOVERY, pe->link_err_recover },
		{ FB_CTR_LINK_DOWNED, pe->link_downed },
		{ FB_CTR_RCV_ERRORS, pe->rcv_err },
		{ FB_CTR_RCV_REMOTE_PHYS_ERRORS, pe->rcv_rem_phys_err },
		{ FB_CTR_RCV_SWITCH_RELAY_ERRORS, pe->rcv_switch_relay_err },
		{ FB_CTR_XMIT_DISCARDS, pe->xmit_discards },
		{ FB_CTR_XMIT_CONSTRAINT_ERRORS, pe->xmit_constraint_err },
		{ FB_CTR_RCV_CONSTRAINT_ERRORS, pe->rcv_constraint_err },
		{ FB_CTR_LOCAL_LINK_INTEGRITY_ERRORS, pe->link_integrity },
		{ FB_CTR_EXCESSIVE_BUFFER_OVERRUN, pe->buffer_overrun },
		{ FB_CTR_VL15_DROPPED, pe->vl15_dropped },
	};
	ev_init(p, ev, FB_KIND_COUNTER_THRESHOLD, FB_SEV_WARNING);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (c[i].v)
			fb_event_add_counter(ev, c[i].id, c[i].v); /* 12 + 2 < FB_COUNTERS_MAX */
	if (ev->n_counters == 0)
		return 0;
	uint64_t secs = pe->time_diff_s > 0 ? (uint64_t)pe->time_diff_s : 0;
	fb_event_add_counter(ev, FB_CTR_INTERVAL_MS, secs * 1000);
	fb_event_add_counter(ev, FB_CTR_THRESHOLD, 1);
	ev->subj.switch_guid = pe->port_id.node_guid; /* the node's: a switch or a CA */
	ev->subj.port = pe->port_id.port_num;
	char name[sizeof(pe->port_id.node_name) + 1];
	memcpy(name, pe->port_id.node_name, sizeof(pe->port_id.node_name));
	name[sizeof(pe->port_id.node_name)] = '\0';
	/* Node descriptions are not promised to be UTF-8: keep printable ASCII. */
	size_t j = 0;
	for (size_t i = 0; name[i] && j < sizeof(ev->subj.switch_name) - 1; i++)
		if (name[i] >= 0x20 && name[i] < 0x7f)
			ev->subj.switch_name[j++] = name[i];
	ev->subj.switch_name[j] = '\0';
	snprintf(ev->text, sizeof(ev->text), "PerfMgr: error counters rose over %" PRIu64 " s",
		 secs);
	return 1;
}

static void report(void *data, osm_epi_event_id_t id, void *event_data)
{
	struct fb_osm *p = data;
	struct fb_event ev;
	int have = 0;
	switch (id) {
	case OSM_EVENT_ID_TRAP:
		have = event_data && map_trap(p, event_data, &ev);
		break;
	case OSM_EVENT_ID_PORT_ERRORS:
		have = event_data && map_port_errors(p, event_data, &ev);
		break;
	case OSM_EVENT_ID_SUBNET_UP:
		/* Every heavy sweep ends in SUBNET_UP, and its causes arrive as
		 * traps: only the first one says "the chain works". */
		if (atomic_exchange(&p->subnet_up_seen, 1) == 0) {
			ev_init(p, &ev, FB_KIND_TEST, FB_SEV_OK);
			snprintf(ev.text, sizeof(ev.text), "%s: subnet up, " PLUGIN " reporting",
				 OSM_VERSION);
			have = 1;
		}
		break;
	default:
		break;
	}
	if (!have) {
		atomic_fetch_add(&p->ignored, 1);
		return;
	}
	/* event_active takes the base's lock for a moment only; the thread never
	 * holds it across I/O. */
	if (osm_queue_push(&p->q, &ev) == 1)
		event_active(p->wake, EV_READ, 0);
}

/* ---- create / delete ----------------------------------------------------- */

static void plugin_free(struct fb_osm *p)
{
	if (p->s)
		fb_session_free(p->s);
	if (p->wake)
		event_free(p->wake);
	if (p->stop)
		event_free(p->stop);
	if (p->base)
		event_base_free(p->base);
	osm_queue_destroy(&p->q);
	free(p);
}

static void *create(struct osm_opensm *osm)
{
	struct fb_osm *p = calloc(1, sizeof(*p));
	if (!p) {
		fprintf(stderr, PLUGIN ": out of memory\n");
		return NULL;
	}
	p->log = osm ? &osm->log : NULL;
	p->queue_cap = QUEUE_DEFAULT;
	snprintf(p->fabric, sizeof(p->fabric), "IB");
	fb_addr_parse(DEFAULT_BROKER, NULL, p->host, sizeof(p->host), &p->port);
	fb_session_default_agent_id("osm", p->agent_id, sizeof(p->agent_id));
	parse_options(p, osm ? osm->subn.opt.event_plugin_options : NULL);
	fb_log_init(PLUGIN, 0, FB_LOG_INFO); /* fb_session's own lines: opensm's stderr */

	/* Before the base exists: report() calls event_active from opensm's
	 * threads. Process-wide in libevent, and opensm does not use it. */
	struct fb_session_opts o = { p->host, p->port, p->agent_id, SESSION_BUFFER, 512, 5000,
				     NULL, NULL, NULL };
	const char *what = NULL;
	if (osm_queue_init(&p->q, p->queue_cap))
		what = "queue";
	else if (evthread_use_pthreads() != 0 || !(p->base = event_base_new()))
		what = "libevent base";
	else if (!(p->wake = event_new(p->base, -1, EV_PERSIST, on_wake, p)) ||
		 !(p->stop = event_new(p->base, -1, 0, on_stop, p)) ||
		 event_add(p->wake, NULL)) /* also keeps the loop alive */
		what = "events";
	else if (fb_session_new(p->base, &o, &p->s))
		what = "session";
	if (!what) {
		fb_session_set_callbacks(p->s, NULL, on_err, p);
		int rc = pthread_create(&p->thread, NULL, thread_main, p);
		if (rc)
			what = strerror(rc);
	}
	if (what) {
		plog(p, OSM_LOG_ERROR, "cannot start (%s): the plugin is not loaded", what);
		plugin_free(p);
		return NULL;
	}
	plog(p, OSM_LOG_INFO, "agent '%s' reporting fabric '%s' to %s:%d", p->agent_id,
	     p->fabric, p->host, p->port);
	return p;
}

static void delete(void *data)
{
	struct fb_osm *p = data;
	if (!p)
		return;
	event_active(p->stop, EV_READ, 0);
	pthread_join(p->thread, NULL); /* bounded by FLUSH_WAIT_MS */
	struct fb_session_stats st;
	fb_session_get_stats(p->s, &st);
	uint64_t pushed, qdropped;
	osm_queue_stats(&p->q, &pushed, &qdropped);
	plog(p, OSM_LOG_INFO, "stopped: %" PRIu64 " events queued, %" PRIu64 " acked, %" PRIu64
	     " dropped (queue full), %" PRIu64 " dropped (session buffer full), %lu not mapped",
	     pushed, st.acked, qdropped, p->session_dropped, atomic_load(&p->ignored));
	plugin_free(p);
}

__attribute__((visibility("default"))) osm_event_plugin_t osm_event_plugin = {
	.osm_version = OSM_VERSION,
	.create = create,
	.delete = delete,
	.report = report,
};

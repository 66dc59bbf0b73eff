/* fb_agent.c - the skeleton every fabricbus agent program shares: see
 * fb_agent.h. */
#include "fb_agent.h"

#include "fb_addr.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_metrics.h"
#include "fb_metrics_http.h"
#include "fb_session.h"
#include "fb_usage.h"

#include <event2/thread.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEARTBEAT_MS 5000
#define BATCH_EVENTS 512
#define RECONNECT_CHECK_MS 1000  /* how often the loop looks for a reconnect */

void fb_agent_init(struct fb_agent *ag, const char *prog, const char *id_prefix)
{
	ag->prog = prog;
	ag->resync = 1;
	ag->log_level = FB_LOG_INFO;
	ag->broker_arg = FB_AGENT_DEFAULT_BROKER;
	fb_log_init(prog, 0, FB_LOG_INFO);
	fb_session_default_agent_id(id_prefix, ag->agent_id, sizeof(ag->agent_id));
}

int fb_agent_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int fb_agent_opt_uint(const struct fb_agent *ag, const char *name, const char *unit, const char *arg,
		      unsigned lo, unsigned hi, unsigned *out)
{
	if (fb_agent_parse_uint(arg, lo, hi, out) == 0)
		return 0;
	if (unit)
		return fb_usage_error(ag->prog, "bad --%s '%s': want %s, %u..%u", name, arg, unit, lo, hi);
	return fb_usage_error(ag->prog, "bad --%s '%s': want %u..%u", name, arg, lo, hi);
}

/* -f is --fabric on the agents, but -f FILE is the config file of
 * fabricbusd and the adapters: a fabric named like a file is most likely
 * that slip, and would end up in every event's Redfish path. */
static int opt_fabric(struct fb_agent *ag, const char *v)
{
	if (fb_fabric_name_valid(v)) {
		ag->fabric = v;
		return 0;
	}
	size_t n = strlen(v);
	int file_like = strchr(v, '/') || (n >= 5 && !strcmp(v + n - 5, ".conf"));
	return fb_usage_error(ag->prog, "bad --fabric '%s': want a fabric name of %s%s", v,
			      FB_FABRIC_NAME_RULE, ag->has_config && file_like ?
			      "; did you mean --config FILE? (-f is --fabric here)" : "");
}

int fb_agent_opt(struct fb_agent *ag, int c, char **argv)
{
	switch (c) {
	case 'b': ag->broker_arg = optarg; return 0;
	case 'a':
		if (!fb_agent_id_valid(optarg))
			return fb_usage_error(ag->prog, "bad --agent-id '%s': want 1..%d chars of "
					      "[A-Za-z0-9._:@-]", optarg, FB_AGENT_ID_MAX - 1);
		snprintf(ag->agent_id, sizeof(ag->agent_id), "%s", optarg);
		return 0;
	case 'f': return opt_fabric(ag, optarg);
	case 'l':
		if ((ag->log_level = fb_log_level_parse(optarg)) < 0)
			return fb_usage_error(ag->prog, "bad --log-level '%s': want error, warn, info "
					      "or debug", optarg);
		return 0;
	case FB_AGENT_O_MAP: ag->map_arg = optarg; return 0;
	case FB_AGENT_O_NO_RESYNC: ag->resync = 0; return 0;
	case FB_AGENT_O_MAP_TOKEN: ag->map_token_arg = optarg; return 0;
	case FB_AGENT_O_MAP_TLS_CA: ag->map_tls_ca_arg = optarg; return 0;
	case FB_AGENT_O_METRICS: ag->metrics_arg = optarg; return 0;
	case FB_AGENT_O_TLS_CA: ag->tls_ca = optarg; return 0;
	case FB_AGENT_O_TLS_CERT: ag->tls_cert = optarg; return 0;
	case FB_AGENT_O_TLS_KEY: ag->tls_key = optarg; return 0;
	case 'h': ag->help(); return -1;
	case ':': return fb_usage_error(ag->prog, "%s needs a value", argv[optind - 1]);
	default: return fb_usage_error(ag->prog, "unknown option '%s'", argv[optind - 1]);
	}
}

int fb_agent_getopt(struct fb_agent *ag, int argc, char **argv, const char *shortopts,
		    const struct option *lo, int (*own)(void *arg, int c), void *arg)
{
	int c, r;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		r = own(arg, c);
		if (r == FB_AGENT_OPT_NOT_MINE)
			r = fb_agent_opt(ag, c, argv);
		if (r != 0)
			return r;
	}
	return fb_agent_opts_done(ag, argc, argv);
}

int fb_agent_opts_done(struct fb_agent *ag, int argc, char **argv)
{
	if (optind < argc)
		return fb_usage_error(ag->prog, "unexpected argument '%s'", argv[optind]);
	if (fb_addr_parse(ag->broker_arg, "127.0.0.1", ag->host, sizeof(ag->host), &ag->port) != 0)
		return fb_usage_error(ag->prog, "bad --broker '%s': want HOST:PORT, [IPV6]:PORT or "
				      ":PORT", ag->broker_arg);
	if (ag->map_arg && fb_addr_parse(ag->map_arg, "127.0.0.1", ag->map_host,
					 sizeof(ag->map_host), &ag->map_port) != 0)
		return fb_usage_error(ag->prog, "bad --map '%s': want HOST:PORT, [IPV6]:PORT or :PORT",
				      ag->map_arg);
	char mhost[256];
	int mport;
	if (ag->metrics_arg && fb_addr_parse(ag->metrics_arg, "127.0.0.1", mhost, sizeof(mhost),
					     &mport) != 0)
		return fb_usage_error(ag->prog, "bad --metrics '%s': want HOST:PORT, [IPV6]:PORT or "
				      ":PORT", ag->metrics_arg);
	if ((ag->tls_cert || ag->tls_key) && !ag->tls_ca)
		return fb_usage_error(ag->prog, "--tls-cert and --tls-key need --tls-ca (the CA of the "
				      "broker's certificate)");
	if (!ag->tls_cert != !ag->tls_key)
		return fb_usage_error(ag->prog, "--tls-cert and --tls-key go together");
	if (!ag->map_arg) {
		snprintf(ag->map_host, sizeof(ag->map_host), "%s", ag->host);
		ag->map_port = FB_AGENT_MAP_PORT;
	}
	char why[512];
	if (fb_http_auth_init(&ag->map_auth, ag->map_token_arg, ag->map_tls_ca_arg, why,
			      sizeof(why)) != 0)
		return fb_usage_error(ag->prog, "%s", why);
	fb_log_set_level(ag->log_level);
	return 0;
}

/* Poll rounds: a few ms (a node's sysfs) to seconds (a large IB fabric). */
static const double poll_bounds[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
				      0.25,  0.5,    1.0,   2.5,  5.0,   10.0, 30.0 };

#define AG(field) offsetof(struct fb_agent, field)
static const struct fb_metric_def agent_series[] = {
	{ FB_METRIC_COUNTER, "fabricbus_agent_events_sent_total",
	  "Events the agent handed to its broker session.", NULL, AG(m_submitted) },
	{ FB_METRIC_COUNTER, "fabricbus_agent_events_dropped_total",
	  "Events the session refused (its buffer was full).", NULL, AG(m_dropped) },
	{ FB_METRIC_COUNTER, "fabricbus_agent_events_acked_total",
	  "Events the broker acknowledged as durable.", NULL, AG(m_acked) },
	{ FB_METRIC_COUNTER, "fabricbus_agent_events_resent_total",
	  "Events sent again after a reconnect.", NULL, AG(m_resent) },
	{ FB_METRIC_COUNTER, "fabricbus_agent_reconnects_total",
	  "Times the session to the broker reconnected.", NULL, AG(m_reconnects) },
	{ FB_METRIC_GAUGE, "fabricbus_agent_broker_connected",
	  "1 while the session to the broker is up.", NULL, AG(m_connected) },
	{ FB_METRIC_GAUGE, "fabricbus_agent_unacked_events",
	  "Events sent or buffered and not yet acknowledged.", NULL, AG(m_unacked) },
};
#undef AG

/* The skeleton's series, labelled with the program so that one Prometheus
 * job can scrape every agent of a host. */
static int metrics_init(struct fb_agent *ag)
{
	char l[128];
	snprintf(l, sizeof(l), "agent=\"%s\"", ag->prog);
	struct fb_metrics *r = ag->metrics = fb_metrics_new();
	if (!r || fb_metrics_build_info(r, ag->prog) ||
	    fb_metrics_add_all(r, agent_series, sizeof(agent_series) / sizeof(agent_series[0]), ag, l))
		return -1;
	ag->poll_seconds = fb_metrics_histogram(r, "fabricbus_agent_poll_duration_seconds",
						"Time one poll round took.", l, poll_bounds,
						sizeof(poll_bounds) / sizeof(poll_bounds[0]));
	return ag->poll_seconds ? 0 : -1;
}

int fb_agent_base(struct fb_agent *ag, int threads)
{
	signal(SIGPIPE, SIG_IGN); /* a broker closing mid-write is an error, not death */
	/* Before the base exists: event_active from another thread must be safe. */
	if ((threads && evthread_use_pthreads() != 0) || !(ag->base = event_base_new())) {
		fb_log_err("cannot set up libevent%s", threads ? " with pthreads" : "");
		return 1;
	}
	if (metrics_init(ag)) {
		fb_log_err("out of memory setting up the metrics");
		return 1;
	}
	return 0;
}

/* Before a scrape (loop thread): the session's counts, then the agent's. */
static void collect(void *arg)
{
	struct fb_agent *ag = arg;
	struct fb_session_stats st;
	fb_session_get_stats(ag->s, &st);
	fb_metric_set(ag->m_submitted, (double)st.submitted);
	fb_metric_set(ag->m_acked, (double)st.acked);
	fb_metric_set(ag->m_resent, (double)st.resent);
	fb_metric_set(ag->m_reconnects, (double)st.reconnects);
	fb_metric_set(ag->m_connected, st.connected ? 1 : 0);
	fb_metric_set(ag->m_unacked, (double)st.unacked);
	if (ag->hooks.collect)
		ag->hooks.collect(ag->hooks.arg);
}

static int metrics_listen(struct fb_agent *ag)
{
	if (!ag->metrics_arg)
		return 0;
	char err[256];
	if (fb_metrics_http_start(ag->base, ag->metrics_arg, ag->metrics, &ag->metrics_http, err,
				  sizeof(err))) {
		fb_log_err("%s", err);
		return 1;
	}
	fb_metrics_http_set_collect(ag->metrics_http, collect, ag);
	fb_log_info("serving Prometheus metrics on http://%s/metrics",
		    fb_metrics_http_addr(ag->metrics_http));
	return 0;
}

static void on_err(void *arg, int code, const char *text)
{
	(void)arg;
	fb_log_warn("session: %s (code %d)", text, code); /* text names the broker */
}

static void on_ack(void *arg, uint64_t acked_seq)
{
	struct fb_agent *ag = arg;
	if (ag->hooks.ack)
		ag->hooks.ack(ag->hooks.arg, acked_seq);
}

/* The session's drain is over: everything acked, or the wait ran out. */
static void on_drained(void *arg, size_t unacked)
{
	struct fb_agent *ag = arg;
	if (unacked)
		fb_log_warn("exiting with %zu events not acked by %s:%d", unacked, ag->host, ag->port);
	event_base_loopbreak(ag->base);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct fb_agent *ag = arg;
	if (ag->stopping)
		return;
	ag->stopping = 1;
	fb_log_info("signal %d: stopping, waiting up to %d ms for acks", (int)sig,
		    FB_AGENT_DRAIN_MS);
	if (ag->hooks.stop)
		ag->hooks.stop(ag->hooks.arg); /* may still deliver what its sources held */
	if (fb_session_drain(ag->s, FB_AGENT_DRAIN_MS, on_drained, ag) != 0)
		event_base_loopbreak(ag->base); /* out of memory: stop without waiting */
}

/* After a reconnect, once the broker holds everything we sent, resync: a
 * broker that lost its journal's tail (or was replaced) has a map older
 * than what we told it. */
static void reconnect_check_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_agent *ag = arg;
	struct fb_session_stats st;
	fb_session_get_stats(ag->s, &st);
	if (ag->stopping || st.reconnects == ag->reconnects || !st.connected || st.unacked)
		return;
	ag->reconnects = st.reconnects;
	fb_log_info("reconnected to %s:%d and everything is acked: resyncing against the broker's map",
		    ag->host, ag->port);
	ag->hooks.reconnected(ag->hooks.arg);
}

int fb_agent_session(struct fb_agent *ag, size_t buffer, const struct fb_agent_hooks *hooks)
{
	struct fb_session_opts o = { ag->host, ag->port, ag->agent_id, buffer, BATCH_EVENTS,
				     HEARTBEAT_MS, ag->tls_ca, ag->tls_cert, ag->tls_key };
	ag->hooks = *hooks;
	int rc = fb_session_new(ag->base, &o, &ag->s);
	if (rc) {
		fb_log_err("cannot start a session to %s:%d: %s", ag->host, ag->port, fb_strerror(rc));
		return 1;
	}
	fb_session_set_callbacks(ag->s, on_ack, on_err, ag);
	ag->sigterm = evsignal_new(ag->base, SIGTERM, on_signal, ag);
	ag->sigint = evsignal_new(ag->base, SIGINT, on_signal, ag);
	if (!ag->sigterm || !ag->sigint || event_add(ag->sigterm, NULL) ||
	    event_add(ag->sigint, NULL)) {
		fb_log_err("out of memory setting up the event loop");
		return 1;
	}
	if (ag->resync && ag->hooks.reconnected) {
		struct timeval every = { RECONNECT_CHECK_MS / 1000, (RECONNECT_CHECK_MS % 1000) * 1000 };
		ag->reconnect_check = event_new(ag->base, -1, EV_PERSIST, reconnect_check_cb, ag);
		if (!ag->reconnect_check || event_add(ag->reconnect_check, &every)) {
			fb_log_err("out of memory setting up the event loop");
			return 1;
		}
	}
	if (metrics_listen(ag))
		return 1;
	if ((rc = fb_session_start(ag->s)) != 0) {
		fb_log_err("cannot start the session to %s:%d: %s", ag->host, ag->port,
			   fb_strerror(rc));
		return 1;
	}
	return 0;
}

int fb_agent_run(struct fb_agent *ag)
{
	event_base_dispatch(ag->base);
	return ag->exit_status;
}

void fb_agent_fatal(struct fb_agent *ag)
{
	ag->exit_status = 1;
	event_base_loopbreak(ag->base);
}

void fb_agent_submit(struct fb_agent *ag, const struct fb_event *ev)
{
	int rc = fb_session_submit(ag->s, ev);
	if (rc == 0)
		return;
	fb_metric_inc(ag->m_dropped);
	/* The first drop and then every 1000th: a long outage is visible
	 * without flooding. */
	if (ag->dropped++ % 1000 == 0)
		fb_log_warn("dropped %s event of %s%s%s port %u ifIndex %u: %s (%" PRIu64 " dropped "
			    "so far; is fabricbusd at %s:%d up?)", fb_kind_name(ev->kind),
			    ev->subj.switch_name[0] ? "switch '" : "device '",
			    ev->subj.switch_name[0] ? ev->subj.switch_name : ev->subj.device, "'",
			    ev->subj.port, ev->subj.ifindex,
			    rc == FB_EFULL ? "session buffer full" : fb_strerror(rc), ag->dropped,
			    ag->host, ag->port);
}

void fb_agent_free(struct fb_agent *ag)
{
	fb_metrics_http_free(ag->metrics_http);
	ag->metrics_http = NULL;
	fb_session_free(ag->s);
	ag->s = NULL;
	struct event *evs[] = { ag->sigterm, ag->sigint, ag->reconnect_check };
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i])
			event_free(evs[i]);
	ag->sigterm = ag->sigint = ag->reconnect_check = NULL;
	if (ag->base)
		event_base_free(ag->base);
	ag->base = NULL;
	fb_metrics_free(ag->metrics);
	ag->metrics = NULL;
	fb_http_auth_free(&ag->map_auth);
}

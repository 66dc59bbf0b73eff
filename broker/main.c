/* main.c - fabricbusd: options, configuration, start-up and shutdown. */
#include "broker.h"
#include "batch.h"
#include "status.h"

#include "fabric_map.h"
#include "fb_err.h"
#include "fb_file.h"
#include "fb_log.h"
#include "fb_wire.h"
#include "inventory.h"
#include "journal.h"
#include "kafka_conf.h"
#include "kafka_sink.h"
#include "metrics.h"
#include "fb_metrics.h"
#include "storm.h"
#include "flapctl.h"
#include "dedupctl.h"
#include "ratectl.h"
#include "ofmf.h"
#include "ofmf_push.h"
#include "push.h"
#include "rf_event_service.h"
#include "rf_service.h"
#include "rf_tree.h"
#include "ws_server.h"
#include "rf_auth_core.h"
#include "rf_auth_reload.h"
#include "ws_tls.h"

#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fabricbusd [-f FILE] [-o Key=Value]... [options]\n"
		"\n"
		"The fabricbus broker: takes fabric events from agents, journals them, turns\n"
		"them into Redfish Events and fans them out to WebSocket subscribers.\n"
		"With no -f it runs on embedded defaults: agents on 127.0.0.1:7411, HTTP and\n"
		"WebSocket on 127.0.0.1:7412, journal in ./fabricbus-journal.\n"
		"\n"
		"Options:\n"
		"  -f, --config FILE   read Key=Value settings from FILE (see fabricbus.conf(5))\n"
		"  -o, --set KEY=VAL   override one setting (repeatable; applied after -f)\n"
		"  -v, --verbose       LogLevel=debug\n"
		"      --check-config  check the configuration, print it and exit\n"
		"      --help-config   list every configuration key\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n"
		"\n"
		"Signals: SIGTERM/SIGINT commit what was received, close agents and stop;\n"
		"SIGHUP re-reads HttpTokens and RedfishAccounts (revoked ones stop working).\n"
		"Exit status: 0 clean stop, 1 fatal runtime error (journal), 2 bad usage or config.\n"
		"Docs: docs/configuration.md, docs/operations.md\n");
}

struct options {
	const char *config_file;
	char **overrides;
	int n_overrides;
	int check_only;
	int verbose;
};

/* Returns -1 to continue, otherwise the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' }, { "set", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },      { "check-config", no_argument, NULL, 'c' },
		{ "help-config", no_argument, NULL, 'H' },  { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { NULL, 0, NULL, 0 },
	};
	o->overrides = calloc((size_t)argc, sizeof(char *));
	if (!o->overrides)
		return 1;
	int ch;
	while ((ch = getopt_long(argc, argv, "f:o:vhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f': o->config_file = optarg; break;
		case 'o': o->overrides[o->n_overrides++] = optarg; break;
		case 'v': o->verbose = 1; break;
		case 'c': o->check_only = 1; break;
		case 'H':
			printf("fabricbus.conf keys (Key=Value, one per line, '#' comments):\n");
			fb_config_help(stdout);
			return 0;
		case 'h': usage(stdout); return 0;
		case 'V': printf("fabricbusd %s (protocol %d)\n", FB_VERSION, FB_PROTO_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fabricbusd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

static int load_config(const struct options *o, struct fb_config *cfg)
{
	char err[512];
	fb_config_defaults(cfg);
	if (o->config_file && fb_config_load_file(cfg, o->config_file, err, sizeof(err))) {
		fprintf(stderr, "fabricbusd: %s\n", err);
		return 2;
	}
	for (int i = 0; i < o->n_overrides; i++)
		if (fb_config_set(cfg, o->overrides[i], "-o", err, sizeof(err))) {
			fprintf(stderr, "fabricbusd: %s\n", err);
			return 2;
		}
	if (o->verbose)
		cfg->log_level = FB_LOG_DEBUG;
	if (fb_config_check(cfg, err, sizeof(err)) || fb_kafka_check_config(cfg, err, sizeof(err))) {
		fprintf(stderr, "fabricbusd: %s\n", err);
		return 2;
	}
	return 0;
}

/* The Redfish accounts file is read before anything starts: a bad one, or
 * one that others may read, stops the start as a bad configuration does. */
static int load_auth(const struct fb_config *cfg, struct fb_rf_auth_core *auth)
{
	char err[600];
	if (fb_rf_auth_core_init(auth, cfg, err, sizeof(err))) {
		fprintf(stderr, "fabricbusd: %s: %s\n",
			cfg->http_tokens[0] && strstr(err, cfg->http_tokens) ? "HttpTokens"
									     : "RedfishAccounts", err);
		return 2;
	}
	if (cfg->http_tls != FB_AGENT_TLS_OFF &&
	    fb_ws_tls_check(cfg->http_tls_cert, cfg->http_tls_key, cfg->http_tls_ca, err,
			    sizeof(err))) {
		fb_rf_auth_core_free(auth);
		fprintf(stderr, "fabricbusd: %s\n", err);
		return 2;
	}
	return 0;
}

static void log_auth(const struct fb_config *c, const struct fb_rf_auth_core *auth)
{
	if (!fb_rf_auth_core_on(auth)) {
		fb_log_warn("%sRedfishAccounts is not set, nor HttpTokens: /redfish/v1, /ws/events, "
			    "/fabric/map and /status need no login and POST/DELETE /fabric/jobs are "
			    "unauthenticated: anyone who reaches %s:%d can read events and register "
			    "and delete jobs. Make accounts with `fabricbus passwd -f FILE USER ROLE` "
			    "(RedfishAccounts=FILE) or tokens (HttpTokens=FILE; docs/security.md)",
			    fb_config_is_loopback(c->http_host) ? "" : "SECURITY: ", c->http_host,
			    c->http_port);
	} else {
		if (auth->enabled)
			fb_log_info("redfish: %zu accounts from %s; anonymous reads %s; session timeout "
				    "%llu s", auth->accounts.n, c->rf_accounts,
				    auth->anonymous_reads ? "allowed" : "refused",
				    (unsigned long long)auth->sessions.timeout_s);
		if (auth->tokens)
			fb_log_info("http: %zu bearer tokens from %s", auth->bearers.n, c->http_tokens);
		fb_log_info("http: /status, /fabric/map and /ws/events %s; /metrics %s",
			    c->http_anonymous_reads ? "open to anyone (HttpAnonymousReads=yes)"
						    : "need a login",
			    c->http_anonymous_reads || c->http_public_metrics
				    ? "open to anyone" : "needs a login");
	}
	if (c->http_tls != FB_AGENT_TLS_REQUIRED && !fb_config_is_loopback(c->http_host))
		fb_log_warn("SECURITY: HttpListen %s:%d takes plain HTTP from the network "
			    "(HttpAllowPlain=yes): tokens, passwords and events cross it in the clear; "
			    "set HttpTls=required (docs/security.md)", c->http_host, c->http_port);
}

/* The journal's epoch: random, made once per journal directory, so an agent
 * can tell a broker that lost its journal from one that restarted. */
static uint64_t load_epoch(const char *dir)
{
	char path[4200];
	uint64_t e = 0;
	snprintf(path, sizeof(path), "%s/epoch", dir);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%" SCNx64, &e) != 1)
			e = 0;
		fclose(f);
	}
	if (e)
		return e;
	if (getrandom(&e, sizeof(e), 0) != (ssize_t)sizeof(e))
		e = fb_now_ns();
	char text[24];
	int n = snprintf(text, sizeof(text), "%016" PRIx64 "\n", e);
	const char *step = "write";
	int rc = fb_file_replace(path, text, (size_t)n, 0644, &step);
	if (rc)
		fb_log_warn("cannot %s %s: %s (agents will see a new epoch after restart)", step, path,
			    strerror(-rc));
	return e;
}

static void recover_cb(void *arg, uint64_t event_id, const struct fb_event *ev)
{
	struct fb_broker *b = arg;
	struct fb_agent *a = fb_agent_get(b->agents, ev->agent_id);
	if (a && ev->seq > a->stored_seq) {
		a->stored_seq = a->durable_seq = ev->seq;
		a->events++;
	}
	if (event_id > b->last_event_id)
		b->last_event_id = b->committed_id = event_id;
	if (fb_inventory_learn(b->inventory, ev) != 0)
		fb_log_warn("journal recovery: out of memory rebuilding the port inventory");
	fb_fabric_map_learn(b->fabric_map, ev);
	if (b->redfish)
		fb_rf_tree_learn(b->redfish->tree, ev);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct fb_broker *b = arg;
	fb_log_info("received %s: committing and stopping", strsignal((int)sig));
	event_base_loopbreak(b->base);
}

/* SIGHUP: read HttpTokens and RedfishAccounts again, here on the loop, and
 * hand them to the lws thread, their only reader (ws_server.h). A file that
 * fails keeps every table as it was. The rest of the configuration is not
 * re-read: it needs a restart. */
static void reload_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	struct fb_broker *b = arg;
	char err[600];
	struct fb_rf_auth_files f;
	if (!b->cfg->http_tokens[0] && !b->cfg->rf_accounts[0]) {
		fb_log_info("received SIGHUP: neither HttpTokens nor RedfishAccounts is set: nothing "
			    "to re-read (other settings need a restart)");
		return;
	}
	if (fb_rf_auth_files_read(b->cfg, &f, err, sizeof(err))) {
		fb_log_err("received SIGHUP: %s; keeping the tokens and accounts in use until the "
			   "file is fixed and SIGHUP sent again", err);
		return;
	}
	if (!b->ws || fb_ws_reload_auth(b->ws, &f)) {
		fb_log_err("received SIGHUP: %s; keeping the tokens and accounts in use",
			   b->ws ? "out of memory" : "no HTTP service to hand them to");
		fb_rf_auth_files_free(&f);
		return;
	}
	fb_log_info("received SIGHUP: HttpTokens/RedfishAccounts re-read; streams of revoked "
		    "credentials are being closed");
}

struct tick {
	struct fb_broker *b;
	struct fb_status *status;
	unsigned n;
	uint64_t shown_commits, shown_conns, shown_accepted;
};

/* Every 100 ms: refresh /status and /fabric/map when something changed,
 * so that they are at most 100 ms stale; every 10th tick (1 s): rates, heartbeats, idle agents;
 * every minute: journal retention. */
static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct tick *t = arg;
	struct fb_broker *b = t->b;
	uint64_t now = fb_now_ns();
	int second = t->n++ % 10 == 0;
	if (second) {
		fb_fabric_map_expire_jobs(b->fabric_map, now);
		fb_ingest_tick(b, now);
		fb_status_sample(t->status, b, now);
	}
	fb_broker_metrics_update(b->bmetrics, b);
	/* -ENOMEM keeps the map dirty: the next tick tries again. */
	int map_changed = fb_fabric_map_refresh(b->fabric_map, b->last_event_id) == 1;
	if (b->redfish && fb_rf_tree_refresh(b->redfish->tree, b->last_event_id) < 0)
		fb_log_warn("out of memory rebuilding the Redfish tree; retrying");
	if (second || map_changed || t->shown_commits != b->st.commits || t->shown_conns != b->n_conns ||
	    t->shown_accepted != b->st.connections) {
		t->shown_commits = b->st.commits;
		t->shown_conns = b->n_conns;
		t->shown_accepted = b->st.connections;
		char *json = fb_status_json(t->status, b, now);
		if (json && b->ws)
			fb_ws_set_status(b->ws, json);
		free(json);
	}
	if (t->n % 600 == 0)
		fb_commit_retain(b, (time_t)(now / 1000000000ull));
}

static int open_journal(struct fb_broker *b)
{
	const struct fb_config *c = b->cfg;
	struct fb_journal_opts jo = { c->journal_dir, c->segment_bytes, c->retain_bytes, c->retain_age_s,
				      c->sync_policy == FB_SYNC_NONE, c->journal_cache_bytes };
	uint64_t t0 = fb_now_ns();
	int rc = fb_journal_open(&jo, recover_cb, b, &b->journal);
	if (rc) {
		fb_log_err("cannot open the journal in %s: %s", c->journal_dir, fb_strerror(rc));
		return rc;
	}
	struct fb_journal_stats js;
	fb_journal_get_stats(b->journal, &js);
	fb_log_info("journal %s: %u segments, EventIds %" PRIu64 "..%" PRIu64 ", %zu agents, "
		    "recovered in %.3f s (sync=%s)",
		    c->journal_dir, js.segments, js.first_id, js.last_id, fb_agent_count(b->agents),
		    (double)(fb_now_ns() - t0) / 1e9, fb_sync_policy_name(c->sync_policy));
	b->epoch = load_epoch(c->journal_dir);
	return 0;
}

/* Before the journal's recovery, which feeds the tree what it keeps of
 * events (port counters, each switch's fabric). */
static int start_redfish(struct fb_broker *b, struct fb_rf_auth_core *auth)
{
	const struct fb_config *c = b->cfg;
	struct fb_rf_service_opts o = { .base = b->base, .map = b->fabric_map,
					.state_dir = c->journal_dir, .fabric_name = c->fabric_name,
					/* one per broker, stable across restarts: the OFMF
					 * core refuses a second agent with the same id */
					.connection_method_id = c->ofmf_cm_id,
					.auth = { .core = auth } };
	int rc = fb_rf_service_new(&o, &b->redfish);
	return rc ? rc : fb_rf_tree_start_builder(b->redfish->tree);
}

static int start_ws(struct fb_broker *b, struct fb_rf_auth_core *auth)
{
	const struct fb_config *c = b->cfg;
	/* The map the journal rebuilt is there for the very first request. */
	if (fb_fabric_map_refresh(b->fabric_map, b->last_event_id) < 0)
		fb_log_warn("out of memory rendering the fabric map; retrying every 100 ms");
	/* From now on the loop only copies the tables for a render (fabric_map.h). */
	int rc = c->map_render_thread ? fb_fabric_map_start_renderer(b->fabric_map) : 0;
	if (rc) {
		fb_log_err("cannot start the fabric map's renderer thread: %s; set MapRenderThread=no "
			   "to render on the event loop", strerror(-rc));
		return rc;
	}
	struct fb_ws_opts wo = {
		.host = c->http_host, .port = c->http_port, .journal_dir = c->journal_dir,
		.default_fabric = c->fabric_name, .ring_events = c->ws_ring_events,
		.queue_events = c->ws_queue_events, .ping_interval_s = (int)c->ws_ping_s,
		.sse_heartbeat_s = (int)c->sse_heartbeat_s,
		.max_subscribers = c->ws_max_subscribers, .fabric_map = b->fabric_map,
		.metrics = b->metrics,
		.module = fb_rf_service_module(b->redfish),
		.ready = fb_commit_outputs_ready, .ready_arg = b, .auth = auth,
		.anonymous_reads = c->http_anonymous_reads, .public_metrics = c->http_public_metrics,
		.tls = c->http_tls, .tls_cert = c->http_tls_cert, .tls_key = c->http_tls_key,
		.tls_ca = c->http_tls_ca,
	};
	if (fb_rf_tree_rebuild(b->redfish->tree, b->last_event_id) < 0)
		fb_log_warn("out of memory building the Redfish tree; retrying every 100 ms");
	rc = fb_ws_start(&wo, b->committed_id, &b->ws);
	return rc ? rc : fb_outputs_add(&b->outputs, "websocket", fb_ws_committed, b->ws);
}

/* The Kafka thread follows the journal itself: it only needs the newest
 * committed EventId (an atomic store and a wake; never busy). */
static int kafka_committed(void *k, struct fb_batch *batch, uint64_t last_id)
{
	(void)batch;
	fb_kafka_committed(k, last_id);
	return 0;
}

/* Never waits for Kafka: the thread connects, resumes and retries alone. */
static int start_kafka(struct fb_broker *b)
{
	if (!b->cfg->kafka_brokers[0])
		return 0;
	int rc = fb_kafka_start(b->cfg, b->epoch, b->committed_id, &b->kafka);
	return rc ? rc : fb_outputs_add(&b->outputs, "kafka", kafka_committed, b->kafka);
}

/* Root cause (storm.h): an output that sees every committed event, and
 * flap control (flapctl.h): a quiet stage that sees every agent event
 * before it is journaled; both emit events of the broker's own. */
static int start_storm(struct fb_broker *b)
{
	if (!b->cfg->storm_control)
		return 0;
	b->storm = fb_storm_new(b, 0);
	b->flapctl = fb_flapctl_new(b);
	if (!b->storm || !b->flapctl)
		return -ENOMEM;
	int rc = fb_outputs_add(&b->outputs, "storm", fb_storm_committed, b->storm);
	/* Before the rate limits: a flapping port's transitions are quiet for
	 * the flap and not counted against a limit (quiet.h). */
	return rc ? rc : fb_quiets_add(&b->quiets, "flap", fb_flapctl_quiet, b->flapctl);
}

/* De-duplication and symptoms (dedupctl.h): a quiet stage after flap
 * control (it asks the root cause which reports are symptoms) and before
 * the rate limits (a duplicate is not counted against a limit). Off with
 * DedupWindow=0. */
static int start_dedup(struct fb_broker *b)
{
	if (!b->cfg->dedup_window_ms)
		return 0;
	b->dedupctl = fb_dedupctl_new(b, b->cfg->dedup_window_ms * 1000000ULL);
	if (!b->dedupctl)
		return -ENOMEM;
	return fb_quiets_add(&b->quiets, "dedup", fb_dedupctl_stage, b->dedupctl);
}

/* Rate limits (ratectl.h): the last quiet stage, so that it counts only
 * what the others left loud. Off while both limits are 0. */
static int start_ratelimit(struct fb_broker *b)
{
	int err;
	b->ratectl = fb_ratectl_new(b, &err);
	if (!b->ratectl)
		return err;
	return fb_quiets_add(&b->quiets, "ratelimit", fb_ratectl_quiet, b->ratectl);
}

/* The subscriptions changed: the Kafka sink takes the Protocol=Kafka ones. */
static void subs_changed(void *arg)
{
	struct fb_broker *b = arg;
	if (!b->kafka && b->push) {
		const struct fb_rf_store *st = fb_push_store(b->push);
		for (size_t i = 0; i < st->n; i++)
			if (st->v[i]->protocol == FB_RF_PROTO_KAFKA)
				fb_log_warn("redfish: subscription %s is a Kafka one (topic %s) but "
					    "KafkaBrokers is empty: nothing is produced for it",
					    st->v[i]->id, st->v[i]->context);
	}
	if (b->kafka && b->push && fb_kafka_set_rsubs(b->kafka, fb_push_store(b->push)))
		fb_log_err("kafka: out of memory handing over the Kafka subscriptions; they change "
			   "at the next subscription change");
}

/* IncludeOriginOfCondition: the origin's body from the newest tree. */
static char *origin_body(void *arg, const char *path)
{
	struct fb_broker *b = arg;
	return b->redfish && b->redfish->tree ? fb_rf_tree_body(b->redfish->tree, path) : NULL;
}

/* Push delivery follows the journal on this loop through libcurl: the
 * output only moves its limit and wakes it. */
static int start_push(struct fb_broker *b)
{
	const struct fb_config *c = b->cfg;
	struct fb_push_opts po = {
		.base = b->base, .journal_dir = c->journal_dir, .epoch = b->epoch,
		.committed_id = b->committed_id, .fabric = c->fabric_name, .ca_file = c->push_ca_file,
		.retry_attempts = (unsigned)c->push_retry_attempts,
		.retry_interval_ms = c->push_retry_interval_ms, .max_backoff_ms = c->push_max_backoff_ms,
		.timeout_ms = c->push_timeout_ms, .cursor_sync_ms = c->push_cursor_sync_ms,
		.heartbeat_unit_ms = c->push_heartbeat_unit_ms,
		.changed = subs_changed, .changed_arg = b,
		.origin_body = origin_body, .origin_body_arg = b,
	};
	int rc = fb_push_start(&po, &b->push);
	if (rc)
		return rc;
	subs_changed(b);
	/* The EventService routes reach the engine through deferred calls. */
	b->redfish->events = fb_rf_events_new(b->push);
	if (!b->redfish->events)
		return -ENOMEM;
	b->redfish->events->ksubs = c->kafka_subs; /* listed read-only */
	b->redfish->events->n_ksubs = c->n_kafka_subs;
	b->redfish->events->kafka_brokers = c->kafka_brokers;
	return fb_outputs_add(&b->outputs, "push", fb_push_committed, b->push);
}

static int run(struct fb_broker *b)
{
	struct fb_status *status = fb_status_new();
	struct tick t = { .b = b, .status = status };
	struct event *tick = event_new(b->base, -1, EV_PERSIST, tick_cb, &t);
	struct event *sint = evsignal_new(b->base, SIGINT, signal_cb, b);
	struct event *sterm = evsignal_new(b->base, SIGTERM, signal_cb, b);
	struct event *shup = evsignal_new(b->base, SIGHUP, reload_cb, b);
	struct timeval tenth = { 0, 100000 };
	int rc = 0;
	if (!status || !tick || !sint || !sterm || !shup || event_add(tick, &tenth) ||
	    event_add(sint, NULL) || event_add(sterm, NULL) || event_add(shup, NULL)) {
		fb_log_err("out of memory setting up the event loop");
		rc = 1;
	} else {
		tick_cb(-1, 0, &t);
		fb_log_info("fabricbusd %s ready (pid %d)", FB_VERSION, (int)getpid());
		event_base_dispatch(b->base);
		rc = b->exit_code;
	}
	if (tick)
		event_free(tick);
	if (sint)
		event_free(sint);
	if (shup)
		event_free(shup);
	if (sterm)
		event_free(sterm);
	fb_status_free(status);
	return rc;
}

/* Last, once we answer HTTP: the core calls back inside our first POST.
 * Through the push engine's HTTP client and store (ofmf_push.h). */
static int start_ofmf(struct fb_broker *b)
{
	const struct fb_config *c = b->cfg;
	if (!c->ofmf_core[0])
		return 0;
	char base_url[600], state[4200];
	if (c->ofmf_base_url[0])
		snprintf(base_url, sizeof(base_url), "%s", c->ofmf_base_url);
	else if (strchr(c->http_host, ':'))
		snprintf(base_url, sizeof(base_url), "%s://[%s]:%d",
			 c->http_tls == FB_AGENT_TLS_REQUIRED ? "https" : "http", c->http_host,
			 c->http_port);
	else
		snprintf(base_url, sizeof(base_url), "%s://%s:%d",
			 c->http_tls == FB_AGENT_TLS_REQUIRED ? "https" : "http", c->http_host,
			 c->http_port);
	snprintf(state, sizeof(state), "%s/ofmf.state", c->journal_dir);
	struct fb_ofmf_opts o = {
		.base = b->base, .core = c->ofmf_core, .base_url = base_url,
		.cm_id = b->redfish->cm_id, .fabric = c->fabric_name, .state_path = state,
		.check_ms = c->ofmf_check_ms,
	};
	int rc = fb_ofmf_push_new(b->push, &o.io, &b->ofmf_io);
	if (!rc)
		rc = fb_ofmf_start(&o, &b->ofmf);
	if (!rc)
		fb_ofmf_push_attach(b->ofmf_io, b->ofmf);
	if (rc)
		fb_log_err("cannot start the OFMF registration: %s", fb_strerror(rc));
	return rc ? rc : fb_outputs_add(&b->outputs, "ofmf", fb_ofmf_committed, b->ofmf);
}

static void shutdown_broker(struct fb_broker *b)
{
	if (b->exit_code == 0 && b->journal)
		fb_commit_now(b); /* ack and publish what was received */
	fb_ingest_close_all(b, FB_WERR_SHUTDOWN, "broker is stopping");
	/* Give the ERROR frames a moment to leave, then free what remains. */
	struct timeval grace = { 0, 200000 };
	event_base_loopexit(b->base, &grace);
	event_base_dispatch(b->base);
	fb_ingest_free_all(b);
	fb_accept_http_close(b);
	if (b->ws)
		fb_ws_stop(b->ws);
	if (b->redfish) {
		fb_rf_events_free(b->redfish->events); /* after the lws thread */
		b->redfish->events = NULL;
	}
	fb_rf_service_free(b->redfish); /* after the lws thread, before the map */
	b->redfish = NULL;
	fb_fabric_map_free(b->fabric_map); /* after the lws thread: it took snapshots */
	b->fabric_map = NULL;
	fb_kafka_stop(b->kafka, 5000); /* bounded flush, then the cursor */
	b->kafka = NULL;
	if (b->ofmf_io)
		fb_ofmf_push_attach(b->ofmf_io, NULL); /* the push engine may still call it */
	fb_ofmf_stop(b->ofmf); /* its request in flight is the push engine's client's */
	b->ofmf = NULL;
	fb_push_stop(b->push); /* the cursors; what is in flight is sent again next start */
	fb_ofmf_push_free(b->ofmf_io); /* after its watcher's engine */
	b->ofmf_io = NULL;
	b->push = NULL;
	fb_commit_fini(b);
	fb_storm_free(b->storm);
	b->storm = NULL;
	fb_flapctl_free(b->flapctl);
	b->flapctl = NULL;
	fb_ratectl_free(b->ratectl);
	b->ratectl = NULL;
	fb_dedupctl_free(b->dedupctl);
	b->dedupctl = NULL;
	if (b->journal)
		fb_journal_close(b->journal);
	fb_agent_table_free(b->agents);
	fb_inventory_free(b->inventory);
	fb_batch_spares_free(); /* every thread that held batches has stopped */
}

int main(int argc, char **argv)
{
	struct options opt = { 0 };
	int rc = parse_options(argc, argv, &opt);
	if (rc >= 0) {
		free(opt.overrides);
		return rc;
	}
	static struct fb_config cfg;
	/* Messages while the configuration is checked (librdkafka's, say) carry
	 * our name too; the configured target and level apply from below. */
	fb_log_init("fabricbusd", 0, FB_LOG_INFO);
	rc = load_config(&opt, &cfg);
	free(opt.overrides);
	if (rc)
		return rc;
	/* The lws thread uses it alone once started; freed after it stops. */
	struct fb_rf_auth_core auth;
	if ((rc = load_auth(&cfg, &auth)) != 0)
		return rc;
	if (opt.check_only) {
		fb_rf_auth_core_free(&auth);
		fb_config_print(&cfg, stdout);
		return 0;
	}
	fb_log_init("fabricbusd", cfg.log_syslog, cfg.log_level);
	if (!opt.config_file)
		fb_log_info("no configuration file given (-f): using embedded defaults");
	signal(SIGPIPE, SIG_IGN);
	log_auth(&cfg, &auth);

	struct fb_broker b = { .cfg = &cfg, .start_ns = fb_now_ns(), .durable = fb_ingest_durable,
			       .hold_agents = fb_ingest_hold };
	/* Before the base exists: the lws thread wakes the loop with
	 * event_active (job registrations, fabric_map.h). */
	if (evthread_use_pthreads() != 0) {
		fb_log_err("cannot enable libevent's thread support");
		fb_rf_auth_core_free(&auth);
		return 1;
	}
	struct event_config *ec = event_config_new();
	b.base = ec ? event_base_new_with_config(ec) : NULL;
	if (ec)
		event_config_free(ec);
	b.agents = fb_agent_table_new();
	b.inventory = fb_inventory_new();
	if (b.base && event_base_priority_init(b.base, 2) == 0)
		b.fabric_map = fb_fabric_map_new(b.base, b.inventory, cfg.fabric_name);
	if (!b.base || !b.agents || !b.inventory || !b.fabric_map) {
		fb_log_err("cannot create the event loop");
		fb_rf_auth_core_free(&auth);
		return 1;
	}
	fb_fabric_map_set_job_limits(b.fabric_map, cfg.jobs_max, cfg.job_members_max,
				     cfg.job_nodes_max, cfg.job_ttl_s);
	b.metrics = fb_metrics_new();
	b.bmetrics = b.metrics ? fb_broker_metrics_new(b.metrics) : NULL;
	if (!b.bmetrics) {
		fb_log_err("out of memory setting up /metrics");
		fb_rf_auth_core_free(&auth);
		return 1;
	}
	rc = start_redfish(&b, &auth);
	if (!rc)
		rc = open_journal(&b);
	if (!rc)
		fb_journal_set_sync_metric(b.journal, fb_broker_metrics_fsync(b.bmetrics));
	if (!rc)
		rc = fb_commit_init(&b);
	if (!rc)
		rc = start_storm(&b);
	if (!rc)
		rc = start_dedup(&b);
	if (!rc)
		rc = start_ratelimit(&b);
	if (!rc)
		rc = start_kafka(&b);
	if (!rc)
		rc = start_push(&b);
	if (!rc)
		rc = start_ws(&b, &auth);
	if (!rc)
		rc = fb_accept_http_listen(&b);
	if (!rc)
		rc = fb_ingest_listen(&b);
	if (!rc)
		rc = start_ofmf(&b);
	rc = rc ? 1 : run(&b);
	shutdown_broker(&b);
	fb_rf_auth_core_free(&auth); /* after the lws thread */
	event_base_free(b.base);
	fb_broker_metrics_free(b.bmetrics);
	fb_metrics_free(b.metrics);
	fb_log_info("fabricbusd stopped%s", rc ? " on an error" : "");
	return rc;
}

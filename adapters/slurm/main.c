/* main.c - fabricbus-slurm: options, configuration, the loop, clean stop.
 *
 * Drains Slurm nodes whose fabric links fail and undrains them once the
 * fabric is stable again. The pieces, in the order an event meets them:
 * slurm_cond (what it means), slurm_map (which nodes), slurm_policy (when),
 * slurm_state (remember), slurm_actuator + slurm_api (Slurm), slurm_pub
 * (tell the broker). slurm_adapter and slurm_startup tie them to the loop.
 */
#include "fb_err.h"
#include "fb_log.h"
#include "fb_usage.h"
#include "slurm_adapter.h"
#include "slurm_source.h"
#include "slurm_api.h"
#include "slurm_conf.h"
#include "slurm_metrics.h"
#include "fb_addr.h"
#include "fb_metrics.h"
#include "fb_metrics_http.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "fabricbus-slurm"
#define MAX_OVERRIDES 128
#define STOP_WAIT_MS 3000  /* for a libslurm call in progress */
#define FLUSH_WAIT_MS 2000 /* for the broker to ack our last events */

struct options {
	const char *config_file;
	const char *metrics;      /* --metrics ADDR:PORT, or NULL */
	const char *overrides[MAX_OVERRIDES];
	int n_overrides, dry_run, check_only;
};

static void help(void)
{
	printf("NAME\n"
	       "    " PROG " - drain Slurm nodes whose fabric links fail, undrain them when stable\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    " PROG " [-f FILE] [-o Key=Value]... [--dry-run] [--check-config]\n"
	       "                    [--metrics ADDR:PORT] [-h]\n"
	       "\n"
	       "DESCRIPTION\n"
	       "    Follows fabricbusd's events (Source=websocket: ws://Broker/ws/events with\n"
	       "    resume; Source=kafka: a consumer group on KafkaTopics), maps each\n"
	       "    fabric event to Slurm nodes (the event's node, MapFile, the broker's\n"
	       "    /fabric/map), and keeps per node the conditions listed in DrainOn. A node\n"
	       "    is drained (State=DRAIN, Reason '<ReasonPrefix> <cause> (EventId <id>)')\n"
	       "    once a condition lasted HoldDown, and undrained (State=UNDRAIN) once it had\n"
	       "    none for StableFor. A node whose Slurm reason is not ours is never touched.\n"
	       "    At most min(MaxDrainNodes, MaxDrainPercent%% of CapPartition) nodes are held\n"
	       "    drained. Every action is published back to the broker (kind action, from\n"
	       "    BrokerAgent) and logged. State survives restarts in StateFile. libslurm\n"
	       "    reads SLURM_CONF. Details: docs/slurm.md.\n"
	       "\n"
	       "OPTIONS\n"
	       "    -f, --config FILE   read Key=Value settings from FILE (no -f: defaults)\n"
	       "    -o, --set KEY=VAL   override one setting (repeatable; after -f)\n"
	       "        --dry-run       same as -o DryRun=yes: decide, log and publish, never\n"
	       "                        update Slurm (it is still read)\n"
	       "        --check-config  check the configuration and MapFile, print the\n"
	       "                        effective configuration and exit\n"
	       "        --metrics ADDR:PORT  serve Prometheus GET /metrics there (default: off)\n"
	       "    -h, --help          show this help\n"
	       "\n"
	       "CONFIGURATION KEYS (Key=Default)\n");
	fbs_config_help(stdout);
	printf("\n"
	       "SIGNALS\n"
	       "    SIGTERM, SIGINT  stop: save the state (pending actions included), wait up to\n"
	       "                     %d ms for a Slurm call in progress, exit 0\n"
	       "\n"
	       "EXIT STATUS\n"
	       "    0  clean stop (or --check-config found no error)\n"
	       "    1  fatal error at start (state file unusable or not writable, threads)\n"
	       "    2  bad usage or configuration\n",
	       STOP_WAIT_MS);
}

static int parse_opts(struct options *o, int argc, char **argv)
{
	enum { O_DRY = 256, O_CHECK, O_METRICS };
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "set", required_argument, NULL, 'o' },
		{ "dry-run", no_argument, NULL, O_DRY },
		{ "check-config", no_argument, NULL, O_CHECK },
		{ "metrics", required_argument, NULL, O_METRICS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'f': o->config_file = optarg; break;
		case 'o':
			if (o->n_overrides == MAX_OVERRIDES)
				return fb_usage_error(PROG, "at most %d -o options", MAX_OVERRIDES);
			o->overrides[o->n_overrides++] = optarg;
			break;
		case O_DRY: o->dry_run = 1; break;
		case O_CHECK: o->check_only = 1; break;
		case O_METRICS: {
			char h[256];
			int p;
			if (fb_addr_parse(optarg, "127.0.0.1", h, sizeof(h), &p) != 0)
				return fb_usage_error(PROG, "bad --metrics '%s': want HOST:PORT, "
						      "[IPV6]:PORT or :PORT", optarg);
			o->metrics = optarg;
			break;
		}
		case 'h': help(); return -1;
		case ':': return fb_usage_error(PROG, "%s needs a value", argv[optind - 1]);
		default: return fb_usage_error(PROG, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fb_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
	return 0;
}

static int load_config(const struct options *o, struct fbs_config *c)
{
	char err[1200];
	fbs_config_defaults(c);
	if (o->config_file && fbs_config_load_file(c, o->config_file, err, sizeof(err))) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	for (int i = 0; i < o->n_overrides; i++) {
		if (fbs_config_set(c, o->overrides[i], err, sizeof(err))) {
			fprintf(stderr, PROG ": %s\n", err);
			return 2;
		}
	}
	if (o->dry_run)
		c->dry_run = 1;
	if (fbs_config_check(c, err, sizeof(err))) {
		fprintf(stderr, PROG ": %s%s%s\n", o->config_file ? o->config_file : "",
			o->config_file ? ": " : "", err);
		return 2;
	}
	if (!c->agent_id[0])
		fb_session_default_agent_id("slurm", c->agent_id, sizeof(c->agent_id));
	return 0;
}

/* --check-config also loads MapFile: its errors are configuration errors. */
static int check_map_file(const struct fbs_config *c)
{
	struct fbs_mapfile *m = NULL;
	char err[1200];
	if (c->map_file[0] && fbs_mapfile_load(c->map_file, &m, err, sizeof(err))) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	fbs_mapfile_free(m);
	return 0;
}

struct run {
	struct fbs_adapter a;
	struct event *sigterm, *sigint;
	int stop_rc;
	struct fb_metrics *metrics;
	struct fb_metrics_http *metrics_http;
};

static void collect(void *arg)
{
	struct run *r = arg;
	fbs_metrics_collect(r->a.metrics, &r->a);
}

/* --metrics: the registry, the adapter's series, the listener. 0 or 1. */
static int metrics_start(struct run *r, const char *addr)
{
	if (!addr)
		return 0;
	char err[256];
	if (!(r->metrics = fb_metrics_new()) || !(r->a.metrics = fbs_metrics_new(r->metrics))) {
		fb_log_err("out of memory setting up the metrics");
		return 1;
	}
	if (fb_metrics_http_start(r->a.base, addr, r->metrics, &r->metrics_http, err, sizeof(err))) {
		fb_log_err("%s", err);
		return 1;
	}
	fb_metrics_http_set_collect(r->metrics_http, collect, r);
	fb_log_info("serving Prometheus metrics on http://%s/metrics",
		    fb_metrics_http_addr(r->metrics_http));
	return 0;
}

static void metrics_stop(struct run *r)
{
	fb_metrics_http_free(r->metrics_http);
	fbs_metrics_free(r->a.metrics);
	r->a.metrics = NULL;
	fb_metrics_free(r->metrics);
}

static void on_drained(void *arg, size_t unacked)
{
	struct run *r = arg;
	if (unacked)
		fb_log_warn("exiting with %zu action events not acked by the broker", unacked);
	event_base_loopbreak(r->a.base);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct run *r = arg;
	if (r->a.phase == FBS_P_STOPPING)
		return;
	fb_log_info("signal %d: stopping", (int)sig);
	r->stop_rc = fbs_adapter_stop(&r->a, STOP_WAIT_MS);
	if (!r->a.sess || fb_session_drain(r->a.sess, FLUSH_WAIT_MS, on_drained, r) != 0)
		event_base_loopbreak(r->a.base);
}

static void log_summary(const struct fbs_config *c)
{
	char drain_on[160], hold[32], stable[32], lim[200] = "";
	fbs_drain_on_format(c->drain_on, drain_on, sizeof(drain_on));
	fbs_duration_format(c->hold_ms, hold, sizeof(hold));
	fbs_duration_format(c->stable_ms, stable, sizeof(stable));
	if (c->max_drain_percent)
		snprintf(lim, sizeof(lim), "%" PRIu64 "%% of %s", c->max_drain_percent,
			 c->cap_partition[0] ? c->cap_partition : "all nodes");
	char from[sizeof(c->kafka_brokers) + sizeof(c->kafka_group) + sizeof(c->kafka_topics) + 64];
	if (c->source == FBS_SRC_KAFKA)
		snprintf(from, sizeof(from), "Kafka %s (group %s, topics %s)", c->kafka_brokers,
			 c->kafka_group, c->kafka_topics);
	else
		snprintf(from, sizeof(from), "ws://%s:%d/ws/events", c->broker_host, c->broker_port);
	fb_log_info(PROG " " FB_VERSION ": events from %s, actions to %s:%d as "
		    "'%s'; DrainOn=%s HoldDown=%s StableFor=%s; cap %s%" PRIu64 " nodes%s%s; reason "
		    "'%s ...'; %s; SLURM_CONF=%s", from, c->agent_host,
		    c->agent_port, c->agent_id, drain_on[0] ? drain_on : "(nothing)", hold, stable,
		    c->max_drain_nodes ? "" : "no node limit, ", c->max_drain_nodes,
		    lim[0] ? " and " : "", lim, c->reason_prefix,
		    c->dry_run ? "DRY RUN: Slurm is read, never updated" : "live",
		    getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "(libslurm default)");
}

int main(int argc, char **argv)
{
	static struct fbs_config cfg;
	static struct run r;
	struct options o;
	memset(&o, 0, sizeof(o));
	fb_log_init(PROG, 0, FB_LOG_INFO);
	int rc = parse_opts(&o, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = load_config(&o, &cfg)))
		return rc;
	if (o.check_only) {
		if ((rc = check_map_file(&cfg)))
			return rc;
		char err[512];
		if (cfg.source == FBS_SRC_KAFKA && fbs_source_kafka_check(&cfg, err, sizeof(err))) {
			fprintf(stderr, PROG ": %s\n", err);
			return 2;
		}
		fbs_config_print(&cfg, stdout);
		return 0;
	}
	fb_log_init(PROG, cfg.log_syslog, cfg.log_level);
	log_summary(&cfg);

	signal(SIGPIPE, SIG_IGN);
	struct event_base *base = NULL;
	if (evthread_use_pthreads() != 0 || !(base = event_base_new())) {
		fb_log_err("cannot set up libevent");
		return 1;
	}
	char err[1200];
	if ((rc = fbs_adapter_init(&r.a, &cfg, base, err, sizeof(err)))) {
		fb_log_err("%s", err);
		fbs_adapter_free(&r.a);
		event_base_free(base);
		return rc == FB_ECONFIG ? 2 : 1;
	}
	fbs_slurm_init();
	r.sigterm = evsignal_new(base, SIGTERM, on_signal, &r);
	r.sigint = evsignal_new(base, SIGINT, on_signal, &r);
	int status = 0;
	if (!r.sigterm || !r.sigint || event_add(r.sigterm, NULL) || event_add(r.sigint, NULL) ||
	    metrics_start(&r, o.metrics) || fbs_adapter_start(&r.a)) {
		fb_log_err("cannot start");
		status = 1;
	} else {
		event_base_dispatch(base);
	}
	if (r.a.phase != FBS_P_STOPPING) { /* the loop broke on an error, not on a signal */
		status = 1;
		r.stop_rc = fbs_adapter_stop(&r.a, STOP_WAIT_MS);
	}
	if (r.stop_rc) {
		fflush(NULL);
		_exit(status); /* a libslurm call still runs on the other thread: do not free */
	}
	fb_log_info("stopped: %" PRIu64 " events read, %" PRIu64 " ignored, %" PRIu64
		    " with no node known, %" PRIu64 " action events published",
		    r.a.events, r.a.ignored, r.a.unrouted, r.a.published);
	metrics_stop(&r);
	fbs_adapter_free(&r.a);
	event_free(r.sigterm);
	event_free(r.sigint);
	event_base_free(base);
	fbs_slurm_fini();
	libevent_global_shutdown();
	return status;
}

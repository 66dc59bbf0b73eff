/* main.c - fabricbus-pmix: fabric events into running applications' PMIx
 * event handlers (docs/pmix.md).
 *
 *   fabricbus-pmix [-f FILE] [-o Key=Value]... [--check-config] [--metrics ADDR:PORT] [-h]
 *
 * Exit: 0 clean stop (SIGTERM/SIGINT) or a good --check-config; 1 start-up
 * failed; 2 bad usage or configuration.
 */
#include "pmix_adapter.h"
#include "pmix_conf.h"

#include "fb_addr.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_metrics.h"
#include "fb_metrics_http.h"
#include "fb_usage.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define PROG "fabricbus-pmix"

/* --metrics: fabricbus-pmix's Prometheus series, mirrored at each scrape. */
struct pmix_metrics {
	const struct fbp_adapter *a;
	struct fb_metrics *r;
	struct fb_metrics_http *http;
	struct fb_metric *delivered, *failed, *position;
};

static void usage(void)
{
	printf("usage: " PROG " [-f FILE] [-o Key=Value]... [--check-config] [--metrics ADDR:PORT] [-h]\n"
	       "  --metrics ADDR:PORT         serve Prometheus GET /metrics there (default: off)\n"
	       "keys (docs/pmix.md):\n"
	       "  Broker=127.0.0.1:7412       fabricbusd's HttpListen (/ws/events, /fabric/map)\n"
	       "  NodeName=<short host name>  this node's Slurm name\n"
	       "  Delivery=slurm              slurm (steps via spank_fabricbus_pmix.so) or server (a PMIx tool)\n"
	       "  StepDir=/run/fabricbus/pmix the plugin's dir= (Delivery=slurm)\n"
	       "  ServerUri=                  the server's PMIX_SERVER_URI (Delivery=server)\n"
	       "  ServerNamespace=            the job whose processes are named (Delivery=server)\n"
	       "  ServerNodes=<NodeName>      the nodes that server's jobs run on (Delivery=server)\n"
	       "  Code=PMIX_FABRIC_UPDATED    or a site code below PMIX_EXTERNAL_ERR_BASE, e.g. -3001\n"
	       "  Range=session               session (all of the job here) or nodes (processes on the affected nodes)\n"
	       "  Kinds=link_down,link_up,link_degraded,flap,switch_unreachable,switch_reachable\n"
	       "  ScanInterval=200ms          how often StepDir is scanned for new steps\n"
	       "  LogLevel=info               error, warn, info or debug\n");
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	fb_log_info("signal %d: stopping", (int)sig);
	event_base_loopexit(arg, NULL);
}

static void collect(void *arg)
{
	struct pmix_metrics *m = arg;
	fb_metric_set(m->delivered, (double)m->a->delivered);
	fb_metric_set(m->failed, (double)m->a->failed);
	fb_metric_set(m->position, (double)m->a->position);
}

static int metrics_start(struct pmix_metrics *m, const char *addr, struct event_base *base)
{
	char err[256];
	const char *h = "Fabric events delivered as PMIx events, by result.";
	if (!(m->r = fb_metrics_new()))
		return fb_log_err("out of memory setting up the metrics"), -1;
	if (fb_metrics_build_info(m->r, PROG))
		return fb_log_err("out of memory setting up the metrics"), -1;
	m->delivered = fb_metrics_add(m->r, FB_METRIC_COUNTER, "fabricbus_pmix_notifications_total",
				      h, "result=\"delivered\"");
	m->failed = fb_metrics_add(m->r, FB_METRIC_COUNTER, "fabricbus_pmix_notifications_total", h,
				   "result=\"failed\"");
	m->position = fb_metrics_add(m->r, FB_METRIC_GAUGE, "fabricbus_pmix_position_event_id",
				     "The newest broker EventId handled.", NULL);
	if (!m->delivered || !m->failed || !m->position)
		return fb_log_err("out of memory setting up the metrics"), -1;
	if (fb_metrics_http_start(base, addr, m->r, &m->http, err, sizeof(err)))
		return fb_log_err("%s", err), -1;
	fb_metrics_http_set_collect(m->http, collect, m);
	fb_log_info("serving Prometheus metrics on http://%s/metrics",
		    fb_metrics_http_addr(m->http));
	return 0;
}

static int load(int argc, char **argv, struct fbp_config *c, int *check, const char **metrics)
{
	static const struct option opts[] = {{"config", required_argument, 0, 'f'},
					     {"set", required_argument, 0, 'o'},
					     {"check-config", no_argument, 0, 'C'},
					     {"metrics", required_argument, 0, 'M'},
					     {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	const char *file = NULL;
	char err[512];
	int o;
	fbp_conf_defaults(c);
	/* -f first, then every -o in order */
	while ((o = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		if (o == 'f')
			file = optarg;
		else if (o == 'C')
			*check = 1;
		else if (o == 'M') {
			char h[256];
			int p;
			if (fb_addr_parse(optarg, "127.0.0.1", h, sizeof(h), &p) != 0)
				return fb_usage_error(PROG, "bad --metrics '%s': want HOST:PORT, "
						      "[IPV6]:PORT or :PORT", optarg);
			*metrics = optarg;
		}
		else if (o == 'h')
			return usage(), 1;
		else if (o != 'o')
			return fb_usage_error(PROG, "unknown option '%s'", argv[optind - 1]);
	}
	if (optind < argc)
		return fb_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
	if (file && fbp_conf_load_file(c, file, err, sizeof(err)) < 0)
		return fprintf(stderr, PROG ": %s\n", err), 2;
	optind = 1;
	while ((o = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		if (o != 'o')
			continue;
		char kv[4200];
		snprintf(kv, sizeof(kv), "%s", optarg);
		char *eq = strchr(kv, '=');
		if (!eq)
			return fb_usage_error(PROG, "-o %s: expected Key=Value", optarg);
		*eq = '\0';
		if (fbp_conf_set(c, kv, eq + 1, "-o", err, sizeof(err)) < 0)
			return fprintf(stderr, PROG ": %s\n", err), 2;
	}
	if (fbp_conf_check(c, err, sizeof(err)) < 0)
		return fprintf(stderr, PROG ": %s\n", err), 2;
	return 0;
}

int main(int argc, char **argv)
{
	struct fbp_config cfg;
	int check = 0;
	const char *metrics_addr = NULL;
	int rc = load(argc, argv, &cfg, &check, &metrics_addr);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (check) {
		fbp_conf_print(&cfg, stdout);
		return 0;
	}
	fb_log_init(PROG, 0, cfg.log_level);
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() < 0) {
		fb_log_err("libevent has no pthreads support");
		return 1;
	}
	struct event_base *base = event_base_new();
	struct event *sigs[2] = {base ? evsignal_new(base, SIGTERM, on_signal, base) : NULL,
				 base ? evsignal_new(base, SIGINT, on_signal, base) : NULL};
	if (!base || !sigs[0] || !sigs[1] || event_add(sigs[0], NULL) < 0 || event_add(sigs[1], NULL) < 0) {
		fb_log_err("cannot set up the event loop");
		return 1;
	}
	struct fbp_adapter a;
	struct pmix_metrics m = { .a = &a };
	char err[512];
	rc = 0;
	if (fbp_adapter_start(&a, &cfg, base, err, sizeof(err)) < 0) {
		fb_log_err("%s", err);
		rc = 1;
	} else if (metrics_addr && metrics_start(&m, metrics_addr, base) < 0) {
		rc = 1;
	} else {
		fb_log_info("node %s, code %d, %s delivery", cfg.node, cfg.code,
			    cfg.delivery == FBP_DELIVERY_SLURM ? "slurm" : "server");
		event_base_dispatch(base);
	}
	fb_metrics_http_free(m.http);
	fb_metrics_free(m.r);
	fbp_adapter_stop(&a);
	event_free(sigs[0]);
	event_free(sigs[1]);
	event_base_free(base);
	return rc;
}

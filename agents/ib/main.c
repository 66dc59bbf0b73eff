/* main.c - fabricbus-agent-ib: options, the libevent loop and the session.
 *
 * The MAD thread (ib_worker.c) discovers and polls the fabric and queues
 * fb_events; this loop submits them to the broker through fb_session. When
 * the session's bounded buffer is full (broker away for long), events are
 * dropped here and counted, so nothing upstream ever waits on the broker.
 */
#include "fb_agent.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_usage.h"
#include "ib_worker.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define PROG "fabricbus-agent-ib"
#define SESSION_BUFFER 8192      /* unacked events kept for resend */

struct agent {
	struct fb_agent ag;      /* options, session, signals, drain */
	struct ib_worker_cfg cfg;
	int once;
	unsigned measure;
	int ctr_interval_set;
	struct ib_worker *w;
};

static void help(void)
{
	printf("NAME\n"
	       "    " PROG " - watch InfiniBand switches and report link events to fabricbusd\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    " PROG " [--broker HOST:PORT] [--agent-id ID] [--fabric NAME]\n"
	       "                       [--interval MS] [--switches all|DESC,...] [--shard I/N]\n"
	       "                       [--unreachable-after N] [--mad-timeout MS] [--mad-retries N]\n"
	       "                       [--counters-interval MS] [--error-threshold NAME=RATE]...\n"
	       "                       [--congestion-threshold PPM] [--xmit-wait-tick-ns NS]\n"
	       "                       [--flap-count N] [--flap-window SEC]\n"
	       "                       [--map HOST:PORT] [--no-resync]\n"
	       "                       [--ca NAME] [--ca-port N] [--log-level LEVEL]\n"
	       "                       [--metrics ADDR:PORT] [--once]\n"
	       "                       [--measure N]\n"
	       "\n"
	       "DESCRIPTION\n"
	       "    Discovers the fabric by directed route from a local CA port (no subnet\n"
	       "    manager needed), then reads PortInfo of every port of every assigned switch\n"
	       "    each --interval and reports changes as events:\n"
	       "      link_down          PhysState left LinkUp (Warning)\n"
	       "      link_up            PhysState became LinkUp (OK); port_state tells Init (2)\n"
	       "                         from Active (4)\n"
	       "      port_state         PortState changed while the link stayed up (OK)\n"
	       "      switch_unreachable no PortInfo answer for --unreachable-after polls in a\n"
	       "                         row (Critical, once); its ports are not diffed meanwhile\n"
	       "      switch_reachable   it answers again (OK, once)\n"
	       "      topology           at start, one per switch port with a peer, and again\n"
	       "                         when a link comes up with a different peer\n"
	       "      flap               a port went down --flap-count times within\n"
	       "                         --flap-window (Warning, once per window; the link_down\n"
	       "                         and link_up events still go out)\n"
	       "    link_class is ISL for a switch peer and HOST for a CA peer; the last known\n"
	       "    peer is reported for a down link. All MAD I/O runs on its own thread.\n"
	       "\n"
	       "    Resync: after discovery, and again after the session reconnects, the agent\n"
	       "    reads the broker's GET /fabric/map (--map) and reports every difference\n"
	       "    with its own view as the event a live change would give (link_down,\n"
	       "    link_up, switch_unreachable, switch_reachable) with the counter resync=1\n"
	       "    (Oem.Fabricbus.Resync), before its topology events: a change made while\n"
	       "    the agent was down is reported, not taken as the new baseline.\n"
	       "\n"
	       "    Every --counters-interval it also reads PortCounters (and, when the switch's\n"
	       "    PerfMgt ClassPortInfo has them, PortCountersExtended) of every port by the\n"
	       "    switch's LID: a switch with no LID (no subnet manager yet) is skipped, logged\n"
	       "    once. Deltas use the measured time between two readings; a value below the\n"
	       "    last one is a reset and counts as the delta. With hysteresis (one event up,\n"
	       "    one down after 3 readings below, none in between):\n"
	       "      counter_threshold  an error counter's rate reached its --error-threshold\n"
	       "                         (Warning); counter_cleared when back below\n"
	       "      congestion         congestion_ppm reached --congestion-threshold (Warning);\n"
	       "                         congestion_cleared when back below, where\n"
	       "                         congestion_ppm = PortXmitWait delta * tick_ns / interval_ms\n"
	       "                         (the fraction of the interval spent waiting, in ppm)\n"
	       "\n"
	       "OPTIONS\n"
	       "    -b, --broker HOST:PORT     agent protocol address (default %s)\n"
	       "    -a, --agent-id ID          [A-Za-z0-9._:@-], < %d chars (default ib@<hostname>)\n"
	       "    -f, --fabric NAME          fabric name in every event (default IB): < 32\n"
	       "                               chars, no '/', ' ', '?', '#', '%%' (as FabricName)\n"
	       "    -i, --interval MS          poll period, >= 100 (default 1000)\n"
	       "    -s, --switches LIST        'all' (default) or node descriptions, comma separated\n"
	       "        --shard I/N            of the selected switches in GUID order, keep those\n"
	       "                               with index %% N == I (default 0/1)\n"
	       "    -u, --unreachable-after N  failed polls before switch_unreachable (default 3)\n"
	       "        --mad-timeout MS       per MAD attempt, 1..10000 (default 100)\n"
	       "        --mad-retries N        attempts per MAD, 1..10 (default 2)\n"
	       "        --ca NAME              local CA (default: the first)\n"
	       "        --ca-port N            local CA port (default: the first active)\n"
	       "        --counters-interval MS PerfMgt round period, 0 (off) or >= 100\n"
	       "                               (default: --interval)\n"
	       "        --error-threshold NAME=RATE  per second, 1..1e9; repeatable. Defaults:\n"
	       "                               symbol_error=10 link_error_recovery=1\n"
	       "                               link_downed=1 rcv_errors=10 xmit_discards=100\n"
	       "        --congestion-threshold PPM  1..1000000 (default 100000 = 10%%)\n"
	       "        --xmit-wait-tick-ns NS the PortXmitWait tick assumed, 1..1000 (default 4)\n"
	       "        --flap-count N         link downs that make a flap, 2..%d (default 3)\n"
	       "        --flap-window SEC      1..86400 (default 60)\n"
	       "        --map HOST:PORT        fabricbusd's HttpListen, for the resync (default: the\n"
	       "                               --broker host, port %d)\n"
	       "        --no-resync            do not resync against the broker's map\n"
	       FB_AGENT_MAP_AUTH_HELP
	       FB_AGENT_TLS_HELP
	       "        --no-traps             do not subscribe to SA traps 64/65/128 (a Report\n"
	       "                               only triggers an early poll of its switch)\n"
	       "    -l, --log-level LEVEL      error, warn, info (default) or debug\n"
	       FB_AGENT_METRICS_HELP
	       "        --once                 discover, poll once, print the topology of the\n"
	       "                               assigned switches as JSON lines on stdout and exit;\n"
	       "                               no broker is contacted\n"
	       "        --measure N            benchmark: discover, then time N full polls of the\n"
	       "                               assigned switches (PortInfo of every port, then\n"
	       "                               PortCounters unless --counters-interval 0) after\n"
	       "                               one warm-up poll; print poll_ms_median,\n"
	       "                               poll_ms_p99, ... as 'name: value unit' lines on\n"
	       "                               stdout and exit; no broker is contacted\n"
	       "    -h, --help                 show this help\n"
	       "\n"
	       "SIGNALS\n"
	       "    SIGTERM, SIGINT  stop polling, wait up to %d ms for the broker to ack, exit 0\n"
	       "\n"
	       "EXIT STATUS\n"
	       "    0  clean stop (or --once printed the topology)\n"
	       "    1  the IB port cannot be opened, or --once found nothing\n"
	       "    2  usage error\n",
	       FB_AGENT_DEFAULT_BROKER, FB_AGENT_ID_MAX, IB_FLAP_COUNT_MAX, FB_AGENT_MAP_PORT,
	       FB_AGENT_DRAIN_MS);
}

static int parse_shard(const char *s, unsigned *i, unsigned *n)
{
	char buf[32];
	const char *slash = strchr(s, '/');
	if (!slash || (size_t)(slash - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (fb_agent_parse_uint(buf, 0, 65535, i) || fb_agent_parse_uint(slash + 1, 1, 65536, n) ||
	    *i >= *n)
		return -1;
	return 0;
}

static int parse_opts(struct agent *a, int argc, char **argv)
{
	enum { O_SHARD = 256, O_TIMEOUT, O_RETRIES, O_CA, O_CAPORT, O_ONCE, O_CTR_INTERVAL,
	       O_ERR_THR, O_CONG_THR, O_TICK, O_FLAP_COUNT, O_FLAP_WINDOW, O_MEASURE, O_NO_TRAPS };
	static const struct option lo[] = {
		FB_AGENT_OPTIONS,
		FB_AGENT_FABRIC_OPTION,
		FB_AGENT_MAP_OPTIONS,
		{ "interval", required_argument, NULL, 'i' },
		{ "switches", required_argument, NULL, 's' },
		{ "shard", required_argument, NULL, O_SHARD },
		{ "unreachable-after", required_argument, NULL, 'u' },
		{ "mad-timeout", required_argument, NULL, O_TIMEOUT },
		{ "mad-retries", required_argument, NULL, O_RETRIES },
		{ "ca", required_argument, NULL, O_CA },
		{ "ca-port", required_argument, NULL, O_CAPORT },
		{ "once", no_argument, NULL, O_ONCE },
		{ "measure", required_argument, NULL, O_MEASURE },
		{ "counters-interval", required_argument, NULL, O_CTR_INTERVAL },
		{ "error-threshold", required_argument, NULL, O_ERR_THR },
		{ "congestion-threshold", required_argument, NULL, O_CONG_THR },
		{ "xmit-wait-tick-ns", required_argument, NULL, O_TICK },
		{ "flap-count", required_argument, NULL, O_FLAP_COUNT },
		{ "flap-window", required_argument, NULL, O_FLAP_WINDOW },
		{ "no-traps", no_argument, NULL, O_NO_TRAPS },
		{ NULL, 0, NULL, 0 },
	};
	unsigned v;
	int c, r;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:a:f:i:s:u:l:h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			if ((r = fb_agent_opt_uint(&a->ag, "interval", "milliseconds", optarg,
						   100, 3600000, &a->cfg.interval_ms)))
				return r;
			break;
		case 's':
			if (!*optarg || strstr(optarg, ",,") || *optarg == ',' ||
			    optarg[strlen(optarg) - 1] == ',')
				return fb_usage_error(PROG,
						      "bad --switches '%s': want 'all' or node descriptions "
						      "separated by single commas", optarg);
			a->cfg.switches = optarg;
			break;
		case O_SHARD:
			if (parse_shard(optarg, &a->cfg.shard_i, &a->cfg.shard_n))
				return fb_usage_error(PROG,
						      "bad --shard '%s': want I/N with 0 <= I < N",
						      optarg);
			break;
		case 'u':
			if ((r = fb_agent_opt_uint(&a->ag, "unreachable-after", NULL, optarg,
						   1, 1000, &a->cfg.unreachable_after)))
				return r;
			break;
		case O_TIMEOUT:
			if ((r = fb_agent_opt_uint(&a->ag, "mad-timeout", "milliseconds", optarg,
						   1, 10000, &v)))
				return r;
			a->cfg.timeout_ms = (int)v;
			break;
		case O_RETRIES:
			if ((r = fb_agent_opt_uint(&a->ag, "mad-retries", NULL, optarg,
						   1, 10, &v)))
				return r;
			a->cfg.retries = (int)v;
			break;
		case O_CA:
			if (!*optarg || strlen(optarg) >= 20)
				return fb_usage_error(PROG,
						      "bad --ca '%s': want a CA name (ibstat lists them)",
						      optarg);
			a->cfg.ca = optarg;
			break;
		case O_CAPORT:
			if ((r = fb_agent_opt_uint(&a->ag, "ca-port", NULL, optarg,
						   1, 254, &v)))
				return r;
			a->cfg.ca_port = (int)v;
			break;
		case O_ONCE: a->once = 1; break;
		case O_MEASURE:
			if ((r = fb_agent_opt_uint(&a->ag, "measure", NULL, optarg,
						   1, 100000, &a->measure)))
				return r;
			break;
		case O_CTR_INTERVAL:
			if (fb_agent_parse_uint(optarg, 0, 3600000, &v) || (v && v < 100))
				return fb_usage_error(PROG, "bad --counters-interval '%s': want 0 (off) or "
						      "milliseconds, 100..3600000", optarg);
			a->cfg.ctr.interval_ms = v;
			a->ctr_interval_set = 1;
			break;
		case O_ERR_THR:
			if (ib_ctr_parse_threshold(&a->cfg.ctr, optarg))
				return fb_usage_error(PROG,
						      "bad --error-threshold '%s': want NAME=RATE, NAME one "
						      "of symbol_error, link_error_recovery, link_downed, "
						      "rcv_errors, xmit_discards, RATE 1..1000000000 per second",
						      optarg);
			break;
		case O_CONG_THR:
			if ((r = fb_agent_opt_uint(&a->ag, "congestion-threshold", "parts per million", optarg,
						   1, 1000000, &v)))
				return r;
			a->cfg.ctr.congestion_ppm = v;
			break;
		case O_TICK:
			if ((r = fb_agent_opt_uint(&a->ag, "xmit-wait-tick-ns", NULL, optarg,
						   1, 1000, &a->cfg.ctr.tick_ns)))
				return r;
			break;
		case O_FLAP_COUNT:
			if ((r = fb_agent_opt_uint(&a->ag, "flap-count", NULL, optarg,
						   2, IB_FLAP_COUNT_MAX, &a->cfg.flap.count)))
				return r;
			break;
		case O_FLAP_WINDOW:
			if ((r = fb_agent_opt_uint(&a->ag, "flap-window", "seconds", optarg,
						   1, 86400, &a->cfg.flap.window_s)))
				return r;
			break;
		case O_NO_TRAPS: a->cfg.traps = 0; break;
		default:
			if ((r = fb_agent_opt(&a->ag, c, argv)) != 0)
				return r;
		}
	}
	if (!a->ctr_interval_set)
		a->cfg.ctr.interval_ms = a->cfg.interval_ms;
	if ((r = fb_agent_opts_done(&a->ag, argc, argv)) != 0)
		return r;
	a->cfg.fabric = a->ag.fabric;
	a->cfg.map_host = a->ag.resync ? a->ag.map_host : NULL;
	a->cfg.map_port = a->ag.map_port;
	a->cfg.map_client = &a->ag.map_auth.client;
	a->cfg.agent_id = a->ag.agent_id;
	return 0;
}

/* ---- the loop ---------------------------------------------------------------- */

static void deliver(void *arg, const struct fb_event *ev)
{
	struct agent *a = arg;
	fb_agent_submit(&a->ag, ev);
}

static void on_fatal(void *arg)
{
	struct agent *a = arg;
	fb_agent_fatal(&a->ag);
}

/* A signal: the MAD thread stops and delivers what it still held. */
static void on_stop(void *arg)
{
	struct agent *a = arg;
	ib_worker_stop(a->w);
}

static void on_reconnected(void *arg)
{
	struct agent *a = arg;
	ib_worker_resync(a->w);
}

static int run(struct agent *a)
{
	const struct fb_agent_hooks h = { .stop = on_stop, .reconnected = on_reconnected, .arg = a };
	if (fb_agent_session(&a->ag, SESSION_BUFFER, &h))
		return 1;
	a->cfg.poll_seconds = a->ag.poll_seconds;
	int rc = ib_worker_start(a->ag.base, &a->cfg, deliver, on_fatal, a, &a->w);
	if (rc) {
		fb_log_err("cannot start: %s", fb_strerror(rc));
		return 1;
	}
	fb_log_info("agent '%s' reporting fabric '%s' to %s:%d, polling every %u ms, counters "
		    "every %u ms", a->ag.agent_id, a->cfg.fabric, a->ag.host, a->ag.port,
		    a->cfg.interval_ms, a->cfg.ctr.interval_ms);
	int status = fb_agent_run(&a->ag);
	ib_worker_stop(a->w);
	uint64_t qdrop = ib_worker_dropped(a->w);
	if (a->ag.dropped || qdrop)
		fb_log_warn("%llu events dropped (session buffer full), %llu (MAD thread queue full)",
			    (unsigned long long)a->ag.dropped, (unsigned long long)qdrop);
	return status;
}

int main(int argc, char **argv)
{
	struct agent a = { 0 };
	a.cfg = (struct ib_worker_cfg){ .timeout_ms = 100, .retries = 2, .interval_ms = 1000,
				        .unreachable_after = 3, .switches = "all", .shard_n = 1,
				        .flap = { .count = 3, .window_s = 60 }, .traps = 1 };
	ib_ctr_cfg_default(&a.cfg.ctr, a.cfg.interval_ms);
	fb_agent_init(&a.ag, PROG, "ib");
	a.ag.help = help;
	a.ag.fabric = "IB";
	int r = parse_opts(&a, argc, argv);
	if (r)
		return r < 0 ? 0 : r;
	if (a.measure)
		return ib_worker_measure(&a.cfg, a.measure, stdout);
	if (a.once)
		return ib_worker_once(&a.cfg, a.ag.agent_id, stdout);

	int status = fb_agent_base(&a.ag, 1) ? 1 : run(&a);
	ib_worker_free(a.w);
	fb_agent_free(&a.ag);
	return status;
}

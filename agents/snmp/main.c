/* main.c - fabricbus-agent-snmp: options, the libevent loop and the session.
 *
 * One thread. The trap receiver (snmp_trap.c) and the IF-MIB poller
 * (snmp_poll.c) are net-snmp sessions whose sockets are events on this
 * loop; their events go to the broker through fb_session. When the
 * session's buffer of unacked events is nearly full the receiver stops
 * reading and the kernel's socket buffer holds the storm; what overflows
 * that is the documented drop point (kernel_drops in the stats line).
 */
#include "fb_agent.h"
#include "fb_metrics.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_session.h"
#include "fb_usage.h"
#include "snmp_conf.h"
#include "snmp_netsnmp.h"
#include "snmp_poll.h"
#include "snmp_resync.h"
#include "snmp_trap.h"

#include <event2/event.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "fabricbus-agent-snmp"
#define DEFAULT_LISTEN "udp:0.0.0.0:162"

struct agent {
	struct fb_agent ag;      /* options, session, signals, drain */
	const char *config, *listen;
	unsigned rcvbuf, buffer, traps;
	struct snmp_poll_cfg pcfg;
	struct snmp_conf conf;

	struct snmp_trap *trap;
	struct snmp_poll *poll;
	struct event *sigusr1;
	struct snmp_metrics {
		struct fb_metric *packets, *kernel_drops, *poll_events;
		/* fabricbus_snmp_traps_total{result=...}: event, dropped, ignored,
		 * malformed, bad_community, v3_rejected, not_trap */
		struct fb_metric *traps[7];
	} m;
};

static void help(void)
{
	printf("NAME\n"
	       "    " PROG " - receive SNMP traps and poll IF-MIB of Ethernet switches, report\n"
	       "    link events to fabricbusd\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    " PROG " [--broker HOST:PORT] [--agent-id ID] [--fabric NAME]\n"
	       "                         [--config FILE] [--listen SPEC] [--no-traps]\n"
	       "                         [--rcvbuf BYTES] [--buffer EVENTS]\n"
	       "                         [--poll-interval MS] [--poll-timeout MS] [--poll-retries N]\n"
	       "                         [--mac-interval MS]\n"
	       "                         [--unreachable-after N] [--error-threshold NAME=RATE]...\n"
	       "                         [--map HOST:PORT] [--no-resync] [--log-level LEVEL]\n"
	       "                         [--metrics ADDR:PORT]\n"
	       "\n"
	       "DESCRIPTION\n"
	       "    Traps (v1, v2c, v3 authPriv; INFORMs acknowledged): linkDown becomes\n"
	       "    link_down (Warning), or port_state (OK) when ifAdminStatus is down (an\n"
	       "    operator's choice is not a fault); linkUp becomes link_up (OK); the\n"
	       "    config's Trap= OIDs become events of their kind and severity. The poller\n"
	       "    reads ifTable/ifXTable of each Poll= switch with GETBULK every\n"
	       "    --poll-interval and reports ifOperStatus changes the same way, error and\n"
	       "    discard rates over --error-threshold (counter_threshold / counter_cleared,\n"
	       "    with hysteresis) and switch_unreachable / switch_reachable.\n"
	       "    Ports to hosts: after a poll round, every --mac-interval, the poller walks\n"
	       "    the switch's lldpRemTable, dot1d/dot1qTpFdbTable and ipNetToPhysicalTable\n"
	       "    and reports the one host MAC behind each port (a topology event with the\n"
	       "    MAC as peer); the broker names the node that owns the MAC on every event\n"
	       "    of the port, so fabricbus-slurm drains it on an Ethernet link failure.\n"
	       "    Resync: after a switch's first poll round, and again after the session\n"
	       "    reconnects, the poller reads the broker's GET /fabric/map (--map) and\n"
	       "    reports every difference with its own view as the event a live change\n"
	       "    would give, with the counter resync=1 (Oem.Fabricbus.Resync); a port the\n"
	       "    broker has no state of gets a topology event (its baseline).\n"
	       "    docs/agents.md has the config file format, events and counters.\n"
	       "\n"
	       "OPTIONS\n"
	       "    -b, --broker HOST:PORT     agent protocol address (default %s)\n"
	       "    -a, --agent-id ID          [A-Za-z0-9._:@-], < %d chars (default snmp@<hostname>)\n"
	       "    -f, --fabric NAME          fabric name in every event (default ETH): < 32\n"
	       "                               chars, no '/', ' ', '?', '#', '%%' (as FabricName)\n"
	       "    -c, --config FILE          communities, USM users, switch names, Trap= and\n"
	       "                               Poll= lines; must be mode 600 (or stricter)\n"
	       "        --listen SPEC          trap address, net-snmp transport form (default\n"
	       "                               %s)\n"
	       "        --no-traps             do not listen for traps (poll only)\n"
	       "        --rcvbuf BYTES         trap socket receive buffer (default 33554432)\n"
	       "        --buffer EVENTS        unacked events kept for the broker (default 65536)\n"
	       "        --poll-interval MS     IF-MIB poll period, 100..3600000 (default 10000)\n"
	       "        --poll-timeout MS      per request, 10..60000 (default 1000)\n"
	       "        --poll-retries N       0..10 (default 1)\n"
	       "        --mac-interval MS      LLDP/FDB/ARP walk period, 0 (never) or\n"
	       "                               100..86400000 (default 60000)\n"
	       "    -u, --unreachable-after N  failed polls before switch_unreachable (default 3)\n"
	       "        --error-threshold NAME=RATE  per second; NAME if_in_errors,\n"
	       "                               if_out_errors, if_in_discards, if_out_discards\n"
	       "                               (defaults 10, 10, 100, 100)\n"
	       FB_AGENT_MAP_HELP
	       FB_AGENT_TLS_HELP
	       "    -l, --log-level LEVEL      error, warn, info (default) or debug\n"
	       FB_AGENT_METRICS_HELP
	       "    -h, --help                 show this help\n"
	       "\n"
	       "SIGNALS\n"
	       "    SIGUSR1          log the stats line now\n"
	       "    SIGTERM, SIGINT  stop, wait up to %d ms for the broker to ack, log the\n"
	       "                     stats line, exit 0\n"
	       "\n"
	       "EXIT STATUS\n"
	       "    0 clean stop; 1 cannot start (config, address, broker session); 2 usage\n",
	       FB_AGENT_DEFAULT_BROKER, FB_AGENT_ID_MAX, DEFAULT_LISTEN, FB_AGENT_MAP_PORT,
	       FB_AGENT_DRAIN_MS);
}

enum { O_LISTEN = 256, O_NO_TRAPS, O_RCVBUF, O_BUFFER, O_PINT, O_PTIMEOUT, O_PRETRIES,
       O_ERR_THR, O_MACINT };

static const struct option snmp_options[] = {
	FB_AGENT_OPTIONS,
	FB_AGENT_FABRIC_OPTION,
	FB_AGENT_MAP_OPTIONS,
	{ "config", required_argument, NULL, 'c' },
	{ "listen", required_argument, NULL, O_LISTEN },
	{ "no-traps", no_argument, NULL, O_NO_TRAPS },
	{ "rcvbuf", required_argument, NULL, O_RCVBUF },
	{ "buffer", required_argument, NULL, O_BUFFER },
	{ "poll-interval", required_argument, NULL, O_PINT },
	{ "poll-timeout", required_argument, NULL, O_PTIMEOUT },
	{ "poll-retries", required_argument, NULL, O_PRETRIES },
	{ "mac-interval", required_argument, NULL, O_MACINT },
	{ "unreachable-after", required_argument, NULL, 'u' },
	{ "error-threshold", required_argument, NULL, O_ERR_THR },
	{ NULL, 0, NULL, 0 },
};

static int snmp_opt(void *arg, int c)
{
	struct agent *a = arg;
	switch (c) {
	case 'c': a->config = optarg; break;
	case O_LISTEN: a->listen = optarg; break;
	case O_NO_TRAPS: a->traps = 0; break;
	case O_RCVBUF:
		if (fb_agent_parse_uint(optarg, 65536, 1U << 30, &a->rcvbuf))
			return fb_usage_error(PROG, "bad --rcvbuf '%s': want bytes, 65536..2^30",
					      optarg);
		break;
	case O_BUFFER:
		return fb_agent_opt_uint(&a->ag, "buffer", NULL, optarg, 64, 4U << 20, &a->buffer);
	case O_PINT:
		return fb_agent_opt_uint(&a->ag, "poll-interval", NULL, optarg,
					 100, 3600000, &a->pcfg.interval_ms);
	case O_PTIMEOUT:
		return fb_agent_opt_uint(&a->ag, "poll-timeout", NULL, optarg,
					 10, 60000, &a->pcfg.timeout_ms);
	case O_PRETRIES:
		return fb_agent_opt_uint(&a->ag, "poll-retries", NULL, optarg, 0, 10, &a->pcfg.retries);
	case O_MACINT:
		if (strcmp(optarg, "0") != 0 &&
		    fb_agent_parse_uint(optarg, 100, 86400000, &a->pcfg.mac_interval_ms))
			return fb_usage_error(PROG, "bad --mac-interval '%s': want 0 or "
					      "100..86400000", optarg);
		if (strcmp(optarg, "0") == 0)
			a->pcfg.mac_interval_ms = 0;
		break;
	case 'u':
		return fb_agent_opt_uint(&a->ag, "unreachable-after", NULL, optarg,
					 1, 1000, &a->pcfg.ifc.unreachable_after);
	case O_ERR_THR:
		if (snmp_ifc_parse_threshold(&a->pcfg.ifc, optarg))
			return fb_usage_error(PROG, "bad --error-threshold '%s': want NAME=RATE, "
					      "NAME one of if_in_errors, if_out_errors, "
					      "if_in_discards, if_out_discards, RATE 1..1000000000",
					      optarg);
		break;
	default:
		return FB_AGENT_OPT_NOT_MINE;
	}
	return 0;
}

/* ---- the loop ---------------------------------------------------------------- */

/* Reading traps pauses above this many unacked events and resumes below
 * half of it, so the session never refuses a trap's event. */
static size_t high_water(const struct agent *a)
{
	return a->buffer - a->buffer / 8;
}

static int room(void *arg)
{
	struct agent *a = arg;
	struct fb_session_stats st;
	fb_session_get_stats(a->ag.s, &st);
	return st.unacked < high_water(a);
}

static int deliver(void *arg, const struct fb_event *ev)
{
	struct agent *a = arg;
	return fb_session_submit(a->ag.s, ev);
}

static void deliver_poll(void *arg, const struct fb_event *ev)
{
	struct agent *a = arg;
	fb_agent_submit(&a->ag, ev);
}

static void on_ack(void *arg, uint64_t acked_seq)
{
	(void)acked_seq;
	struct agent *a = arg;
	struct fb_session_stats st;
	fb_session_get_stats(a->ag.s, &st);
	if (a->trap && st.unacked < a->buffer / 2)
		snmp_trap_resume(a->trap);
}

static void log_stats(struct agent *a)
{
	struct snmp_trap_stats t = { 0 };
	struct fb_session_stats s = { 0 };
	uint64_t kdrops = 0;
	if (a->trap) {
		snmp_trap_get_stats(a->trap, &t);
		kdrops = snmp_trap_kernel_drops(a->trap);
	}
	if (a->ag.s)
		fb_session_get_stats(a->ag.s, &s);
	fb_log_info("stats: packets=%llu events=%llu dropped=%llu kernel_drops=%llu ignored=%llu "
		    "malformed=%llu bad_community=%llu v3_rejected=%llu informs_acked=%llu "
		    "not_traps=%llu pauses=%llu poll_events=%llu poll_dropped=%llu submitted=%llu "
		    "acked=%llu unacked=%zu",
		    (unsigned long long)t.packets, (unsigned long long)t.events,
		    (unsigned long long)t.dropped, (unsigned long long)kdrops,
		    (unsigned long long)t.ignored, (unsigned long long)t.malformed,
		    (unsigned long long)t.bad_community, (unsigned long long)t.v3_rejected,
		    (unsigned long long)t.informs_acked, (unsigned long long)t.not_traps,
		    (unsigned long long)t.pauses,
		    (unsigned long long)(a->poll ? snmp_poll_events(a->poll) : 0),
		    (unsigned long long)a->ag.dropped, (unsigned long long)s.submitted,
		    (unsigned long long)s.acked, s.unacked);
}

static void on_usr1(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	log_stats(arg);
}

#define SM(field) offsetof(struct snmp_metrics, field)
#define TRAPS_HELP "Traps received, by what became of them."
static const struct fb_metric_def snmp_series[] = {
	{ FB_METRIC_COUNTER, "fabricbus_snmp_trap_packets_total",
	  "Trap PDUs decoded and authenticated.", NULL, SM(packets) },
	{ FB_METRIC_COUNTER, "fabricbus_snmp_trap_kernel_drops_total",
	  "Trap datagrams the kernel dropped (socket buffer full).", NULL, SM(kernel_drops) },
	{ FB_METRIC_COUNTER, "fabricbus_snmp_poll_events_total", "Events the IF-MIB poller reported.",
	  NULL, SM(poll_events) },
	{ FB_METRIC_COUNTER, "fabricbus_snmp_traps_total", TRAPS_HELP, "result=\"event\"", SM(traps[0]) },
	{ FB_METRIC_COUNTER, "fabricbus_snmp_traps_total", TRAPS_HELP, "result=\"dropped\"", SM(traps[1]) },
	{ FB_METRIC_COUNTER, "fabricbus_snmp_traps_total", TRAPS_HELP, "result=\"ignored\"", SM(traps[2]) },
	{ FB_METRIC_COUNTER, "fabricbus_snmp_traps_total", TRAPS_HELP, "result=\"malformed\"",
	  SM(traps[3]) },
	{ FB_METRIC_COUNTER, "fabricbus_snmp_traps_total", TRAPS_HELP, "result=\"bad_community\"",
	  SM(traps[4]) },
	{ FB_METRIC_COUNTER, "fabricbus_snmp_traps_total", TRAPS_HELP, "result=\"v3_rejected\"",
	  SM(traps[5]) },
	{ FB_METRIC_COUNTER, "fabricbus_snmp_traps_total", TRAPS_HELP, "result=\"not_trap\"",
	  SM(traps[6]) },
};
#undef SM

static int metrics_init(struct agent *a)
{
	return fb_metrics_add_all(a->ag.metrics, snmp_series, sizeof(snmp_series) / sizeof(snmp_series[0]),
				  &a->m, NULL);
}

/* Before a /metrics scrape (loop thread). */
static void collect(void *arg)
{
	struct agent *a = arg;
	struct snmp_metrics *m = &a->m;
	if (a->trap) {
		struct snmp_trap_stats t;
		snmp_trap_get_stats(a->trap, &t);
		const uint64_t by[7] = { t.events, t.dropped, t.ignored, t.malformed, t.bad_community,
					 t.v3_rejected, t.not_traps };
		for (size_t i = 0; i < 7; i++)
			fb_metric_set(m->traps[i], (double)by[i]);
		fb_metric_set(m->packets, (double)t.packets);
		fb_metric_set(m->kernel_drops, (double)snmp_trap_kernel_drops(a->trap));
	}
	if (a->poll)
		fb_metric_set(m->poll_events, (double)snmp_poll_events(a->poll));
}

/* snmp_poll_cfg.resync: a switch's round is complete, diff it against the
 * broker's map. */
static int on_resync(void *arg, const struct snmp_ifc_switch *sw, snmp_ifc_emit_fn emit,
		     void *emit_arg)
{
	struct agent *a = arg;
	return snmp_resync_switch(&a->ag.map_auth.client, a->ag.map_host, a->ag.map_port, sw, emit, emit_arg);
}

static void on_reconnected(void *arg)
{
	struct agent *a = arg;
	snmp_poll_resync(a->poll);
}

/* A signal: stop reading. Traps still in the kernel's buffer are not read:
 * the switches resend state on the next change, and the poller catches up. */
static void on_stop(void *arg)
{
	struct agent *a = arg;
	snmp_trap_stop(a->trap);
	snmp_poll_stop(a->poll);
}

static int run(struct agent *a)
{
	char err[512];
	const struct fb_agent_hooks h = { .stop = on_stop, .reconnected = on_reconnected,
					  .ack = on_ack, .collect = collect, .arg = a };
	if (metrics_init(a)) {
		fb_log_err("out of memory setting up the metrics");
		return 1;
	}
	if (fb_agent_session(&a->ag, a->buffer, &h))
		return 1;
	a->sigusr1 = evsignal_new(a->ag.base, SIGUSR1, on_usr1, a);
	if (!a->sigusr1 || event_add(a->sigusr1, NULL)) {
		fb_log_err("out of memory setting up the event loop");
		return 1;
	}
	struct snmp_trap_cfg tc = {
		.listen = a->listen, .rcvbuf = (int)a->rcvbuf,
		.map = { .conf = &a->conf, .fabric = a->ag.fabric },
		.deliver = deliver, .room = room, .deliver_arg = a,
	};
	a->pcfg.conf = &a->conf;
	a->pcfg.fabric = a->ag.fabric;
	a->pcfg.emit = deliver_poll;
	a->pcfg.emit_arg = a;
	a->pcfg.resync = a->ag.resync ? on_resync : NULL;
	if (a->conf.n_polls &&
	    snmp_poll_start(a->ag.base, &a->pcfg, &a->poll, err, sizeof(err)) != 0) {
		fb_log_err("%s", err);
		return 1;
	}
	if (a->poll) {
		tc.map.ifname = snmp_poll_ifname;
		tc.map.ifname_arg = a->poll;
		tc.map.peer = snmp_poll_peer;
		tc.map.peer_arg = a->poll;
	}
	if (a->traps && snmp_trap_open(a->ag.base, &tc, &a->trap, err, sizeof(err)) != 0) {
		fb_log_err("%s", err);
		return 1;
	}
	fb_log_info("agent '%s' reporting fabric '%s' to %s:%d; traps %s%s; polling %zu switch(es) "
		    "every %u ms", a->ag.agent_id, a->ag.fabric, a->ag.host, a->ag.port,
		    a->traps ? "on " : "off", a->traps ? a->listen : "", a->conf.n_polls,
		    a->pcfg.interval_ms);
	int status = fb_agent_run(&a->ag);
	log_stats(a);
	return status;
}

int main(int argc, char **argv)
{
	struct agent a = { .listen = DEFAULT_LISTEN, .rcvbuf = 32U << 20, .buffer = 65536,
			   .traps = 1 };
	char err[512];
	snmp_poll_cfg_default(&a.pcfg);
	fb_agent_init(&a.ag, PROG, "snmp");
	a.ag.help = help;
	a.ag.has_config = 1;
	a.ag.fabric = "ETH";
	int r = fb_agent_getopt(&a.ag, argc, argv, ":b:a:f:c:u:l:h", snmp_options, snmp_opt, &a);
	if (r)
		return r < 0 ? 0 : r;
	if (a.config && snmp_conf_load(&a.conf, a.config, err, sizeof(err)) != 0) {
		fb_log_err("%s", err);
		return 1;
	}
	if (!a.config)
		fb_log_warn("no --config: every v1/v2c trap is refused and v3 has no users");
	int status = 1;
	if (snmp_netsnmp_init(PROG, &a.conf, err, sizeof(err)) != 0)
		fb_log_err("%s", err);
	else if (fb_agent_base(&a.ag, 0) == 0)
		status = run(&a);
	snmp_trap_free(a.trap);
	snmp_poll_free(a.poll);
	if (a.sigusr1)
		event_free(a.sigusr1);
	fb_agent_free(&a.ag);
	snmp_netsnmp_shutdown(PROG);
	snmp_conf_free(&a.conf);
	return status;
}

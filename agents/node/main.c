/* main.c - fabricbus-agent-node: options, the libevent loop and the session.
 *
 * Runs on every compute node. It reports which local ports this node owns
 * (one inventory event per IB CA port and per Ethernet interface) so that
 * the broker can put a node name on switch-side events, and it watches
 * those ports: IB by reading sysfs through libibumad every --interval,
 * Ethernet through rtnetlink notifications. Each scan is diffed against the
 * last one: a new port or a changed GUID/LID/MAC gives a fresh inventory
 * event, a link going down or up gives link_down/link_up (link class node).
 * Everything runs on the loop thread: no MAD is sent, so nothing blocks.
 */
#include "fb_agent.h"
#include "fb_err.h"
#include "fb_event_json.h"
#include "fb_log.h"
#include "fb_http.h"
#include "fb_map_get.h"
#include "fb_metrics.h"
#include "fb_time.h"
#include "fb_usage.h"
#include "node_eth.h"
#include "node_ib.h"
#include "node_resync.h"

#include <event2/event.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "fabricbus-agent-node"
#define SESSION_BUFFER 8192
#define MAP_TIMEOUT_MS 2000   /* a GET /fabric/map of the resync, at start */
#define RESYNC_AGAIN_MS 1000  /* its second pass */

struct scan {
	struct node_port p[NODE_PORTS_MAX];
	size_t n;
	int valid; /* a first scan was taken */
};

struct agent {
	struct fb_agent ag;       /* options, session, signals, drain */
	char node[FB_NAME_MAX];
	unsigned interval_ms;
	int no_ib, no_eth, once;
	json_t *map;              /* the broker's view of this node, during the first scans */
	struct event *resync_again;

	struct event *ib_timer, *nl_ev;
	int nl_fd;
	uint64_t emitted;
	struct scan ib, eth, cur; /* cur: scratch for the scan in progress */
};

static void help(void)
{
	printf("NAME\n"
	       "    " PROG " - report this node's fabric ports and their links to fabricbusd\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    " PROG " [--broker HOST:PORT] [--agent-id ID] [--node-name NAME]\n"
	       "                         [--interval MS] [--no-ib] [--no-eth] [--log-level LEVEL]\n"
	       "                         [--metrics ADDR:PORT]\n"
	       "                         [--map HOST:PORT] [--no-resync] [--once]\n"
	       "\n"
	       "DESCRIPTION\n"
	       "    Runs on every compute node. At start it sends one inventory event per local\n"
	       "    port: each port of each InfiniBand CA (libibumad: CA name, node GUID, port\n"
	       "    GUID, base LID, PortState, PhysState) and each Ethernet interface but\n"
	       "    loopback (rtnetlink: name, ifindex, MAC, oper state). The broker keeps the\n"
	       "    port GUID/MAC -> node map from these and names the node on switch events.\n"
	       "    Then it watches the ports and reports, with link class 'node':\n"
	       "      inventory   a new port, or a port whose GUID, LID, MAC or ifindex changed\n"
	       "      link_down   IB PhysState left LinkUp, Ethernet oper state left up (Warning)\n"
	       "      link_up     and back (OK)\n"
	       "      port_state  IB PortState changed while the link stayed up (OK)\n"
	       "    IB ports are read from sysfs every --interval; Ethernet changes arrive as\n"
	       "    rtnetlink notifications (RTMGRP_LINK). The CA node GUID of an IB port is in\n"
	       "    the event text as 'node_guid=0x...'.\n"
	       "    Under ibsim's umad2sim shim, sysfs is a snapshot taken when the process\n"
	       "    started: inventory is right, but later link changes are not seen here;\n"
	       "    fabricbus-agent-ib reports those from the switch side.\n"
	       "    Resync: at start, before its inventory, the agent reads GET\n"
	       "    /fabric/map?nodes=<node> (--map) and reports each port whose state differs\n"
	       "    from the broker's NodeLinkState as link_down/link_up with the counter\n"
	       "    resync=1 (Oem.Fabricbus.Resync): a change made while it was down is\n"
	       "    reported, not taken as the new baseline.\n"
	       "\n"
	       "OPTIONS\n"
	       "    -b, --broker HOST:PORT  agent protocol address (default %s)\n"
	       "    -a, --agent-id ID       [A-Za-z0-9._:@-], < %d chars (default node@<hostname>)\n"
	       "    -n, --node-name NAME    Slurm node name (default: the host name up to the\n"
	       "                            first '.')\n"
	       "    -i, --interval MS       IB sysfs poll period, 100..3600000 (default 1000)\n"
	       "        --no-ib             do not report InfiniBand ports\n"
	       "        --no-eth            do not report Ethernet interfaces\n"
	       FB_AGENT_MAP_HELP
	       FB_AGENT_TLS_HELP
	       "    -l, --log-level LEVEL   error, warn, info (default) or debug\n"
	       "        --metrics ADDR:PORT serve Prometheus GET /metrics there (default: off)\n"
	       "        --once              print the inventory as JSON lines on stdout and exit;\n"
	       "                            no broker is contacted\n"
	       "    -h, --help              show this help\n"
	       "\n"
	       "SIGNALS\n"
	       "    SIGTERM, SIGINT  stop watching, wait up to %d ms for the broker to ack, exit 0\n"
	       "\n"
	       "EXIT STATUS\n"
	       "    0  clean stop (or --once printed the inventory)\n"
	       "    1  a port source cannot be read, or --once found no port\n"
	       "    2  usage error\n",
	       FB_AGENT_DEFAULT_BROKER, FB_AGENT_ID_MAX, FB_AGENT_MAP_PORT, FB_AGENT_DRAIN_MS);
}

static int default_node_name(char *out, size_t outsz)
{
	char h[256];
	if (gethostname(h, sizeof(h)) != 0)
		return -1;
	h[sizeof(h) - 1] = '\0';
	h[strcspn(h, ".")] = '\0';
	if (!h[0] || strlen(h) >= outsz)
		return -1;
	snprintf(out, outsz, "%s", h);
	return 0;
}

enum { O_NO_IB = 256, O_NO_ETH, O_ONCE };

static const struct option node_options[] = {
	FB_AGENT_OPTIONS,
	FB_AGENT_MAP_OPTIONS,
	{ "node-name", required_argument, NULL, 'n' },
	{ "interval", required_argument, NULL, 'i' },
	{ "no-ib", no_argument, NULL, O_NO_IB },
	{ "no-eth", no_argument, NULL, O_NO_ETH },
	{ "once", no_argument, NULL, O_ONCE },
	{ NULL, 0, NULL, 0 },
};

static int node_opt(void *arg, int c)
{
	struct agent *a = arg;
	switch (c) {
	case 'n':
		if (!*optarg || strlen(optarg) >= FB_NAME_MAX || strchr(optarg, '/'))
			return fb_usage_error(PROG,
					      "bad --node-name '%s': want 1..%d chars, no '/'",
					      optarg, FB_NAME_MAX - 1);
		snprintf(a->node, sizeof(a->node), "%s", optarg);
		break;
	case 'i':
		return fb_agent_opt_uint(&a->ag, "interval", "milliseconds", optarg,
					 100, 3600000, &a->interval_ms);
	case O_NO_IB: a->no_ib = 1; break;
	case O_NO_ETH: a->no_eth = 1; break;
	case O_ONCE: a->once = 1; break;
	default:
		return FB_AGENT_OPT_NOT_MINE;
	}
	return 0;
}

static int parse_opts(struct agent *a, int argc, char **argv)
{
	int r = fb_agent_getopt(&a->ag, argc, argv, ":b:a:n:i:l:h", node_options, node_opt, a);
	if (r != 0)
		return r;
	if (a->no_ib && a->no_eth)
		return fb_usage_error(PROG, "--no-ib and --no-eth together leave nothing to report");
	if (!a->node[0] && default_node_name(a->node, sizeof(a->node)) != 0)
		return fb_usage_error(PROG, "cannot take the node name from the host name: give --node-name");
	return 0;
}

/* ---- events ------------------------------------------------------------------ */

static void port_event(const struct agent *a, const struct node_port *p, uint8_t kind,
		       struct fb_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->agent_id, sizeof(ev->agent_id), "%s", a->ag.agent_id);
	ev->ts_ns = fb_now_ns();
	ev->kind = kind;
	ev->severity = kind == FB_KIND_LINK_DOWN ? FB_SEV_WARNING : FB_SEV_OK;
	ev->link_class = FB_LINK_NODE;
	ev->tech = p->tech;
	ev->port_state = p->port_state;
	ev->phys_state = p->phys_state;
	snprintf(ev->subj.node, sizeof(ev->subj.node), "%s", a->node);
	snprintf(ev->subj.device, sizeof(ev->subj.device), "%s", p->device);
	ev->subj.port = p->port;
	ev->subj.port_guid = p->port_guid;
	ev->subj.lid = p->lid;
	ev->subj.ifindex = p->ifindex;
	snprintf(ev->subj.addr, sizeof(ev->subj.addr), "%s", p->mac);
	if (p->tech == FB_TECH_IB)
		snprintf(ev->text, sizeof(ev->text), "node_guid=0x%016" PRIx64, p->node_guid);
}

static void emit(struct agent *a, const struct fb_event *ev)
{
	a->emitted++;
	if (a->once) {
		json_t *j = fb_event_to_json(ev);
		char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
		return;
	}
	fb_agent_submit(&a->ag, ev);
}

static const struct node_port *find(const struct scan *s, const struct node_port *p)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].tech == p->tech && s->p[i].port == p->port &&
		    strcmp(s->p[i].device, p->device) == 0)
			return &s->p[i];
	return NULL;
}

static int identity_changed(const struct node_port *o, const struct node_port *c)
{
	return o->node_guid != c->node_guid || o->port_guid != c->port_guid || o->lid != c->lid ||
	       o->ifindex != c->ifindex || strcmp(o->mac, c->mac) != 0;
}

/* First scan, before the port's inventory, or after a reconnect: the
 * broker's map says otherwise (node_resync.h). */
static void resync_port(struct agent *a, const struct node_port *c, int reconnected)
{
	/* At start, a live event since is newer than what the map says; after a
	 * reconnect everything we sent is acked, so the map should show it all:
	 * what it does not show, the broker lost. */
	uint8_t kind = a->map && (reconnected || !c->live) ? node_resync_kind(a->map, a->node, c) : 0;
	if (!kind)
		return;
	struct fb_event ev;
	port_event(a, c, kind, &ev);
	(void)fb_event_add_counter(&ev, FB_CTR_RESYNC, 1); /* the first counter: never full */
	snprintf(ev.text, sizeof(ev.text), "link %s, found at resync (was %s)",
		 kind == FB_KIND_LINK_UP ? "up" : "down", kind == FB_KIND_LINK_UP ? "down" : "up");
	fb_log_info("resync: %s port %u: %s", c->device, c->port, ev.text);
	emit(a, &ev);
}

/* Turn the difference between the last scan and cur into events; cur
 * becomes the last scan. The first scan reports inventory only, after the
 * resync's differences. */
static void diff(struct agent *a, struct scan *last, struct scan *cur)
{
	struct fb_event ev;
	for (size_t i = 0; i < cur->n; i++) {
		struct node_port *c = &cur->p[i];
		const struct node_port *o = last->valid ? find(last, c) : NULL;
		c->live = o && (o->live || o->up != c->up);
		if (!last->valid)
			resync_port(a, c, 0);
		if (!o || identity_changed(o, c)) {
			port_event(a, c, FB_KIND_INVENTORY, &ev);
			emit(a, &ev);
		}
		if (!o)
			continue;
		if (o->up != c->up) {
			fb_log_info("%s port %u: link %s", c->device, c->port, c->up ? "up" : "down");
			port_event(a, c, c->up ? FB_KIND_LINK_UP : FB_KIND_LINK_DOWN, &ev);
			emit(a, &ev);
		} else if (c->up && o->port_state != c->port_state) {
			port_event(a, c, FB_KIND_PORT_STATE, &ev);
			emit(a, &ev);
		}
	}
	for (size_t i = 0; last->valid && i < last->n; i++) {
		const struct node_port *o = &last->p[i];
		if (find(cur, o))
			continue;
		fb_log_info("%s port %u is gone", o->device, o->port);
		if (o->up) {
			port_event(a, o, FB_KIND_LINK_DOWN, &ev);
			snprintf(ev.text, sizeof(ev.text), "interface removed");
			emit(a, &ev);
		}
	}
	memcpy(last->p, cur->p, cur->n * sizeof(cur->p[0]));
	last->n = cur->n;
	last->valid = 1;
}

static int scan_ib(struct agent *a)
{
	int rc = node_ib_scan(a->cur.p, NODE_PORTS_MAX, &a->cur.n);
	if (rc) {
		fb_log_warn("cannot list the IB CAs through libibumad: %s", fb_strerror(rc));
		return rc;
	}
	diff(a, &a->ib, &a->cur);
	return 0;
}

static int scan_eth(struct agent *a)
{
	int rc = node_eth_scan(a->cur.p, NODE_PORTS_MAX, &a->cur.n);
	if (rc) {
		fb_log_warn("cannot dump the network interfaces (rtnetlink RTM_GETLINK): %s",
			    fb_strerror(rc));
		return rc;
	}
	diff(a, &a->eth, &a->cur);
	return 0;
}

/* ---- the loop ---------------------------------------------------------------- */

static void ib_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct agent *a = arg;
	if (a->ag.stopping)
		return;
	int64_t t0 = fb_time_ns();
	scan_ib(a);
	fb_metric_observe(a->ag.poll_seconds, (double)(fb_time_ns() - t0) / 1e9);
}

static void nl_readable(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct agent *a = arg;
	int rc = node_eth_monitor_drain((int)fd);
	if (rc < 0)
		fb_log_warn("rtnetlink notification socket: %s", fb_strerror(rc));
	if (!a->ag.stopping)
		scan_eth(a);
}

/* A signal: stop watching (then the drain). */
static void on_stop(void *arg)
{
	struct agent *a = arg;
	if (a->ib_timer)
		event_del(a->ib_timer);
	if (a->nl_ev)
		event_del(a->nl_ev);
}

static int start_sources(struct agent *a)
{
	if (!a->no_eth) {
		/* Subscribe before the first dump, so no change falls in between. */
		a->nl_fd = node_eth_monitor_open();
		if (a->nl_fd < 0) {
			fb_log_err("cannot subscribe to rtnetlink link changes: %s (use --no-eth to "
				   "report InfiniBand only)", fb_strerror(a->nl_fd));
			return -1;
		}
		a->nl_ev = event_new(a->ag.base, a->nl_fd, EV_READ | EV_PERSIST, nl_readable, a);
		if (!a->nl_ev || event_add(a->nl_ev, NULL) || scan_eth(a))
			return -1;
	}
	if (!a->no_ib) {
		if (node_ib_init() || scan_ib(a)) {
			fb_log_err("libibumad cannot be initialised (use --no-ib on a host without "
				   "InfiniBand)");
			return -1;
		}
		struct timeval tv = { a->interval_ms / 1000, (a->interval_ms % 1000) * 1000 };
		a->ib_timer = event_new(a->ag.base, -1, EV_PERSIST, ib_tick, a);
		if (!a->ib_timer || event_add(a->ib_timer, &tv))
			return -1;
	}
	return 0;
}

/* The broker's view of this node, for the resync of the first scans; at
 * start, bounded: a broker that does not answer costs no more than
 * MAP_TIMEOUT_MS, and the agent goes on without. */
static void fetch_map(struct agent *a)
{
	char target[320], err[512];
	if (!a->ag.resync)
		return;
	if (!fb_http_map_target(a->node, target, sizeof(target)))
		return;
	int rc = fb_map_get(&a->ag.map_auth.client, a->ag.map_host, a->ag.map_port, target,
			    MAP_TIMEOUT_MS, &a->map, err, sizeof(err));
	if (rc < 0)
		fb_log_warn("resync: %s; not resyncing: changes made while this agent was away stay "
			    "unreported (is fabricbusd's HttpListen at --map?)", err);
	else if (rc > 0)
		fb_log_warn("resync: the broker has no GET /fabric/map (HTTP 404); not resyncing");
}

/* Every port of the last scans against a fresh map. */
static void resync_all(struct agent *a, int reconnected)
{
	fetch_map(a);
	for (size_t i = 0; a->map && i < a->ib.n; i++)
		resync_port(a, &a->ib.p[i], reconnected);
	for (size_t i = 0; a->map && i < a->eth.n; i++)
		resync_port(a, &a->eth.p[i], reconnected);
	json_decref(a->map);
	a->map = NULL;
}

/* The map is rendered at most every 100 ms (big ones more rarely): the
 * first one read may not show yet what our previous run said just before it
 * died. A second look, a little later, against the ports as they are now. */
static void resync_again_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	resync_all(arg, 0);
}

/* Reconnected, everything acked: a broker that lost state (restarted
 * without its journal's tail, or replaced) hears what it missed. */
static void on_reconnected(void *arg)
{
	resync_all(arg, 1);
}

static int run(struct agent *a)
{
	const struct fb_agent_hooks h = { .stop = on_stop, .reconnected = on_reconnected, .arg = a };
	if (fb_agent_session(&a->ag, SESSION_BUFFER, &h))
		return 1;
	fetch_map(a);
	int rc = start_sources(a);
	json_decref(a->map); /* the first scans are done: it served its purpose */
	a->map = NULL;
	if (rc)
		return 1;
	struct timeval again = { RESYNC_AGAIN_MS / 1000, (RESYNC_AGAIN_MS % 1000) * 1000 };
	if (a->ag.resync && (!(a->resync_again = evtimer_new(a->ag.base, resync_again_cb, a)) ||
			     evtimer_add(a->resync_again, &again))) {
		fb_log_err("out of memory setting up the event loop");
		return 1;
	}
	fb_log_info("agent '%s' reporting node '%s' (%zu IB ports, %zu Ethernet interfaces) to %s:%d",
		    a->ag.agent_id, a->node, a->ib.n, a->eth.n, a->ag.host, a->ag.port);
	int status = fb_agent_run(&a->ag);
	if (a->ag.dropped)
		fb_log_warn("%" PRIu64 " events dropped (session buffer full)", a->ag.dropped);
	return status;
}

static int once(struct agent *a)
{
	if (!a->no_eth && scan_eth(a))
		return 1;
	if (!a->no_ib && (node_ib_init() || scan_ib(a)))
		return 1;
	fflush(stdout);
	if (a->emitted == 0) {
		fb_log_err("no port found (IB: %s, Ethernet: %s)", a->no_ib ? "off" : "none",
			   a->no_eth ? "off" : "none");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct agent a; /* the port tables are large: not on the stack */
	a.interval_ms = 1000;
	a.nl_fd = -1;
	fb_agent_init(&a.ag, PROG, "node");
	a.ag.help = help;
	int r = parse_opts(&a, argc, argv);
	if (r)
		return r < 0 ? 0 : r;
	if (a.once)
		return once(&a);

	int status = fb_agent_base(&a.ag, 0) ? 1 : run(&a);
	struct event *evs[] = { a.ib_timer, a.nl_ev, a.resync_again };
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i])
			event_free(evs[i]);
	if (a.nl_fd >= 0)
		close(a.nl_fd);
	fb_agent_free(&a.ag);
	return status;
}

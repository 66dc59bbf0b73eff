/* fb_agent.h - the skeleton every fabricbus agent program shares (ib, node,
 * snmp): the common options (--broker, --agent-id, --fabric, --map,
 * --no-resync, --log-level, --help), the session to the broker, SIGTERM and
 * SIGINT, the drain with a deadline at a stop, the exit status, and the
 * resync after a reconnect. What an agent watches and how stays in its own
 * main.c: it fills the hooks below.
 *
 * Use: fb_agent_init(); the agent's getopt loop passes every option it does
 * not own to fb_agent_opt() and calls fb_agent_opts_done(); then
 * fb_agent_base(), fb_agent_session(), start the agent's sources,
 * fb_agent_run(); at the end the agent frees its own events, then
 * fb_agent_free().
 */
#ifndef FB_AGENT_H
#define FB_AGENT_H

#include "fb_event.h"
#include "fb_http_auth.h"
#include "fb_wire.h"

#include <event2/event.h>
#include <stddef.h>

struct fb_metrics;
struct fb_metric;
struct fb_metrics_http;
#include <stdint.h>

#define FB_AGENT_DEFAULT_BROKER "127.0.0.1:7411"
#define FB_AGENT_MAP_PORT 7412    /* fabricbusd's HttpListen, the --map default */
#define FB_AGENT_DRAIN_MS 2000    /* bounded wait for acks at a stop */

/* Long-option values of the common options that have no short form; an
 * agent's own values start at 256 and stay below these. */
enum { FB_AGENT_O_MAP = 0x1000, FB_AGENT_O_NO_RESYNC, FB_AGENT_O_METRICS, FB_AGENT_O_TLS_CA,
       FB_AGENT_O_TLS_CERT, FB_AGENT_O_TLS_KEY, FB_AGENT_O_MAP_TOKEN, FB_AGENT_O_MAP_TLS_CA };

/* getopt_long entries of the common options, for an agent's table; the
 * short ones are "b:a:l:h" (and "f:" with FB_AGENT_FABRIC_OPTION). */
#define FB_AGENT_OPTIONS                                        \
	{ "broker", required_argument, NULL, 'b' },             \
	{ "agent-id", required_argument, NULL, 'a' },           \
	{ "log-level", required_argument, NULL, 'l' },          \
	{ "metrics", required_argument, NULL, FB_AGENT_O_METRICS }, \
	{ "tls-ca", required_argument, NULL, FB_AGENT_O_TLS_CA },   \
	{ "tls-cert", required_argument, NULL, FB_AGENT_O_TLS_CERT }, \
	{ "tls-key", required_argument, NULL, FB_AGENT_O_TLS_KEY }, \
	{ "help", no_argument, NULL, 'h' }
/* The --help lines of the TLS options, for each agent's help text. */
#define FB_AGENT_TLS_HELP                                                                     \
	"        --tls-ca FILE          TLS to the broker: the CA of its certificate (PEM)\n"     \
	"        --tls-cert FILE        the agent's client certificate (PEM; its CN or a DNS\n"  \
	"                               SAN names the agent ids it may use, docs/security.md)\n" \
	"        --tls-key FILE         the key of --tls-cert\n"
/* The --metrics line of an agent's --help. */
#define FB_AGENT_METRICS_HELP                                                           \
	"        --metrics ADDR:PORT    serve Prometheus GET /metrics there (default: off)\n"
#define FB_AGENT_FABRIC_OPTION { "fabric", required_argument, NULL, 'f' }
#define FB_AGENT_MAP_OPTIONS                                              \
	{ "map", required_argument, NULL, FB_AGENT_O_MAP },               \
	{ "no-resync", no_argument, NULL, FB_AGENT_O_NO_RESYNC },         \
	{ "broker-token-file", required_argument, NULL, FB_AGENT_O_MAP_TOKEN }, \
	{ "broker-tls-ca", required_argument, NULL, FB_AGENT_O_MAP_TLS_CA }
/* The --help lines of the resync's login options, after --no-resync's. */
#define FB_AGENT_MAP_AUTH_HELP                                                              \
	"        --broker-token-file FILE\n"                                                   \
	"                               bearer token (mode 0600) for the resync's GET\n"      \
	"                               /fabric/map, when the broker has HttpTokens\n"        \
	"        --broker-tls-ca FILE   https to --map, its certificate checked against this\n" \
	"                               CA (PEM) and the --map host\n"

/* The --help lines of the resync's options (printf argument: the map port). */
#define FB_AGENT_MAP_HELP                                                                   \
	"        --map HOST:PORT        fabricbusd's HttpListen, for the resync (default: the\n" \
	"                               --broker host, port %d)\n"                              \
	"        --no-resync            do not resync against the broker's map\n"                \
	FB_AGENT_MAP_AUTH_HELP

/* What the skeleton calls back, on the loop thread, with arg. */
struct fb_agent_hooks {
	void (*stop)(void *arg);        /* a signal: stop the sources (then the drain) */
	void (*reconnected)(void *arg); /* reconnected and all acked: resync (NULL: none) */
	void (*ack)(void *arg, uint64_t acked_seq); /* optional */
	/* Before each /metrics scrape: mirror the agent's counts into
	 * ag->metrics (optional). */
	void (*collect)(void *arg);
	void *arg;
};

struct fb_agent {
	const char *prog;        /* "fabricbus-agent-ib": messages and usage errors */
	void (*help)(void);      /* prints the agent's --help; set before fb_agent_opt() */
	int has_config;          /* the agent has --config FILE: a --fabric that looks
				  * like a file is refused with a hint to it */
	struct fb_agent_hooks hooks;

	/* From the options. */
	char host[256];          /* --broker */
	int port;
	char agent_id[FB_AGENT_ID_MAX];
	const char *fabric;      /* --fabric, or the agent's default */
	char map_host[256];      /* --map (default: the broker host, FB_AGENT_MAP_PORT) */
	int map_port;
	int resync;              /* 1 unless --no-resync */
	const char *tls_ca, *tls_cert, *tls_key; /* --tls-*: NULL for plain TCP */
	/* --broker-token-file, --broker-tls-ca: the resync's GET /fabric/map
	 * (map_auth.client for fb_map_get; read by fb_agent_opts_done). */
	struct fb_http_auth map_auth;

	/* The running agent. */
	struct event_base *base;
	struct fb_session *s;
	int stopping, exit_status;
	uint64_t dropped;        /* events the session refused (fb_agent_submit) */
	/* Prometheus registry (fb_agent_base): the skeleton's series, and the
	 * agent's own, registered by the agent; served with --metrics. */
	struct fb_metrics *metrics;
	/* fabricbus_agent_poll_duration_seconds{agent=prog}: the agent
	 * observes each poll round's duration (fb_metric_observe). */
	struct fb_metric *poll_seconds;

	/* Private. */
	const char *broker_arg, *map_arg, *metrics_arg, *map_token_arg, *map_tls_ca_arg;
	struct fb_metrics_http *metrics_http;
	struct fb_metric *m_submitted, *m_dropped, *m_acked, *m_resent, *m_reconnects;
	struct fb_metric *m_connected, *m_unacked;
	int log_level;
	uint64_t reconnects;
	struct event *sigterm, *sigint, *reconnect_check;
};

/* Defaults; logging to stderr as prog; agent id "<id_prefix>@<hostname>". */
void fb_agent_init(struct fb_agent *ag, const char *prog, const char *id_prefix);
/* One option c (getopt_long's value, optarg set) the agent does not handle
 * itself: 0 when taken, -1 after --help (exit 0), 2 after a usage error on
 * stderr (exit 2): unknown options and missing values end here too. */
int fb_agent_opt(struct fb_agent *ag, int c, char **argv);
/* Every agent's getopt loop: each option of shortopts/lo (':' first) goes
 * to own(arg, c) with optarg set, which returns 0 when it took it,
 * FB_AGENT_OPT_NOT_MINE to hand it to fb_agent_opt, or an exit status (2
 * after a usage error); then fb_agent_opts_done. 0, -1 (--help) or 2. */
#define FB_AGENT_OPT_NOT_MINE 1000
struct option;
int fb_agent_getopt(struct fb_agent *ag, int argc, char **argv, const char *shortopts,
		    const struct option *lo, int (*own)(void *arg, int c), void *arg);
/* After the getopt loop: no operand left; parse --broker and --map; read
 * --broker-token-file and --broker-tls-ca; set the log level. 0 or 2
 * (usage error printed). */
int fb_agent_opts_done(struct fb_agent *ag, int argc, char **argv);
/* Strictly decimal s in lo..hi into *out; 0 or -1. */
int fb_agent_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out);
/* A numeric option of an agent's own: arg (the value of --name) in lo..hi
 * into *out, or the usage error every agent prints for one, "bad --name
 * 'arg': want [unit, ]lo..hi". One place, so that the agents' numeric
 * options check and complain alike. 0, or 2 (printed). */
int fb_agent_opt_uint(const struct fb_agent *ag, const char *name, const char *unit, const char *arg,
		      unsigned lo, unsigned hi, unsigned *out);

/* The loop (with libevent's pthread locking when threads: events made
 * active from another thread) and the metrics registry; SIGPIPE ignored.
 * 0 or 1 (logged). */
int fb_agent_base(struct fb_agent *ag, int threads);
/* The session to --broker keeping up to buffer events unacked, the signal
 * events, with resync and a reconnected hook the reconnect watch, and with
 * --metrics the /metrics listener; the session starts connecting. 0 or 1
 * (logged). */
int fb_agent_session(struct fb_agent *ag, size_t buffer, const struct fb_agent_hooks *hooks);
/* Runs the loop until a stop's drain is over (or fb_agent_fatal);
 * returns the exit status. */
int fb_agent_run(struct fb_agent *ag);
/* The agent cannot go on: exit status 1, the loop ends. */
void fb_agent_fatal(struct fb_agent *ag);
/* Submit ev; when the session refuses it, count and log the drop (the
 * first and every 1000th). */
void fb_agent_submit(struct fb_agent *ag, const struct fb_event *ev);
/* Frees the session, the skeleton's events and the base: after the agent
 * freed its own events. */
void fb_agent_free(struct fb_agent *ag);

#endif

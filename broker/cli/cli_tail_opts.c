/* cli_tail_opts.c - `fabricbus tail` options: the usage and help text, and
 * the checks that turn argv into struct fb_tail_opts. Everything a user can
 * get wrong is caught here, before a connection is tried, so a typo is exit
 * status 2 with one line naming it and never a runtime failure.
 */
#include "cli_tail.h"

#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void tail_usage(FILE *f)
{
	fputs("usage: fabricbus tail [--http HOST:PORT] [--token-file FILE] [--tls-ca FILE]\n"
	      "                      [--since ID] [--prefix P[,P..]]\n"
	      "                      [--severity S[,S..]] [--origin PATH] [--count N]\n"
	      "                      [--timeout SEC] [--idle-exit SEC] [--reconnect]\n"
	      "                      [--events-only] [--validate] [--quiet] [--stats] [--all]\n"
	      "       fabricbus tail --help\n", f);
}

static void tail_help(void)
{
	fputs("NAME\n"
	      "    fabricbus tail - follow the broker's event stream as JSON lines\n\n"
	      "SYNOPSIS\n"
	      "    fabricbus tail [--http HOST:PORT] [--token-file FILE] [--tls-ca FILE]\n"
	      "                   [--since ID] [--prefix P[,P..]]\n"
	      "                   [--severity S[,S..]] [--origin PATH] [--count N]\n"
	      "                   [--timeout SEC] [--idle-exit SEC] [--reconnect]\n"
	      "                   [--events-only] [--validate] [--quiet] [--stats] [--all]\n", stdout);
	fputs("\nDESCRIPTION\n"
	      "    Subscribes to ws://HOST:PORT/ws/events and prints each Redfish Event the\n"
	      "    broker sends as one JSON line on stdout. Without --since it starts at the\n"
	      "    live head.\n\n"
	      "OPTIONS\n"
	      "    --http HOST:PORT   broker HTTP/WebSocket address (default " FB_CLI_DEFAULT_HTTP_ADDR ")\n"
	      "    --token-file FILE  send the bearer token in FILE (mode 0600; one of fabricbusd's\n"
	      "                       HttpTokens); default $FABRICBUS_TOKEN_FILE\n"
	      "    --tls-ca FILE      wss://: verify the broker's certificate against this CA;\n"
	      "                       default $FABRICBUS_TLS_CA\n"
	      "    --since ID         replay every event with EventId > ID from the journal first\n"
	      "    --prefix P[,P..]   only MessageIds starting with one of these prefixes\n"
	      "    --severity S[,S..] only these severities: OK, Warning, Critical\n"
	      "    --origin PATH      only OriginOfCondition paths starting with PATH\n"
	      "    --all              quiet events too: symptoms of a root cause, duplicates,\n"
	      "                       events over a rate limit, a flapping port's transitions\n"
	      "                       (Oem.Fabricbus.Quiet says which); by default the broker\n"
	      "                       sends only what a console should show\n"
	      "    --count N          exit 0 after N events (missed notices do not count)\n"
	      "    --timeout SEC      overall deadline; exit 1 if --count was not reached,\n"
	      "                       exit 0 if no --count was given (default: none)\n"
	      "    --idle-exit SEC    exit 0 after SEC seconds without a message (default: none)\n"
	      "    --reconnect        on connection loss or a missed notice, reconnect with\n"
	      "                       back-off (100 ms doubling to 2 s) and since=<last EventId\n"
	      "                       printed>: nothing lost, nothing printed twice\n"
	      "    --events-only      write missed notices to stderr instead of stdout\n"
	      "    --validate         check that every message is a JSON object (slower)\n"
	      "    --quiet            no progress notes on stderr (errors still print)\n"
	      "    --stats            at exit, print to stderr: received N events in T s\n"
	      "                       (R events/s), last EventId X, reconnects K\n"
	      "                       (T runs from the first message to the last event)\n"
	      "    -h, --help         this text\n\n"
	      "EXAMPLES\n"
	      "    fabricbus tail --severity Critical,Warning\n"
	      "    fabricbus tail --prefix Fabric.1.0. --origin /redfish/v1/Fabrics/IB --reconnect\n"
	      "    fabricbus tail --since 0 --count 1000 --timeout 10 > events.jsonl\n"
	      "    fabricbus tail --http 10.0.0.5:7412 --idle-exit 5 --stats | jq -r '.Events[0].MessageId'\n\n"
	      "EXIT STATUS\n"
	      "    0  done: --count reached, --idle-exit, interrupted, or stdout closed\n"
	      "    1  connection failed or lost (without --reconnect), --timeout before --count,\n"
	      "       or a message over 1 MiB\n"
	      "    2  usage error\n"
	      "    3  the broker dropped this subscriber for lagging (missed notice) and\n"
	      "       --reconnect was not given; stderr says which --since resumes it\n", stdout);
}

static int tail_bad(const char *fmt, const char *arg)
{
	fputs("fabricbus tail: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	tail_usage(stderr);
	return TAIL_USAGE;
}

static int severity_list_ok(const char *s)
{
	size_t n;

	for (;;) {
		n = strcspn(s, ",");
		if (!((n == 2 && !strncmp(s, "OK", 2)) || (n == 7 && !strncmp(s, "Warning", 7)) ||
		      (n == 8 && !strncmp(s, "Critical", 8))))
			return 0;
		if (!s[n])
			return 1;
		s += n + 1;
	}
}

/* "&name=value", percent-encoding all but unreserved characters and the
 * ',' '/' ':' that lists and Redfish paths are made of. */
static int put_param(struct fb_buf *b, const char *name, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";
	int r = fb_buf_printf(b, "&%s=", name);

	for (; !r && *v; v++) {
		unsigned char c = (unsigned char)*v;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    strchr("-._~,/:", c))
			r = fb_buf_put_u8(b, c);
		else
			r = fb_buf_printf(b, "%%%c%c", hex[c >> 4], hex[c & 15]);
	}
	return r;
}

int fb_tail_opts_parse(int argc, char **argv, struct fb_tail_opts *o)
{
	enum { O_HTTP = 256, O_SINCE, O_PREFIX, O_SEVERITY, O_ORIGIN, O_COUNT, O_TIMEOUT,
	       O_RECONNECT, O_IDLE, O_EVONLY, O_QUIET, O_STATS, O_VALIDATE, O_TOKEN, O_CA, O_ALL };
	static const struct option lo[] = {
		{ "http", required_argument, NULL, O_HTTP },
		{ "since", required_argument, NULL, O_SINCE },
		{ "prefix", required_argument, NULL, O_PREFIX },
		{ "severity", required_argument, NULL, O_SEVERITY },
		{ "origin", required_argument, NULL, O_ORIGIN },
		{ "count", required_argument, NULL, O_COUNT },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "reconnect", no_argument, NULL, O_RECONNECT },
		{ "idle-exit", required_argument, NULL, O_IDLE },
		{ "events-only", no_argument, NULL, O_EVONLY },
		{ "quiet", no_argument, NULL, O_QUIET },
		{ "stats", no_argument, NULL, O_STATS },
		{ "validate", no_argument, NULL, O_VALIDATE },
		{ "token-file", required_argument, NULL, O_TOKEN },
		{ "tls-ca", required_argument, NULL, O_CA },
		{ "all", no_argument, NULL, O_ALL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *http = FB_CLI_DEFAULT_HTTP_ADDR;
	int c;
	o->token_file = getenv("FABRICBUS_TOKEN_FILE");
	o->tls_ca = getenv("FABRICBUS_TLS_CA");

	optind = 0; /* full rescan: the dispatcher may have run getopt already */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		switch (c) {
		case 'h': tail_help(); return -1;
		case O_HTTP: http = optarg; break;
		case O_SINCE:
			if (fb_cli_parse_u64(optarg, &o->since))
				return tail_bad("--since wants an EventId (digits), not '%s'", optarg);
			o->have_since = 1;
			break;
		case O_PREFIX:
			if (!*optarg)
				return tail_bad("--prefix wants a MessageId prefix%s", "");
			o->prefix = optarg;
			break;
		case O_SEVERITY:
			if (!severity_list_ok(optarg))
				return tail_bad("--severity wants OK, Warning or Critical (comma-separated), "
						"not '%s'", optarg);
			o->severity = optarg;
			break;
		case O_ORIGIN:
			if (!*optarg)
				return tail_bad("--origin wants a Redfish path prefix%s", "");
			o->origin = optarg;
			break;
		case O_COUNT:
			if (fb_cli_parse_u64(optarg, &o->count) || !o->count)
				return tail_bad("--count wants a positive number, not '%s'", optarg);
			break;
		case O_TIMEOUT:
			if (fb_cli_parse_secs(optarg, &o->timeout_s))
				return tail_bad("--timeout wants seconds > 0, not '%s'", optarg);
			break;
		case O_IDLE:
			if (fb_cli_parse_secs(optarg, &o->idle_s))
				return tail_bad("--idle-exit wants seconds > 0, not '%s'", optarg);
			break;
		case O_RECONNECT: o->reconnect = 1; break;
		case O_EVONLY: o->events_only = 1; break;
		case O_QUIET: o->quiet = 1; break;
		case O_STATS: o->stats = 1; break;
		case O_VALIDATE: o->validate = 1; break;
		case O_TOKEN: o->token_file = optarg; break;
		case O_CA: o->tls_ca = optarg; break;
		case O_ALL: o->all = 1; break;
		case ':':
			return tail_bad("%s needs a value", argv[optind - 1]);
		default:
			if (optopt && optopt < 256) {
				char s[2] = { (char)optopt, 0 };

				return tail_bad("unknown option -%s", s);
			}
			return tail_bad("unknown option or missing value: %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return tail_bad("unexpected argument '%s'", argv[optind]);
	if (fb_cli_parse_addr(http, o->host, sizeof(o->host), &o->port) < 0) {
		tail_usage(stderr); /* fb_cli_parse_addr said what is wrong */
		return TAIL_USAGE;
	}
	return 0;
}

int fb_tail_opts_filters(const struct fb_tail_opts *o, struct fb_buf *b)
{
	if ((o->prefix && put_param(b, "prefix", o->prefix) < 0) ||
	    (o->severity && put_param(b, "severity", o->severity) < 0) ||
	    (o->origin && put_param(b, "origin", o->origin) < 0) ||
	    (o->all && put_param(b, "quiet", "1") < 0) ||
	    fb_buf_put_u8(b, 0) < 0)
		return -1;
	b->len--; /* NUL-terminated, NUL not counted */
	return 0;
}

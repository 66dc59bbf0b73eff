/* cli_tail_opts.c - `fabricbus tail` options: the usage and help text, and
 * the checks that turn argv into struct fb_tail_opts. Everything a user can
 * get wrong is caught here, before a connection is tried, so a typo is exit
 * status 2 with one line naming it and never a runtime failure.
 */
#include "cli_tail.h"

#include "cli.h"
#include "cli_opts.h"

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

static const struct fb_cli_cmd tail_cmd = { "tail", FB_CLI_TAIL, tail_usage, tail_help };

static int tail_opt(void *arg, int code, const char *v)
{
	struct fb_tail_opts *o = arg;
	const struct fb_cli_cmd *c = &tail_cmd;

	switch (code) {
	case FB_OPT_HTTP: o->http = v; return 0;
	case FB_OPT_SINCE:
		if (fb_cli_parse_u64(v, &o->since))
			return fb_cli_bad(c, "--since wants an EventId (digits), not '%s'", v);
		o->have_since = 1;
		return 0;
	case FB_OPT_PREFIX:
		return fb_cli_nonempty(c, v, "--prefix wants a MessageId prefix", &o->prefix);
	case FB_OPT_SEVERITY:
		if (!severity_list_ok(v))
			return fb_cli_bad(c, "--severity wants OK, Warning or Critical (comma-separated), "
					  "not '%s'", v);
		o->severity = v;
		return 0;
	case FB_OPT_ORIGIN:
		return fb_cli_nonempty(c, v, "--origin wants a Redfish path prefix", &o->origin);
	case FB_OPT_RECONNECT: o->reconnect = 1; return 0;
	case FB_OPT_EVONLY: o->events_only = 1; return 0;
	case FB_OPT_VALIDATE: o->validate = 1; return 0;
	case FB_OPT_TOKEN: o->token_file = v; return 0;
	case FB_OPT_CA: o->tls_ca = v; return 0;
	default: o->all = 1; return 0; /* FB_OPT_ALL */
	}
}

int fb_tail_opts_parse(int argc, char **argv, struct fb_tail_opts *o)
{
	o->http = FB_CLI_DEFAULT_HTTP_ADDR;
	o->token_file = getenv("FABRICBUS_TOKEN_FILE");
	o->tls_ca = getenv("FABRICBUS_TLS_CA");
	int r = fb_cli_parse(&tail_cmd, argc, argv, tail_opt, o, &o->s);
	if (r)
		return r;
	if (fb_cli_parse_addr(o->http, o->host, sizeof(o->host), &o->port) < 0) {
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

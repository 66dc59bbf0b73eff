/* cli_status.c - `fabricbus status`: GET /status from fabricbusd's HTTP port
 * with fb_http (adapters/lib), then print it for humans (or raw).
 * Every field is optional when printing: an older or newer broker may lack
 * some, and they show as "-". */
#include "cli.h"
#include "cli_opts.h"
#include "fb_err.h"
#include "fb_http.h"
#include "fb_http_auth.h"
#include "fb_usage.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATUS_TIMEOUT_MS 10000  /* connect, send and the whole reply */
#define MAX_RESPONSE (4u << 20)

static void help(void)
{
	printf("NAME\n"
	       "    fabricbus status - show what fabricbusd is doing\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    fabricbus status [--http HOST:PORT] [--token-file FILE] [--tls-ca FILE]\n"
	       "                     [--json] [--color WHEN]\n"
	       "\n"
	       "DESCRIPTION\n"
	       "    Fetches http://HOST:PORT/status from the broker and prints a summary:\n"
	       "    a health line (OK, WARN or CRIT and why: agents disconnected or with\n"
	       "    gaps, Kafka unreachable or behind, slow subscribers dropped, a listener\n"
	       "    not accepting), version and uptime, event totals and rates, the journal (first/last\n"
	       "    EventId, size, segments, sync policy), one line per agent (id, connected,\n"
	       "    peer, last seq, events, duplicates, gaps, last seen) and the websocket\n"
	       "    subscribers (peer, filter, next id, lag, sent). Fields the broker does not\n"
	       "    report are shown as '-'.\n"
	       "\n"
	       "OPTIONS\n"
	       "    -H, --http HOST:PORT  broker HTTP address (default %s);\n"
	       "                          also [IPV6]:PORT or :PORT\n"
	       "        --token-file FILE send the bearer token in FILE (mode 0600; one of\n"
	       "                          fabricbusd's HttpTokens); default $FABRICBUS_TOKEN_FILE\n"
	       "        --tls-ca FILE     talk HTTPS and verify the broker's certificate\n"
	       "                          against this CA; default $FABRICBUS_TLS_CA\n"
	       "    -j, --json            print the broker's JSON document as received\n"
	       "        --color WHEN      auto (default: on a terminal, unless NO_COLOR is\n"
	       "                          set), always or never\n"
	       "    -h, --help            show this help\n"
	       "\n"
	       "EXAMPLES\n"
	       "    fabricbus status\n"
	       "    fabricbus status --http 10.0.0.5:7412\n"
	       "    fabricbus status --json | jq '.broker.agents[] | {id, last_seq}'\n"
	       "\n"
	       "EXIT STATUS\n"
	       "    0  status printed\n"
	       "    1  broker unreachable, HTTP error, or a reply that is not status JSON\n"
	       "    2  usage error\n",
	       FB_CLI_DEFAULT_HTTP_ADDR);
}

/* ---- the request --------------------------------------------------------- */

/* GET /status through fb_http (the checked, fuzzed response parser). 0 with
 * r filled (any status code), or 1 after saying why on stderr. fb_http's
 * -errno failures (refused, unresolvable, timed out) mean the broker was not
 * reached or did not answer; its FB_E* ones, which sit below the errno range
 * (fb_err.h), mean something answered but not with a usable HTTP response.
 * Either way err already starts with the peer. */
static int fetch_status(const struct fb_http_auth *a, const char *host, int port,
			struct fb_http_resp *r)
{
	char err[400];
	int rc = fb_http_request_as(&a->client, host, (uint16_t)port, "GET", "/status", NULL, NULL, 0,
				    STATUS_TIMEOUT_MS, MAX_RESPONSE, r, err, sizeof(err));
	if (rc == 0)
		return 0;
	fprintf(stderr, "fabricbus status: %sfabricbusd at %s\n", rc > FB_EAGAIN ? "cannot reach " : "", err);
	return 1;
}

/* ---- printing ---------------------------------------------------------------- */

static const char *fmt(json_t *v, char *buf, size_t sz)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(buf, sz, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, sz, "%.1f", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, sz, "%s", json_is_true(v) ? "yes" : "no");
	else if (json_is_object(v) || json_is_array(v)) {
		char *d = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		snprintf(buf, sz, "%s", d && strcmp(d, "{}") ? d : "-");
		free(d);
	} else
		return "-";
	return buf;
}

/* Field of an object as text; "-" when absent. Several rotating buffers so
 * one printf can use several. */
static const char *F(json_t *o, const char *key)
{
	static char bufs[16][160];
	static unsigned i;
	char *b = bufs[i++ % 16];
	return fmt(json_object_get(o, key), b, 160);
}

static const char *uptime(json_t *v, char *b, size_t sz)
{
	if (!json_is_number(v))
		return "-";
	long long s = (long long)json_number_value(v);
	if (s >= 86400)
		snprintf(b, sz, "%lldd%02lldh%02lldm", s / 86400, s % 86400 / 3600, s % 3600 / 60);
	else if (s >= 3600)
		snprintf(b, sz, "%lldh%02lldm%02llds", s / 3600, s % 3600 / 60, s % 60);
	else
		snprintf(b, sz, "%llds", s);
	return b;
}

static const char *bytes(json_t *v, char *b, size_t sz)
{
	if (!json_is_number(v))
		return "-";
	double x = json_number_value(v);
	const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;
	while (x >= 1024 && i < 4) {
		x /= 1024;
		i++;
	}
	snprintf(b, sz, i ? "%.1f %s" : "%.0f %s", x, u[i]);
	return b;
}

static const char *ago(json_t *v, char *b, size_t sz)
{
	if (!json_is_number(v))
		return "-";
	snprintf(b, sz, "%.1fs ago", json_number_value(v));
	return b;
}

/* ---- health and colour ---------------------------------------------------- */

enum health { H_OK, H_WARN, H_CRIT };
static const char *const health_name[] = { "OK", "WARN", "CRIT" };
static const char *const health_sgr[] = { "\033[32m", "\033[33m", "\033[1;31m" };
static int use_color; /* set once by fb_cli_status */

/* s padded to width (negative: left-aligned), in colour h when on. */
static void put_colored(enum health h, int width, const char *s)
{
	if (use_color)
		printf("%s%*s\033[0m", health_sgr[h], width, s);
	else
		printf("%*s", width, s);
}

static long long num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? (long long)json_number_value(v) : 0;
}

struct verdict {
	enum health h;
	char why[400];
};

/* One reason more; the verdict is the worst of them. */
static void note(struct verdict *v, enum health h, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(struct verdict *v, enum health h, const char *fmt, ...)
{
	if (h > v->h)
		v->h = h;
	size_t len = strlen(v->why);
	snprintf(v->why + len, sizeof(v->why) - len, "%s", len ? ", " : "");
	len = strlen(v->why);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->why + len, sizeof(v->why) - len, fmt, ap);
	va_end(ap);
}

/* What an operator should look at first, from the fields /status has. */
static void judge(json_t *root, struct verdict *v)
{
	json_t *b = json_object_get(root, "broker");
	json_t *agents = json_object_get(b, "agents");
	long long down = 0, gaps = 0;
	for (size_t i = 0; i < json_array_size(agents); i++) {
		json_t *a = json_array_get(agents, i);
		down += json_is_false(json_object_get(a, "connected"));
		gaps += num(a, "gaps") > 0;
	}
	if (down)
		note(v, H_WARN, "%lld agent(s) disconnected", down);
	if (gaps)
		note(v, H_WARN, "%lld agent(s) dropped events (gaps)", gaps);
	json_t *k = json_object_get(b, "kafka");
	if (json_is_true(json_object_get(k, "enabled"))) {
		if (!json_is_true(json_object_get(k, "connected")))
			note(v, H_CRIT, "Kafka unreachable (backlog %lld)", num(k, "backlog"));
		else if (num(k, "backlog") > 10000)
			note(v, H_WARN, "Kafka %lld events behind", num(k, "backlog"));
	}
	json_t *ls = json_object_get(b, "listeners");
	const char *names[] = { "agents", "http" };
	for (size_t i = 0; i < 2; i++) {
		json_t *l = json_object_get(ls, names[i]);
		if (l && json_is_false(json_object_get(l, "accepting")))
			note(v, H_CRIT, "%s listener not accepting (%s)", names[i],
			     F(l, "paused_by"));
	}
	json_t *ws = json_object_get(root, "websocket");
	if (num(ws, "dropped_slow"))
		note(v, H_WARN, "%lld slow subscriber(s) dropped", num(ws, "dropped_slow"));
	if (num(ws, "queue_dropped"))
		note(v, H_WARN, "WebSocket thread skipped %lld events", num(ws, "queue_dropped"));
}

static void print_health(json_t *root)
{
	struct verdict v = { H_OK, "" };
	judge(root, &v);
	printf("health:   ");
	put_colored(v.h, 0, health_name[v.h]);
	printf("%s%s\n", v.why[0] ? ": " : "", v.why);
}

static void print_agents(json_t *agents)
{
	size_t n = json_array_size(agents);
	printf("\nagents (%zu):\n", n);
	if (!n)
		return;
	printf("  %-24s %-5s %-22s %12s %10s %6s %6s  %s\n", "ID", "CONN", "PEER", "LAST SEQ",
	       "EVENTS", "DUPS", "GAPS", "LAST SEEN");
	for (size_t i = 0; i < n; i++) {
		json_t *a = json_array_get(agents, i);
		char b[64];
		int up = json_is_true(json_object_get(a, "connected"));
		printf("  %-24s ", F(a, "id"));
		put_colored(up ? H_OK : H_WARN, -5, F(a, "connected"));
		printf(" %-22s %12s %10s %6s ", F(a, "peer"), F(a, "last_seq"), F(a, "events"),
		       F(a, "duplicates"));
		put_colored(num(a, "gaps") ? H_WARN : H_OK, 6, F(a, "gaps"));
		printf("  %s\n", ago(json_object_get(a, "last_seen_s"), b, sizeof(b)));
	}
}

static void print_ws(json_t *ws)
{
	json_t *subs = json_object_get(ws, "subscribers");
	size_t n = json_array_size(subs);
	if (!ws) {
		printf("\nwebsocket: -\n");
		return;
	}
	printf("\nwebsocket: %zu subscribers, sent %s, dropped (slow) %s, replayed %s, head id %s\n",
	       n, F(ws, "sent"), F(ws, "dropped_slow"), F(ws, "replayed"), F(ws, "head_id"));
	if (!n)
		return;
	printf("  %-22s %10s %8s %10s %-9s  %s\n", "PEER", "NEXT ID", "LAG", "SENT", "REPLAYING",
	       "FILTER");
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(subs, i);
		printf("  %-22s %10s %8s %10s %-9s  %s\n", F(s, "peer"), F(s, "next_id"),
		       F(s, "lag"), F(s, "sent"), F(s, "replaying"), F(s, "filter"));
	}
}

static void print_kafka(json_t *k)
{
	if (!k || !json_is_true(json_object_get(k, "enabled"))) {
		printf("kafka:    off\n");
		return;
	}
	printf("kafka:    %s, %s, cursor %s of %s, backlog %s, delivered %s, errors %s\n",
	       F(k, "brokers"), json_is_true(json_object_get(k, "connected")) ? "connected" : "UNREACHABLE",
	       F(k, "cursor"), F(k, "committed"), F(k, "backlog"), F(k, "delivered"), F(k, "errors"));
	if (json_object_get(k, "last_error")) {
		char b[64];
		printf("          last error (%s): %s\n", ago(json_object_get(k, "last_error_age_s"), b, sizeof(b)),
		       F(k, "last_error"));
	}
}

static void print_summary(json_t *root, const char *addr)
{
	json_t *b = json_object_get(root, "broker");
	json_t *ev = json_object_get(b, "events");
	json_t *j = json_object_get(b, "journal");
	char u[64], by[64];
	printf("fabricbusd %s at %s, up %s\n", F(b, "version"), addr,
	       uptime(json_object_get(b, "uptime_s"), u, sizeof(u)));
	print_health(root);
	printf("events:   total %s, duplicates %s, rate %s/s (1 s) %s/s (10 s)\n", F(ev, "total"),
	       F(ev, "duplicates"), F(ev, "rate_1s"), F(ev, "rate_10s"));
	printf("journal:  %s\n", F(j, "dir"));
	printf("          EventId %s .. %s, %s in %s segments, sync %s\n", F(j, "first_id"),
	       F(j, "last_id"), bytes(json_object_get(j, "bytes"), by, sizeof(by)),
	       F(j, "segments"), F(j, "sync"));
	print_kafka(json_object_get(b, "kafka"));
	print_agents(json_object_get(b, "agents"));
	print_ws(json_object_get(root, "websocket"));
}

/* ---- the command --------------------------------------------------------------- */

int fb_cli_status(int argc, char **argv)
{
	struct option lo[FB_CLI_OPTS_MAX];
	const char *addr = FB_CLI_DEFAULT_HTTP_ADDR;
	const char *token_file = getenv("FABRICBUS_TOKEN_FILE"), *tls_ca = getenv("FABRICBUS_TLS_CA");
	int raw = 0, c;
	const char *color = "auto";
	fb_cli_options(FB_CLI_STATUS, lo);
	while ((c = getopt_long(argc, argv, ":H:jh", lo, NULL)) != -1) {
		switch (c) {
		case 'H': addr = optarg; break;
		case 'j': raw = 1; break;
		case 'C': color = optarg; break;
		case 'T': token_file = optarg; break;
		case 'A': tls_ca = optarg; break;
		case 'h': help(); return 0;
		case ':': return fb_usage_error("fabricbus status", "%s needs a value", argv[optind - 1]);
		default: return fb_usage_error("fabricbus status", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fb_usage_error("fabricbus status", "unexpected argument '%s'", argv[optind]);
	if (strcmp(color, "always") == 0)
		use_color = 1;
	else if (strcmp(color, "auto") == 0)
		use_color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	else if (strcmp(color, "never") == 0)
		use_color = 0;
	else
		return fb_usage_error("fabricbus status", "bad --color '%s': want auto, always or never",
				      color);
	char host[256], hosthdr[300];
	int port;
	if (fb_cli_parse_addr(addr, host, sizeof(host), &port) < 0)
		return 2;
	snprintf(hosthdr, sizeof(hosthdr), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);

	struct fb_http_auth auth;
	char aerr[600];
	if (fb_http_auth_init(&auth, token_file, tls_ca, aerr, sizeof(aerr))) {
		fprintf(stderr, "fabricbus status: %s\n", aerr);
		return 2;
	}
	struct fb_http_resp r;
	int frc = fetch_status(&auth, host, port, &r);
	fb_http_auth_free(&auth);
	if (frc)
		return 1;
	const char *body = (const char *)r.body.data;
	if (r.status != 200) {
		fprintf(stderr, "fabricbus status: fabricbusd at %s answered HTTP %d: %.200s%s\n",
			hosthdr, r.status, body,
			r.status == 301 ? "(it takes HTTPS: give --tls-ca with the CA of its certificate)"
			: r.status == 401 ? "(give --token-file with a token of its HttpTokens)" : "");
		fb_http_resp_free(&r);
		return 1;
	}
	json_error_t je;
	json_t *root = json_loadb(body, r.body.len, 0, &je);
	if (!json_is_object(root)) {
		fprintf(stderr, "fabricbus status: fabricbusd at %s: reply is not a JSON object "
			"(%s)\n", hosthdr, root ? "wrong type" : je.text);
		json_decref(root);
		fb_http_resp_free(&r);
		return 1;
	}
	if (raw) {
		fwrite(body, 1, r.body.len, stdout);
		if (r.body.len && body[r.body.len - 1] != '\n')
			putchar('\n');
	} else {
		print_summary(root, hosthdr);
	}
	json_decref(root);
	fb_http_resp_free(&r);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "fabricbus status: writing stdout: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

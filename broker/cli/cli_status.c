/* cli_status.c - `fabricbus status`: GET /status from fabricbusd's HTTP port
 * with a small blocking HTTP/1.1 client, then print it for humans (or raw).
 * Every field is optional when printing: an older or newer broker may lack
 * some, and they show as "-". */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 5000
#define IO_TIMEOUT_MS 10000
#define MAX_RESPONSE (4u << 20)

struct resp {
	char *data;    /* whole response, NUL-terminated */
	size_t len;
	int code;
	const char *body;
	size_t body_len;
};

static void help(void)
{
	printf("NAME\n"
	       "    fabricbus status - show what fabricbusd is doing\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    fabricbus status [--http HOST:PORT] [--json]\n"
	       "\n"
	       "DESCRIPTION\n"
	       "    Fetches http://HOST:PORT/status from the broker and prints a summary:\n"
	       "    version and uptime, event totals and rates, the journal (first/last\n"
	       "    EventId, size, segments, sync policy), one line per agent (id, connected,\n"
	       "    peer, last seq, events, duplicates, gaps, last seen) and the websocket\n"
	       "    subscribers (peer, filter, next id, lag, sent). Fields the broker does not\n"
	       "    report are shown as '-'.\n"
	       "\n"
	       "OPTIONS\n"
	       "    -H, --http HOST:PORT  broker HTTP address (default %s);\n"
	       "                          also [IPV6]:PORT or :PORT\n"
	       "    -j, --json            print the broker's JSON document as received\n"
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

static int usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_err(const char *fmt, ...)
{
	va_list ap;
	fputs("fabricbus status: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (try: fabricbus status --help)\n", stderr);
	return 2;
}

/* ---- the HTTP client -------------------------------------------------------- */

static int wait_fd(int fd, short ev, int ms)
{
	struct pollfd p = { fd, ev, 0 };
	int r;
	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ETIMEDOUT;
	return r > 0 ? 0 : -1;
}

/* Connect with a timeout; returns the fd or -1 with errno set. */
static int dial(const char *host, int port)
{
	char ps[16];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	int fd = -1, err = ECONNREFUSED;
	snprintf(ps, sizeof(ps), "%d", port);
	int g = getaddrinfo(host, ps, &hints, &res);
	if (g) {
		errno = g == EAI_SYSTEM ? errno : EHOSTUNREACH;
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
		if (r < 0 && errno == EINPROGRESS && wait_fd(fd, POLLOUT, CONNECT_TIMEOUT_MS) == 0) {
			socklen_t l = sizeof(err);
			r = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) == 0 && err == 0 ? 0 : -1;
		} else if (r < 0) {
			err = errno;
		}
		if (r == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	errno = err;
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (wait_fd(fd, POLLOUT, IO_TIMEOUT_MS) < 0)
				return -1;
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read until close, or until Content-Length says the body is complete. */
static int read_response(int fd, struct resp *r, char *err, size_t errsz)
{
	size_t cap = 16384;
	long long want = -1; /* header + body length, once known */
	r->data = malloc(cap + 1);
	r->len = 0;
	if (!r->data)
		return -1;
	for (;;) {
		if (want >= 0 && (long long)r->len >= want)
			break;
		if (r->len == cap) {
			if (cap >= MAX_RESPONSE) {
				snprintf(err, errsz, "response larger than %u bytes", MAX_RESPONSE);
				return -1;
			}
			cap *= 2;
			char *n = realloc(r->data, cap + 1);
			if (!n)
				return -1;
			r->data = n;
		}
		ssize_t n = recv(fd, r->data + r->len, cap - r->len, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (wait_fd(fd, POLLIN, IO_TIMEOUT_MS) < 0) {
				snprintf(err, errsz, "reading reply: %s", strerror(errno));
				return -1;
			}
			continue;
		}
		if (n < 0) {
			snprintf(err, errsz, "reading reply: %s", strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		r->len += (size_t)n;
		r->data[r->len] = '\0';
		char *eoh = want < 0 ? strstr(r->data, "\r\n\r\n") : NULL;
		if (eoh) {
			const char *cl = NULL;
			for (char *h = strstr(r->data, "\r\n"); h && h < eoh; h = strstr(h + 2, "\r\n"))
				if (strncasecmp(h + 2, "Content-Length:", 15) == 0)
					cl = h + 17;
			if (cl)
				want = (eoh + 4 - r->data) + strtoll(cl, NULL, 10);
		}
	}
	r->data[r->len] = '\0';
	return 0;
}

/* Undo chunked transfer coding in place; -1 if malformed. */
static int dechunk(char *b, size_t len, size_t *out_len)
{
	size_t in = 0, out = 0;
	for (;;) {
		char *end;
		unsigned long long n = strtoull(b + in, &end, 16);
		char *crlf = strstr(b + in, "\r\n");
		if (end == b + in || !crlf)
			return -1;
		in = (size_t)(crlf - b) + 2;
		if (n == 0)
			break;
		if (n > len - in)
			return -1;
		memmove(b + out, b + in, n);
		out += n;
		in += n + 2;
		if (in > len)
			return -1;
	}
	b[out] = '\0';
	*out_len = out;
	return 0;
}

static int parse_response(struct resp *r, char *err, size_t errsz)
{
	char *eoh = strstr(r->data, "\r\n\r\n");
	if (strncmp(r->data, "HTTP/1.", 7) != 0 || !eoh ||
	    sscanf(r->data + 8, " %3d", &r->code) != 1) {
		snprintf(err, errsz, "not an HTTP response");
		return -1;
	}
	char *body = eoh + 4;
	r->body_len = r->len - (size_t)(body - r->data);
	*eoh = '\0';
	int chunked = 0;
	for (char *h = strstr(r->data, "\r\n"); h; h = strstr(h + 2, "\r\n")) {
		if (strncasecmp(h + 2, "Transfer-Encoding:", 18) == 0 && strstr(h + 20, "chunked"))
			chunked = 1;
		if (strncasecmp(h + 2, "Content-Length:", 15) == 0 &&
		    strtoull(h + 17, NULL, 10) < r->body_len)
			r->body_len = strtoull(h + 17, NULL, 10);
	}
	if (chunked && dechunk(body, r->body_len, &r->body_len) != 0) {
		snprintf(err, errsz, "bad chunked encoding");
		return -1;
	}
	body[r->body_len] = '\0';
	r->body = body;
	return 0;
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
		printf("  %-24s %-5s %-22s %12s %10s %6s %6s  %s\n", F(a, "id"), F(a, "connected"),
		       F(a, "peer"), F(a, "last_seq"), F(a, "events"), F(a, "duplicates"),
		       F(a, "gaps"), ago(json_object_get(a, "last_seen_s"), b, sizeof(b)));
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
	static const struct option lo[] = {
		{ "http", required_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *addr = FB_CLI_DEFAULT_HTTP_ADDR;
	int raw = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":H:jh", lo, NULL)) != -1) {
		switch (c) {
		case 'H': addr = optarg; break;
		case 'j': raw = 1; break;
		case 'h': help(); return 0;
		case ':': return usage_err("%s needs a value", argv[optind - 1]);
		default: return usage_err("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_err("unexpected argument '%s'", argv[optind]);
	char host[256], hosthdr[300], req[512], err[256] = "";
	int port;
	if (fb_cli_parse_addr(addr, host, sizeof(host), &port) < 0)
		return 2;
	snprintf(hosthdr, sizeof(hosthdr), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);

	int fd = dial(host, port);
	if (fd < 0) {
		fprintf(stderr, "fabricbus status: cannot reach fabricbusd at %s: %s\n", hosthdr,
			strerror(errno));
		return 1;
	}
	int n = snprintf(req, sizeof(req),
			 "GET /status HTTP/1.1\r\nHost: %s\r\nAccept: application/json\r\n"
			 "User-Agent: fabricbus/%s\r\nConnection: close\r\n\r\n",
			 hosthdr, FB_VERSION);
	struct resp r = { 0 };
	int rc = send_all(fd, req, (size_t)n);
	if (rc < 0)
		snprintf(err, sizeof(err), "sending request: %s", strerror(errno));
	else
		rc = read_response(fd, &r, err, sizeof(err));
	close(fd);
	if (rc == 0)
		rc = parse_response(&r, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "fabricbus status: fabricbusd at %s: %s\n", hosthdr,
			err[0] ? err : "out of memory");
		free(r.data);
		return 1;
	}
	if (r.code != 200) {
		fprintf(stderr, "fabricbus status: fabricbusd at %s answered HTTP %d: %.200s\n",
			hosthdr, r.code, r.body);
		free(r.data);
		return 1;
	}
	json_error_t je;
	json_t *root = json_loadb(r.body, r.body_len, 0, &je);
	if (!json_is_object(root)) {
		fprintf(stderr, "fabricbus status: fabricbusd at %s: reply is not a JSON object "
			"(%s)\n", hosthdr, root ? "wrong type" : je.text);
		json_decref(root);
		free(r.data);
		return 1;
	}
	if (raw) {
		fwrite(r.body, 1, r.body_len, stdout);
		if (r.body_len && r.body[r.body_len - 1] != '\n')
			putchar('\n');
	} else {
		print_summary(root, hosthdr);
	}
	json_decref(root);
	free(r.data);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "fabricbus status: writing stdout: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

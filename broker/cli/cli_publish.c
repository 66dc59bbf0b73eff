/* cli_publish.c - `fabricbus publish`: JSON events in, the agent protocol out.
 *
 * Input is validated before anything is sent: every argument, a whole
 * regular file, or up to STREAM_AFTER lines of a pipe. Only a pipe longer
 * than that is sent while it is read (a bad line then stops the input, what
 * was valid is flushed, and the exit status is 2). Events go through
 * fb_session, and the command exits once the broker's cumulative ACK covers
 * everything sent. Reading and validating the input is cli_publish_input.c;
 * this file holds the options and drives the session.
 */
#include "cli.h"
#include "cli_opts.h"
#include "cli_publish.h"
#include "fb_usage.h"

#include "fb_err.h"
#include "fb_session.h"
#include "fb_wire.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PUB_WINDOW 16384      /* unacked events in flight */
#define FEED_BUDGET 65536     /* events per loop iteration, so acks get read */

struct pub {
	char host[256];
	int port;
	const char *addr;
	char addr_show[300];  /* host:port as resolved from --broker, for messages */
	char agent_id[FB_AGENT_ID_MAX];
	double timeout_s;
	int quiet, verbose;
	const char *tls_ca, *tls_cert, *tls_key; /* --tls-*: NULL for plain TCP */

	struct fb_pub_input in;

	struct event_base *base;
	struct fb_session *s;
	struct event *feed_ev, *stdin_ev, *timer_ev;
	struct fb_event pending;
	int have_pending, blocked, input_done, timed_out;
	unsigned long long submitted;
	int last_code, seen_error_codes;
	char last_err[256];
};

static void help(void)
{
	printf("NAME\n"
	       "    fabricbus publish - send events to fabricbusd and wait until they are durable\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    fabricbus publish [--broker HOST:PORT] [--agent-id ID] [--timeout SEC]\n"
	       "                      [--tls-ca FILE [--tls-cert FILE --tls-key FILE]]\n"
	       "                      [--quiet] [--verbose] [--file FILE | JSON ...]\n"
	       "    fabricbus publish [options] --count N [--template JSON]\n"
	       "    fabricbus publish [options] --generate N\n"
	       "\n"
	       "DESCRIPTION\n"
	       "    Each event is a JSON object (fields as in docs/event-model.md). Events come\n"
	       "    from the JSON arguments, else from --file, else from stdin, one object per\n"
	       "    line; a line may also hold a JSON array of objects. Blank lines are skipped.\n"
	       "    \"seq\" and \"agent_id\" in the input are ignored: the session numbers events\n"
	       "    and the agent id comes from --agent-id.\n"
	       "    All input is validated before anything is sent: a bad event is reported by\n"
	       "    argument or line number and field, nothing is sent, and the exit status is 2.\n"
	       "    Exception: stdin that is a pipe and longer than %d lines is sent while it\n"
	       "    is read; a bad line then stops reading, the valid events before it are\n"
	       "    still delivered, and the exit status is 2.\n"
	       "\n"
	       "    The command exits when the broker's ACK covers every event it sent, i.e.\n"
	       "    they are in the broker's journal. Sequence numbers continue from what the\n"
	       "    broker holds for the agent id, so repeated runs with the same id extend one\n"
	       "    sequence. Concurrent publishers MUST use distinct --agent-id values: the\n"
	       "    broker keeps one session per id and refuses a second one (ERROR IN_USE)\n"
	       "    unless it comes with a client certificate for the id.\n"
	       "\n"
	       "OPTIONS\n"
	       "    -b, --broker HOST:PORT  agent protocol address (default %s);\n"
	       "                            also [IPV6]:PORT or :PORT\n"
	       "    -a, --agent-id ID       agent id, [A-Za-z0-9._:@-], < %d chars\n"
	       "                            (default cli@<hostname>)\n"
	       "    -t, --timeout SEC       give up when not everything is acked after SEC\n"
	       "                            seconds, retrying an unreachable broker until then\n"
	       "                            (default 30)\n"
	       "    -f, --file FILE         read JSON lines from FILE ('-' for stdin)\n"
	       "    -n, --count N           send N generated copies of the template event;\n"
	       "                            port cycles through 1..36 unless the template\n"
	       "                            sets one; ts is the send time\n"
	       "        --template JSON     the event for --count (default: a 'test' event on\n"
	       "                            switch 'loadgen', tech infiniband)\n"
	       "        --generate N        same as --count N with the default template\n"
	       "        --tls-ca FILE       TLS to the broker: the CA of its certificate (PEM)\n"
	       "        --tls-cert FILE     client certificate (PEM) whose CN or a DNS SAN\n"
	       "                            allows --agent-id (docs/security.md)\n"
	       "        --tls-key FILE      the key of --tls-cert\n"
	       "    -q, --quiet             no summary line\n"
	       "    -v, --verbose           report every connection error and retry\n"
	       "    -h, --help              show this help\n"
	       "\n"
	       "OUTPUT\n"
	       "    On success, to stderr: published N events (acked up to seq S)\n"
	       "\n"
	       "EXAMPLES\n"
	       "    fabricbus publish '{\"kind\":\"link_down\",\"switch\":\"leaf01\",\"port\":7}'\n"
	       "    some-monitor --json-lines | fabricbus publish --agent-id monitor@node17\n"
	       "    fabricbus publish --file events.jsonl --broker 10.0.0.5:7411 --timeout 60\n"
	       "    fabricbus publish --generate 25000 --agent-id load-1 --quiet\n"
	       "\n"
	       "EXIT STATUS\n"
	       "    0  every event was acked by the broker\n"
	       "    1  broker unreachable, or not everything acked within --timeout\n"
	       "    2  usage error or bad input (nothing sent, except in pipe streaming mode)\n",
	       STREAM_AFTER, FB_CLI_DEFAULT_AGENT_ADDR, FB_AGENT_ID_MAX);
}

/* ---- the session loop ------------------------------------------------------ */

static void check_done(struct pub *p)
{
	struct fb_session_stats st;
	fb_session_get_stats(p->s, &st);
	if (p->input_done && !p->have_pending && st.unacked == 0)
		event_base_loopbreak(p->base);
}

static void feed(struct pub *p)
{
	for (int budget = FEED_BUDGET; budget > 0; budget--) {
		if (!p->have_pending) {
			int r = fb_pub_input_next(&p->in, 0, &p->pending);
			if (r == 0) {
				event_add(p->stdin_ev, NULL);
				return;
			}
			if (r < 0) {
				p->input_done = 1;
				check_done(p);
				return;
			}
			p->have_pending = 1;
		}
		int rc = fb_session_submit(p->s, &p->pending);
		if (rc == FB_EFULL) {
			p->blocked = 1;
			return;
		}
		p->have_pending = 0;
		if (rc) { /* validated already, so this is a bug, not bad input */
			snprintf(p->in.bad, sizeof(p->in.bad), "event %llu refused by the session: %s",
				 p->in.produced, fb_strerror(rc));
			p->input_done = 1;
			check_done(p);
			return;
		}
		p->submitted++;
	}
	event_active(p->feed_ev, 0, 0);
}

static void feed_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	feed(arg);
}

static void stdin_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct pub *p = arg;
	p->in.src.readable = 1;
	feed(p);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct pub *p = arg;
	p->timed_out = 1;
	event_base_loopbreak(p->base);
}

static void on_ack(void *arg, uint64_t seq)
{
	(void)seq;
	struct pub *p = arg;
	if (p->blocked) {
		p->blocked = 0;
		event_active(p->feed_ev, 0, 0);
	}
	check_done(p);
}

static void on_err(void *arg, int code, const char *text)
{
	struct pub *p = arg;
	p->last_code = code;
	snprintf(p->last_err, sizeof(p->last_err), "%s", text);
	/* Broker ERROR frames matter (replaced, refused events): say each once. */
	int bit = code > 0 && code < 31 ? 1 << code : 0;
	if (p->verbose || (bit && !(p->seen_error_codes & bit)))
		fprintf(stderr, "fabricbus publish: %s\n", text);
	p->seen_error_codes |= bit;
}

static int run_session(struct pub *p)
{
	struct fb_session_opts o = { p->host, p->port, p->agent_id, PUB_WINDOW, 512, 5000,
				     p->tls_ca, p->tls_cert, p->tls_key };
	int rc = fb_session_new(p->base, &o, &p->s);
	if (rc) {
		fprintf(stderr, "fabricbus publish: cannot start a session: %s\n", fb_strerror(rc));
		return 1;
	}
	fb_session_set_callbacks(p->s, on_ack, on_err, p);
	p->feed_ev = event_new(p->base, -1, 0, feed_cb, p);
	p->stdin_ev = p->in.src.argv ? NULL : event_new(p->base, p->in.src.fd, EV_READ, stdin_cb, p);
	p->timer_ev = evtimer_new(p->base, timer_cb, p);
	if (!p->feed_ev || !p->timer_ev || (!p->in.src.argv && !p->stdin_ev)) {
		fprintf(stderr, "fabricbus publish: out of memory\n");
		return 1;
	}
	struct timeval tv = { (time_t)p->timeout_s,
			      (suseconds_t)((p->timeout_s - (double)(time_t)p->timeout_s) * 1e6) };
	evtimer_add(p->timer_ev, &tv);
	fb_session_start(p->s);
	feed(p);
	event_base_dispatch(p->base);

	struct fb_session_stats st;
	fb_session_get_stats(p->s, &st);
	unsigned long long total = p->submitted + (unsigned long long)p->have_pending;
	if (p->timed_out) {
		int ever = st.connected || st.sent_frames || st.reconnects;
		if (!ever)
			fprintf(stderr,
				"fabricbus publish: cannot reach fabricbusd at %s within %g s: %s; "
				"%llu events not published\n",
				p->addr_show, p->timeout_s,
				p->last_code < 0 ? fb_strerror(p->last_code)
				: p->last_err[0] ? p->last_err : "no answer",
				total);
		else
			fprintf(stderr, "fabricbus publish: not acked by %s within %g s: %llu events "
				"unacked\n", p->addr_show, p->timeout_s,
				total > st.acked ? total - st.acked : 0);
		if (p->in.bad[0])
			fprintf(stderr, "fabricbus publish: stopped at bad input: %s\n", p->in.bad);
		return 1;
	}
	if (p->in.bad[0]) {
		fprintf(stderr, "fabricbus publish: %s\n", p->in.bad);
		fprintf(stderr, "fabricbus publish: %llu events before it were published (acked up "
			"to seq %llu)\n", p->submitted, (unsigned long long)st.last_acked_seq);
		return 2;
	}
	if (!p->quiet)
		fprintf(stderr, "published %llu events (acked up to seq %llu)\n", p->submitted,
			(unsigned long long)st.last_acked_seq);
	return 0;
}

/* ---- options ---------------------------------------------------------------- */

static int parse_count(const char *s, unsigned long long *out)
{
	uint64_t v;
	if (fb_cli_parse_u64(s, &v) || v == 0)
		return -1;
	*out = v;
	return 0;
}

static int parse_opts(struct pub *p, int argc, char **argv, const char **file,
		      const char **tmpl_json)
{
	struct option lo[FB_CLI_OPTS_MAX];
	int c;
	fb_cli_options(FB_CLI_PUBLISH, lo);
	while ((c = getopt_long(argc, argv, ":b:a:t:f:n:qvh", lo, NULL)) != -1) {
		switch (c) {
		case 'b': p->addr = optarg; break;
		case 'a':
			if (!fb_agent_id_valid(optarg))
				return fb_usage_error("fabricbus publish",
						      "bad --agent-id '%s': want 1..%d chars of "
						      "[A-Za-z0-9._:@-]", optarg, FB_AGENT_ID_MAX - 1);
			snprintf(p->agent_id, sizeof(p->agent_id), "%s", optarg);
			break;
		case 't':
			if (fb_cli_parse_secs(optarg, &p->timeout_s))
				return fb_usage_error("fabricbus publish",
						      "bad --timeout '%s': want seconds > 0", optarg);
			break;
		case 'f': *file = optarg; break;
		case 'n':
		case 'g':
			if (parse_count(optarg, &p->in.gen_count))
				return fb_usage_error("fabricbus publish", "bad --%s '%s': want a count >= 1",
						      c == 'n' ? "count" : "generate", optarg);
			break;
		case 'T': *tmpl_json = optarg; break;
		case 'q': p->quiet = 1; break;
		case 'v': p->verbose = 1; break;
		case 'C': p->tls_ca = optarg; break;
		case 'E': p->tls_cert = optarg; break;
		case 'K': p->tls_key = optarg; break;
		case 'h': help(); return -1;
		case ':': return fb_usage_error("fabricbus publish", "%s needs a value", argv[optind - 1]);
		default: return fb_usage_error("fabricbus publish", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (fb_cli_parse_addr(p->addr, p->host, sizeof(p->host), &p->port) < 0)
		return 2;
	snprintf(p->addr_show, sizeof(p->addr_show), strchr(p->host, ':') ? "[%s]:%d" : "%s:%d",
		 p->host, p->port);
	if ((p->tls_cert || p->tls_key) && !p->tls_ca)
		return fb_usage_error("fabricbus publish", "--tls-cert and --tls-key need --tls-ca");
	if (!p->tls_cert != !p->tls_key)
		return fb_usage_error("fabricbus publish", "--tls-cert and --tls-key go together");
	if (*tmpl_json && !p->in.gen_count)
		return fb_usage_error("fabricbus publish", "--template needs --count N");
	if (p->in.gen_count && (*file || optind < argc))
		return fb_usage_error("fabricbus publish",
				      "--count/--generate cannot be combined with --file or JSON "
				      "arguments");
	if (*file && optind < argc)
		return fb_usage_error("fabricbus publish",
				      "give events as JSON arguments or --file, not both");
	return 0;
}

int fb_cli_publish(int argc, char **argv)
{
	struct pub *p = calloc(1, sizeof(*p));
	if (!p)
		return 1;
	const char *file = NULL, *tmpl_json = NULL;
	int status = 0, streaming = 0;
	p->addr = FB_CLI_DEFAULT_AGENT_ADDR;
	p->timeout_s = 30;
	p->in.src.fd = -1;
	fb_session_default_agent_id("cli", p->agent_id, sizeof(p->agent_id));
	int r = parse_opts(p, argc, argv, &file, &tmpl_json);
	if (r) {
		status = r < 0 ? 0 : r;
		goto out;
	}
	if (p->in.gen_count) {
		status = fb_pub_input_template(&p->in, tmpl_json);
	} else if ((status = fb_pub_input_open(&p->in, argc - optind, argv + optind, file)) == 0) {
		struct evbuffer *stash = evbuffer_new();
		long long n = stash ? fb_pub_input_validate(&p->in, &streaming, stash) : -1;
		if (n < 0) {
			fprintf(stderr, "fabricbus publish: %s; nothing was sent\n",
				p->in.bad[0] ? p->in.bad : "out of memory");
			status = 2;
		} else if (n == 0 && !streaming) {
			if (!p->quiet)
				fprintf(stderr, "published 0 events (no input)\n");
		} else if (fb_pub_input_rewind(&p->in, stash) != 0) {
			fprintf(stderr, "fabricbus publish: cannot rewind %s: %s\n", p->in.src.name,
				strerror(errno));
			status = 1;
		} else {
			status = -1;
		}
		if (stash)
			evbuffer_free(stash);
		if (status == -1)
			status = 0;
		else
			goto out;
	}
	if (status)
		goto out;
	signal(SIGPIPE, SIG_IGN); /* a broker closing mid-write is an error, not death */
	p->base = event_base_new();
	status = p->base ? run_session(p) : 1;
out:
	fb_session_free(p->s);
	if (p->feed_ev)
		event_free(p->feed_ev);
	if (p->stdin_ev)
		event_free(p->stdin_ev);
	if (p->timer_ev)
		event_free(p->timer_ev);
	if (p->base)
		event_base_free(p->base);
	fb_pub_input_free(&p->in);
	free(p);
	return status;
}

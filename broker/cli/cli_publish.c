/* cli_publish.c - `fabricbus publish`: JSON events in, the agent protocol out.
 *
 * Input is validated before anything is sent: every argument, a whole
 * regular file, or up to STREAM_AFTER lines of a pipe. Only a pipe longer
 * than that is sent while it is read (a bad line then stops the input, what
 * was valid is flushed, and the exit status is 2). Events go through
 * fb_session, and the command exits once the broker's cumulative ACK covers
 * everything sent.
 */
#include "cli.h"

#include "fb_err.h"
#include "fb_event.h"
#include "fb_event_json.h"
#include "fb_session.h"
#include "fb_wire.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STREAM_AFTER 100000   /* pipe lines validated before sending starts */
#define LINE_MAX_BYTES (1u << 20)
#define PUB_WINDOW 16384      /* unacked events in flight */
#define FEED_BUDGET 65536     /* events per loop iteration, so acks get read */

/* A source of lines: arguments, or a file descriptor read through a buffer. */
struct lines {
	char **argv;          /* argument mode when non-NULL */
	int argc, argi;
	int fd;
	int regular;          /* reads never block */
	int readable;         /* the loop said fd is readable */
	int eof;
	struct evbuffer *buf;
	struct evbuffer *stash; /* when set, lines read are also kept here */
	const char *name;     /* "stdin" or the file name, for messages */
	unsigned long lineno;
};

struct pub {
	char host[256];
	int port;
	const char *addr;
	char addr_show[300];  /* host:port as resolved from --broker, for messages */
	char agent_id[FB_AGENT_ID_MAX];
	double timeout_s;
	int quiet, verbose;
	unsigned long long gen_count; /* --count/--generate: events to make */
	struct fb_event tmpl;

	struct lines in;
	json_t *cur;          /* the parsed line being consumed */
	size_t cur_idx;       /* next element when cur is an array */
	unsigned long cur_line;

	struct event_base *base;
	struct fb_session *s;
	struct event *feed_ev, *stdin_ev, *timer_ev;
	struct fb_event pending;
	int have_pending, blocked, input_done, timed_out;
	unsigned long long produced, submitted;
	char bad[512];        /* the first bad line, once seen */
	int last_code, seen_error_codes;
	char last_err[256];
};

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("fabricbus publish: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (try: fabricbus publish --help)\n", stderr);
	return 2;
}

static void help(void)
{
	printf("NAME\n"
	       "    fabricbus publish - send events to fabricbusd and wait until they are durable\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    fabricbus publish [--broker HOST:PORT] [--agent-id ID] [--timeout SEC]\n"
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
	       "    broker keeps one connection per id and replaces the older one.\n"
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

static void default_agent_id(char *out, size_t outsz)
{
	char h[256] = "localhost";
	if (gethostname(h, sizeof(h) - 1) != 0 || !h[0])
		snprintf(h, sizeof(h), "localhost");
	h[sizeof(h) - 1] = '\0';
	for (char *c = h; *c; c++)
		if (!strchr("._:@-", *c) && !(*c >= 'a' && *c <= 'z') &&
		    !(*c >= 'A' && *c <= 'Z') && !(*c >= '0' && *c <= '9'))
			*c = '-';
	snprintf(out, outsz, "cli@%.58s", h);
}

/* ---- lines and events ----------------------------------------------------- */

/* One read into the buffer: 1 got bytes, 0 end of file, -1 error. */
static int lines_fill(struct lines *l)
{
	int n = evbuffer_read(l->buf, l->fd, 65536);
	if (n > 0)
		return 1;
	if (n == 0) {
		l->eof = 1;
		return 0;
	}
	if (errno == EINTR || errno == EAGAIN)
		return 1;
	return -1;
}

/* Next line (malloc'd, caller frees): 1 got one, 0 would block, -1 end,
 * -2 read error (message in err). */
static int lines_next(struct lines *l, int may_block, char **line, size_t *n, char *err,
		      size_t errsz)
{
	if (l->argv) {
		if (l->argi >= l->argc)
			return -1;
		*line = strdup(l->argv[l->argi++]);
		*n = *line ? strlen(*line) : 0;
		l->lineno++;
		return *line ? 1 : -2;
	}
	for (;;) {
		*line = evbuffer_readln(l->buf, n, EVBUFFER_EOL_LF);
		if (*line) {
			l->lineno++;
			if (l->stash && (evbuffer_add(l->stash, *line, *n) ||
					 evbuffer_add(l->stash, "\n", 1)))
				return -2;
			return 1;
		}
		size_t left = evbuffer_get_length(l->buf);
		if (l->eof) {
			if (!left)
				return -1;
			*line = malloc(left + 1); /* last line without a newline */
			if (!*line)
				return -2;
			evbuffer_remove(l->buf, *line, left);
			(*line)[left] = '\0';
			if (l->stash && evbuffer_add(l->stash, *line, left))
				return -2;
			*n = left;
			l->lineno++;
			return 1;
		}
		if (left > LINE_MAX_BYTES) {
			snprintf(err, errsz, "%s:%lu: line longer than %u bytes", l->name,
				 l->lineno + 1, LINE_MAX_BYTES);
			return -2;
		}
		if (!may_block && !l->regular && !l->readable)
			return 0;
		l->readable = 0;
		if (lines_fill(l) < 0) {
			snprintf(err, errsz, "reading %s: %s", l->name, strerror(errno));
			return -2;
		}
	}
}

static void where(const struct lines *l, unsigned long line, char *out, size_t outsz)
{
	if (l->argv)
		snprintf(out, outsz, "argument %lu", line);
	else
		snprintf(out, outsz, "%s:%lu", l->name, line);
}

/* Parse one line into p->cur. 1 parsed, 0 blank, -1 bad (message in p->bad). */
static int parse_line(struct pub *p, const char *line, size_t n)
{
	size_t i = 0;
	while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
		i++;
	if (i == n)
		return 0;
	char at[300];
	json_error_t je;
	where(&p->in, p->in.lineno, at, sizeof(at));
	json_t *j = json_loadb(line, n, 0, &je);
	if (!j) {
		snprintf(p->bad, sizeof(p->bad), "%s: invalid JSON at column %d: %s", at,
			 je.column, je.text);
		return -1;
	}
	if (!json_is_object(j) && !json_is_array(j)) {
		json_decref(j);
		snprintf(p->bad, sizeof(p->bad), "%s: want a JSON object or an array of objects",
			 at);
		return -1;
	}
	p->cur = j;
	p->cur_idx = 0;
	p->cur_line = p->in.lineno;
	return 1;
}

/* Next event of the current line: 1 got, 0 line used up, -1 bad. */
static int take_from_line(struct pub *p, struct fb_event *ev)
{
	json_t *o = p->cur;
	size_t idx = p->cur_idx;
	if (json_is_array(p->cur)) {
		if (idx >= json_array_size(p->cur))
			goto used_up;
		o = json_array_get(p->cur, idx);
	} else if (idx > 0) {
		goto used_up;
	}
	p->cur_idx++;
	char at[300], msg[256] = "";
	where(&p->in, p->cur_line, at, sizeof(at));
	if (json_is_array(p->cur))
		snprintf(at + strlen(at), sizeof(at) - strlen(at), " element %zu", idx + 1);
	memset(ev, 0, sizeof(*ev));
	const char *why = NULL;
	if (!json_is_object(o)) {
		snprintf(p->bad, sizeof(p->bad), "%s: not a JSON object", at);
		return -1;
	}
	if (fb_event_from_json(o, ev, msg, sizeof(msg)) != 0) {
		snprintf(p->bad, sizeof(p->bad), "%s: %s", at, msg[0] ? msg : "invalid event");
		return -1;
	}
	uint64_t seq = ev->seq;
	ev->seq = 1; /* the session numbers it; check the rest as the broker will */
	if (fb_event_check(ev, &why) != 0) {
		snprintf(p->bad, sizeof(p->bad), "%s: %s", at, why ? why : "invalid event");
		return -1;
	}
	ev->seq = seq;
	return 1;
used_up:
	json_decref(p->cur);
	p->cur = NULL;
	return 0;
}

/* 1 got an event, 0 would block, -1 no more, -2 bad input (p->bad), -3 the
 * validation pass has seen STREAM_AFTER lines of a pipe. */
static int next_event(struct pub *p, int may_block, struct fb_event *ev)
{
	if (p->gen_count) {
		if (p->produced >= p->gen_count)
			return -1;
		*ev = p->tmpl;
		ev->ts_ns = 0; /* the session stamps it */
		if (!p->tmpl.subj.port)
			ev->subj.port = (uint16_t)(p->produced % 36 + 1);
		p->produced++;
		return 1;
	}
	for (;;) {
		if (p->cur) {
			int r = take_from_line(p, ev);
			if (r == 1) {
				p->produced++;
				return 1;
			}
			if (r < 0)
				return -2;
			if (p->in.stash && p->in.lineno >= STREAM_AFTER)
				return -3; /* validated enough of the pipe */
		}
		char *line = NULL;
		size_t n = 0;
		int r = lines_next(&p->in, may_block, &line, &n, p->bad, sizeof(p->bad));
		if (r != 1)
			return r;
		r = parse_line(p, line, n);
		free(line);
		if (r < 0)
			return -2;
	}
}

/* Validate input before connecting: all of it, or the first STREAM_AFTER
 * lines of a pipe, whose lines are kept in stash for the send pass. Returns
 * the event count, or -1 (p->bad says why); *streaming is set when the pipe
 * has more lines than were validated. */
static long long validate(struct pub *p, int *streaming, struct evbuffer *stash)
{
	long long count = 0;
	struct fb_event ev;
	*streaming = 0;
	if (!p->in.argv && !p->in.regular)
		p->in.stash = stash;
	for (;;) {
		int r = next_event(p, 1, &ev);
		if (r == -3)
			*streaming = 1;
		if (r == -2)
			count = -1;
		if (r != 1)
			break;
		count++;
	}
	p->in.stash = NULL;
	return count;
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
			int r = next_event(p, 0, &p->pending);
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
			snprintf(p->bad, sizeof(p->bad), "event %llu refused by the session: %s",
				 p->produced, fb_strerror(rc));
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
	p->in.readable = 1;
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
	struct fb_session_opts o = { p->host, p->port, p->agent_id, PUB_WINDOW, 512, 5000 };
	int rc = fb_session_new(p->base, &o, &p->s);
	if (rc) {
		fprintf(stderr, "fabricbus publish: cannot start a session: %s\n", fb_strerror(rc));
		return 1;
	}
	fb_session_set_callbacks(p->s, on_ack, on_err, p);
	p->feed_ev = event_new(p->base, -1, 0, feed_cb, p);
	p->stdin_ev = p->in.argv ? NULL : event_new(p->base, p->in.fd, EV_READ, stdin_cb, p);
	p->timer_ev = evtimer_new(p->base, timer_cb, p);
	if (!p->feed_ev || !p->timer_ev || (!p->in.argv && !p->stdin_ev)) {
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
		if (p->bad[0])
			fprintf(stderr, "fabricbus publish: stopped at bad input: %s\n", p->bad);
		return 1;
	}
	if (p->bad[0]) {
		fprintf(stderr, "fabricbus publish: %s\n", p->bad);
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
	static const struct option lo[] = {
		{ "broker", required_argument, NULL, 'b' },
		{ "agent-id", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "file", required_argument, NULL, 'f' },
		{ "count", required_argument, NULL, 'n' },
		{ "generate", required_argument, NULL, 'g' },
		{ "template", required_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:a:t:f:n:qvh", lo, NULL)) != -1) {
		switch (c) {
		case 'b': p->addr = optarg; break;
		case 'a':
			if (!fb_agent_id_valid(optarg))
				return bad_usage("bad --agent-id '%s': want 1..%d chars of "
						 "[A-Za-z0-9._:@-]", optarg, FB_AGENT_ID_MAX - 1);
			snprintf(p->agent_id, sizeof(p->agent_id), "%s", optarg);
			break;
		case 't':
			if (fb_cli_parse_secs(optarg, &p->timeout_s))
				return bad_usage("bad --timeout '%s': want seconds > 0", optarg);
			break;
		case 'f': *file = optarg; break;
		case 'n':
		case 'g':
			if (parse_count(optarg, &p->gen_count))
				return bad_usage("bad --%s '%s': want a count >= 1",
						 c == 'n' ? "count" : "generate", optarg);
			break;
		case 'T': *tmpl_json = optarg; break;
		case 'q': p->quiet = 1; break;
		case 'v': p->verbose = 1; break;
		case 'h': help(); return -1;
		case ':': return bad_usage("%s needs a value", argv[optind - 1]);
		default: return bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (fb_cli_parse_addr(p->addr, p->host, sizeof(p->host), &p->port) < 0)
		return 2;
	snprintf(p->addr_show, sizeof(p->addr_show), strchr(p->host, ':') ? "[%s]:%d" : "%s:%d",
		 p->host, p->port);
	if (*tmpl_json && !p->gen_count)
		return bad_usage("--template needs --count N");
	if (p->gen_count && (*file || optind < argc))
		return bad_usage("--count/--generate cannot be combined with --file or JSON "
				 "arguments");
	if (*file && optind < argc)
		return bad_usage("give events as JSON arguments or --file, not both");
	return 0;
}

static int make_template(struct pub *p, const char *json)
{
	struct fb_event *t = &p->tmpl;
	memset(t, 0, sizeof(*t));
	if (!json) {
		t->kind = FB_KIND_TEST;
		t->severity = FB_SEV_OK;
		t->tech = FB_TECH_IB;
		snprintf(t->subj.switch_name, sizeof(t->subj.switch_name), "loadgen");
		snprintf(t->text, sizeof(t->text), "generated by fabricbus publish");
		return 0;
	}
	char *argv1[] = { (char *)json };
	p->in.argv = argv1;
	p->in.argc = 1;
	unsigned long long save = p->gen_count;
	p->gen_count = 0;
	int r = next_event(p, 1, t);
	p->gen_count = save;
	if (p->cur) {
		json_decref(p->cur);
		p->cur = NULL;
	}
	p->in.argv = NULL;
	if (r != 1) {
		fprintf(stderr, "fabricbus publish: --template: %s\n",
			p->bad[0] ? p->bad + strlen("argument 1: ") : "no event");
		return 2;
	}
	p->produced = 0;
	return 0;
}

static int open_input(struct pub *p, int argc, char **argv, const char *file)
{
	if (optind < argc) {
		p->in.argv = argv + optind;
		p->in.argc = argc - optind;
		return 0;
	}
	p->in.fd = STDIN_FILENO;
	p->in.name = "stdin";
	if (file && strcmp(file, "-") != 0) {
		p->in.fd = open(file, O_RDONLY | O_CLOEXEC);
		if (p->in.fd < 0) {
			fprintf(stderr, "fabricbus publish: cannot open %s: %s\n", file,
				strerror(errno));
			return 2;
		}
		p->in.name = file;
	}
	struct stat sb;
	p->in.regular = fstat(p->in.fd, &sb) == 0 && S_ISREG(sb.st_mode);
	p->in.buf = evbuffer_new();
	return p->in.buf ? 0 : 1;
}

/* Put the source back to its start for the send pass. */
static int rewind_input(struct pub *p, struct evbuffer *stash)
{
	p->produced = 0;
	p->in.lineno = 0;
	p->in.argi = 0;
	if (p->in.argv)
		return 0;
	if (p->in.regular) {
		evbuffer_drain(p->in.buf, evbuffer_get_length(p->in.buf));
		p->in.eof = 0;
		return lseek(p->in.fd, 0, SEEK_SET) == 0 ? 0 : -1;
	}
	return evbuffer_prepend_buffer(p->in.buf, stash);
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
	p->in.fd = -1;
	default_agent_id(p->agent_id, sizeof(p->agent_id));
	int r = parse_opts(p, argc, argv, &file, &tmpl_json);
	if (r) {
		status = r < 0 ? 0 : r;
		goto out;
	}
	if (p->gen_count) {
		status = make_template(p, tmpl_json);
	} else if ((status = open_input(p, argc, argv, file)) == 0) {
		struct evbuffer *stash = evbuffer_new();
		long long n = stash ? validate(p, &streaming, stash) : -1;
		if (n < 0) {
			fprintf(stderr, "fabricbus publish: %s; nothing was sent\n",
				p->bad[0] ? p->bad : "out of memory");
			status = 2;
		} else if (n == 0 && !streaming) {
			if (!p->quiet)
				fprintf(stderr, "published 0 events (no input)\n");
		} else if (rewind_input(p, stash) != 0) {
			fprintf(stderr, "fabricbus publish: cannot rewind %s: %s\n", p->in.name,
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
	if (p->cur)
		json_decref(p->cur);
	fb_session_free(p->s);
	if (p->feed_ev)
		event_free(p->feed_ev);
	if (p->stdin_ev)
		event_free(p->stdin_ev);
	if (p->timer_ev)
		event_free(p->timer_ev);
	if (p->base)
		event_base_free(p->base);
	if (p->in.buf)
		evbuffer_free(p->in.buf);
	if (p->in.fd > STDIN_FILENO)
		close(p->in.fd);
	free(p);
	return status;
}

/* cli_tail.c - `fabricbus tail`: follow ws://<HttpListen>/ws/events and
 * print every Redfish Event as one JSON line on stdout.
 *
 * The stream is fb_source (proto/client/fb_source.h), the resuming reader
 * the Slurm and PMIx adapters use: its WebSocket client runs on its own
 * thread, drops an EventId at or below the last one handed over, and
 * reconnects with since=<last EventId> (or a missed notice's ResumeSince).
 * What is left here is the command: printing, the exit rules, --count,
 * --timeout and --idle-exit (a 50 ms tick on the loop), and --stats.
 *
 * Two threads. The source runs in direct mode: tail_on_event runs on the
 * client's thread, straight from libwebsockets' receive buffer, and owns
 * stdout and the message counters while the tail runs (a hand-over to our
 * loop cost 21-31% of the replay speed). Our loop keeps the tick, the
 * connection states and the end; what both threads read is atomic, and
 * the end (tail_finish) is decided once, by whichever thread comes first.
 *
 * Without --reconnect the first lost connection or missed notice ends the
 * tail; the source would resume, we stop it instead. Without --since the
 * source starts at the broker's head EventId (GET /status), so a
 * --reconnect before the first event loses nothing either.
 *
 * Output: each message is written with fwrite_unlocked into a 1 MiB stdout
 * buffer and flushed once per socket read that delivered messages
 * (on_drained: up to 256 KiB of frames), so a burst costs few write(2)s and
 * a quiet stream is printed at once. jansson runs only with --validate.
 *
 * Options, usage and help text live in cli_tail_opts.c.
 */
#include "cli.h"
#include "cli_tail.h"
#include "fb_event_scan.h"
#include "fb_http_auth.h"
#include "fb_log.h"
#include "fb_source.h"
#include "fb_time.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <jansson.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAIL_MAX_MSG (1u << 20)        /* fb_ws_client's limit: larger messages end the tail */
#define TAIL_TICK_MS 50
#define TAIL_BACKOFF_MIN_MS 100
#define TAIL_BACKOFF_MAX_MS 2000

struct tail {
	struct fb_tail_opts o;
	struct fb_http_auth auth; /* --token-file, --tls-ca */
	char url[320];       /* ws://host:port/ws/events, for messages */
	struct fb_buf filters; /* "&prefix=..&severity=.." encoded, NUL-terminated */
	struct event_base *base;
	struct fb_source *src;
	struct event *tick;
	int established;     /* connected now (on_state, loop) */
	/* written by the client's thread, read by the loop too */
	_Atomic uint64_t events, last_id;
	atomic_int have_last;
	_Atomic int64_t last_msg_us;
	/* the client's thread only (read after it has ended) */
	uint64_t notices;
	int got_event;       /* an event printed since the last read's end */
	int64_t first_msg_us, last_event_us;
	int64_t start_us;
	atomic_int done;     /* set once, by tail_finish */
	int status;          /* set by tail_finish's winner; read after the stop */
};

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

/* The one piece of global state here: signal handlers can reach nothing else. */
static volatile sig_atomic_t tail_stop_signal;
/* stdout keeps pointing at its buffer after we return, so it must be static. */
static char tail_stdout_buf[1u << 20];

static void tail_on_signal(int sig) { tail_stop_signal = sig; }

static void tail_note(const struct tail *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tail_note(const struct tail *t, const char *fmt, ...)
{
	va_list ap;

	if (t->o.s.quiet)
		return;
	va_start(ap, fmt);
	fputs("fabricbus tail: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Any thread; the first call decides the status. */
static void tail_finish(struct tail *t, int status)
{
	int was = 0;

	if (atomic_compare_exchange_strong(&t->done, &was, 1)) {
		t->status = status;
		event_base_loopbreak(t->base); /* wakes the loop from the client's thread */
	}
}

/* ---- output --------------------------------------------------------------- */

/* One line, whatever the server sent: JSON whitespace newlines become spaces
 * (a raw newline inside a JSON string would already be invalid JSON). */
static void tail_emit(FILE *f, const char *p, size_t len)
{
	const char *nl = memchr(p, '\n', len);

	while (nl) {
		fwrite_unlocked(p, 1, (size_t)(nl - p), f);
		putc_unlocked(' ', f);
		len -= (size_t)(nl - p) + 1;
		p = nl + 1;
		nl = memchr(p, '\n', len);
	}
	fwrite_unlocked(p, 1, len, f);
	putc_unlocked('\n', f);
}

/* Client's thread, after a socket read: the clock (once per read, not per
 * message), then one write for all it printed. */
static void tail_flush(void *arg)
{
	struct tail *t = arg;
	int64_t now = fb_time_us();

	STORE(t->last_msg_us, now);
	if (t->got_event) {
		t->got_event = 0;
		t->last_event_us = now;
	}
	if (LOAD(t->done))
		return; /* the loop flushes once the client has stopped */
	if (fflush(stdout) == EOF) {
		int e = errno;

		if (e != EPIPE) /* a reader that went away is not an error */
			fprintf(stderr, "fabricbus tail: writing stdout: %s\n", strerror(e));
		tail_finish(t, e == EPIPE ? TAIL_OK : TAIL_RUNTIME);
	}
}

/* ---- messages ------------------------------------------------------------- */

/* The missed notice: printed, then the end of the tail or (--reconnect) a
 * note, while the source resumes from ResumeSince. */
static void tail_notice(struct tail *t, const char *p, size_t len)
{
	struct fb_event_missed m;

	fb_event_scan_missed(p, len, &m);
	t->notices++;
	tail_emit(t->o.events_only ? stderr : stdout, p, len);
	if (m.have_resume && (!LOAD(t->have_last) || m.resume_since > LOAD(t->last_id))) {
		STORE(t->last_id, m.resume_since);
		STORE(t->have_last, 1);
	}
	if (!t->o.reconnect) {
		fflush(stdout);
		if (LOAD(t->have_last))
			fprintf(stderr, "fabricbus tail: %s: missed %" PRIu64 " events (this subscriber fell "
				"behind); resume with --since %" PRIu64 " or use --reconnect\n",
				t->url, m.missed, LOAD(t->last_id));
		else
			fprintf(stderr, "fabricbus tail: %s: missed %" PRIu64 " events (this subscriber fell "
				"behind) and the notice has no ResumeSince\n", t->url, m.missed);
		tail_finish(t, TAIL_MISSED);
		return;
	}
	tail_note(t, "%s: missed %" PRIu64 " events; reconnecting with since=%" PRIu64,
		  t->url, m.missed, LOAD(t->last_id));
}

/* --validate: 0, or -1 after saying why and ending the tail. */
static int tail_validate(struct tail *t, const char *p, size_t len)
{
	json_error_t je;
	json_t *root = json_loadb(p, len, 0, &je);
	int ok = json_is_object(root);

	if (!ok) {
		if (root)
			snprintf(je.text, sizeof(je.text), "valid JSON but not an object");
		fprintf(stderr, "fabricbus tail: %s: message after EventId %" PRIu64
			" is not a JSON object: %s\n", t->url, LOAD(t->last_id), je.text);
		tail_finish(t, TAIL_RUNTIME);
	}
	json_decref(root);
	return ok ? 0 : -1;
}

/* One message from the source (on the client's thread), in EventId order,
 * duplicates already dropped; a missed notice carries event_id 0. */
static void tail_on_event(void *arg, const char *p, size_t len, uint64_t event_id)
{
	struct tail *t = arg;
	struct fb_event_missed m;

	if (LOAD(t->done))
		return; /* the rest of a read after --count or an error */
	if (!t->first_msg_us)
		t->first_msg_us = fb_time_us(); /* once: --stats times from the first message */
	if (!len)
		return;
	if (!event_id && fb_event_scan_missed(p, len, &m)) {
		tail_notice(t, p, len);
		return;
	}
	if (t->o.validate && tail_validate(t, p, len) < 0)
		return;
	tail_emit(stdout, p, len);
	if (event_id) {
		STORE(t->last_id, event_id);
		STORE(t->have_last, 1);
	}
	t->got_event = 1;
	uint64_t n = LOAD(t->events) + 1; /* the only writer */
	STORE(t->events, n);
	if (n == t->o.s.count)
		tail_finish(t, TAIL_OK);
}

/* why: fb_ws_client's "connected with ..", "cannot connect: .." or
 * "connection lost: ..". */
static void tail_on_state(void *arg, int connected, const char *why)
{
	struct tail *t = arg;
	struct fb_wsc_stats st;
	int was_open = t->established;

	t->established = connected;
	if (LOAD(t->done))
		return;
	fb_source_ws_stats(t->src, &st);
	if (connected) {
		if (st.reconnects)
			tail_note(t, "%s: reconnected", t->url);
		return;
	}
	if (st.oversized) { /* the same message would come again: give up */
		fprintf(stderr, "fabricbus tail: %s: message after EventId %" PRIu64 " exceeds %u bytes; "
			"refusing it\n", t->url, LOAD(t->last_id), TAIL_MAX_MSG);
		tail_finish(t, TAIL_RUNTIME);
		return;
	}
	const char *hint = strstr(why, "(HTTP 401)") ? "; give --token-file" : "";
	if (t->o.reconnect) {
		tail_note(t, "%s: %s%s; reconnecting", t->url, why, hint);
		return;
	}
	fprintf(stderr, "fabricbus tail: %s: %s%s%s\n", t->url, why, hint,
		was_open ? "" : "; is fabricbusd running with HttpListen at this address?");
	tail_finish(t, TAIL_RUNTIME);
}

/* ---- the loop ------------------------------------------------------------- */

/* A pipe whose reader exited shows POLLERR on our end; without this check a
 * quiet stream would only notice at the next event (`tail | head -1`). */
static int stdout_reader_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

static void tail_tick(evutil_socket_t fd, short what, void *arg)
{
	struct tail *t = arg;
	int64_t now = fb_time_us(), last = LOAD(t->last_msg_us);
	int quiet = now - last >= TAIL_TICK_MS * 1000;

	(void)fd;
	(void)what;
	if (tail_stop_signal || (quiet && stdout_reader_gone())) {
		tail_finish(t, TAIL_OK);
		return;
	}
	if (t->o.s.timeout_s > 0 && now - t->start_us >= (int64_t)(t->o.s.timeout_s * 1e6)) {
		if (t->o.s.count) {
			fprintf(stderr, "fabricbus tail: %s: timeout after %g s: received %" PRIu64
				" of %" PRIu64 " events\n", t->url, t->o.s.timeout_s, LOAD(t->events),
				t->o.s.count);
			tail_finish(t, TAIL_RUNTIME);
		} else {
			tail_finish(t, TAIL_OK);
		}
		return;
	}
	if (t->o.s.idle_s > 0 && now - last >= (int64_t)(t->o.s.idle_s * 1e6)) {
		tail_note(t, "%s: no message for %g s; exiting", t->url, t->o.s.idle_s);
		tail_finish(t, TAIL_OK);
	}
}

static int tail_start(struct tail *t)
{
	struct fb_source_opts so;
	char err[512];
	struct timeval tv = { 0, TAIL_TICK_MS * 1000 };

	memset(&so, 0, sizeof(so));
	so.kind = FB_SOURCE_WEBSOCKET;
	so.base = t->base;
	so.since = t->o.since;
	so.since_zero = t->o.have_since;
	so.host = t->o.host;
	so.port = (uint16_t)t->o.port;
	so.auth = &t->auth;
	so.query = t->filters.len ? (const char *)t->filters.data + 1 : NULL;
	so.reconnect_min_ms = TAIL_BACKOFF_MIN_MS;
	so.reconnect_max_ms = TAIL_BACKOFF_MAX_MS;
	so.direct = 1;
	so.on_event = tail_on_event;
	so.on_drained = tail_flush;
	so.on_state = tail_on_state;
	so.arg = t;
	t->tick = event_new(t->base, -1, EV_PERSIST, tail_tick, t);
	if (!t->tick || event_add(t->tick, &tv) < 0) {
		fprintf(stderr, "fabricbus tail: out of memory\n");
		return -1;
	}
	t->start_us = fb_time_us();
	STORE(t->last_msg_us, t->start_us);
	if (!(t->src = fb_source_start(&so, err, sizeof(err)))) {
		fprintf(stderr, "fabricbus tail: %s: %s\n", t->url, err);
		return -1;
	}
	return 0;
}

static void tail_print_stats(const struct tail *t, const struct fb_wsc_stats *st)
{
	double secs = t->first_msg_us && t->last_event_us > t->first_msg_us
		      ? (double)(t->last_event_us - t->first_msg_us) / 1e6 : 0.0;
	char last[24] = "none";
	uint64_t n = LOAD(t->events);

	if (LOAD(t->have_last))
		snprintf(last, sizeof(last), "%" PRIu64, LOAD(t->last_id));
	fprintf(stderr, "received %" PRIu64 " events in %.6g s (%.0f events/s), last EventId %s, "
		"reconnects %" PRIu64, n, secs, secs > 0 ? (double)n / secs : 0.0,
		last, st->reconnects);
	if (t->notices)
		fprintf(stderr, ", missed notices %" PRIu64, t->notices);
	if (st->duplicates)
		fprintf(stderr, ", duplicates dropped %" PRIu64, st->duplicates);
	fputc('\n', stderr);
}

static int tail_setup(struct tail *t)
{
	const struct fb_tail_opts *o = &t->o;
	int v6 = strchr(o->host, ':') != NULL;

	snprintf(t->url, sizeof(t->url), v6 ? "%s://[%s]:%d/ws/events" : "%s://%s:%d/ws/events",
		 fb_http_auth_scheme(&t->auth, 1), o->host, o->port);
	STORE(t->last_id, o->since);
	STORE(t->have_last, o->have_since);
	return fb_tail_opts_filters(o, &t->filters);
}

static void tail_run(struct tail *t)
{
	struct sigaction sa, old_int, old_term;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tail_on_signal; /* the tick sees it */
	sigemptyset(&sa.sa_mask);
	tail_stop_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (tail_start(t) == 0)
		event_base_dispatch(t->base);
	else
		tail_finish(t, TAIL_RUNTIME);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
}

int fb_cli_tail(int argc, char **argv)
{
	struct tail t;
	struct fb_wsc_stats st;
	int r;

	memset(&t, 0, sizeof(t));
	memset(&st, 0, sizeof(st));
	r = fb_tail_opts_parse(argc, argv, &t.o);
	if (r)
		return r < 0 ? TAIL_OK : r;
	char aerr[600];
	if (fb_http_auth_init(&t.auth, t.o.token_file, t.o.tls_ca, aerr, sizeof(aerr))) {
		fprintf(stderr, "fabricbus tail: %s\n", aerr);
		return TAIL_USAGE;
	}
	/* Our own notes say what happens; the client's log only its errors. */
	fb_log_init("fabricbus tail", 0, FB_LOG_ERR);
	/* The source's thread wakes our loop: before the base is made. */
	if (tail_setup(&t) < 0 || evthread_use_pthreads() < 0 || !(t.base = event_base_new())) {
		fb_http_auth_free(&t.auth);
		fprintf(stderr, "fabricbus tail: out of memory\n");
		fb_buf_free(&t.filters);
		return TAIL_RUNTIME;
	}
	setvbuf(stdout, tail_stdout_buf, _IOFBF, sizeof(tail_stdout_buf));
	tail_run(&t);
	if (t.src)
		fb_source_ws_stats(t.src, &st);
	tail_finish(&t, TAIL_OK); /* a no-op if decided; tail_on_event ignores the rest */
	fb_source_stop(t.src);    /* joins the client's thread: stdout is ours again */
	if (fflush(stdout) == EOF && errno != EPIPE && t.status == TAIL_OK) {
		fprintf(stderr, "fabricbus tail: writing stdout: %s\n", strerror(errno));
		t.status = TAIL_RUNTIME;
	}
	if (t.o.s.stats)
		tail_print_stats(&t, &st);
	if (t.tick)
		event_free(t.tick);
	event_base_free(t.base);
	fb_buf_free(&t.filters);
	fb_http_auth_free(&t.auth);
	return t.status;
}

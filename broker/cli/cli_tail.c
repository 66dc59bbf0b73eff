/* cli_tail.c - `fabricbus tail`: follow ws://<HttpListen>/ws/events and
 * print every Redfish Event as one JSON line on stdout.
 *
 * One thread: our own lws client context, driven by lws_service() in a loop
 * that also owns the deadlines (--timeout, --idle-exit, reconnect back-off).
 * A 50 ms lws_sul tick keeps lws_service() returning so those are checked
 * even when the stream is quiet (lws ignores lws_service's timeout).
 *
 * Hot path (this is the benchmark subscriber): a message that arrives whole
 * is written straight from lws's rx buffer with fwrite_unlocked into a 1 MiB
 * stdout buffer, flushed once per service pass, so a pass that read 256 KiB
 * of frames costs one write(2). Per message we only memchr for '\n', memmem
 * for the missed-notice MessageId and scan the envelope's "Id"
 * (fb_event_scan_id, which fb_ws_client uses too, allocation-free); jansson
 * runs only for notices and with --validate.
 *
 * Nothing lost, nothing duplicated: with --reconnect, every reconnect asks
 * for since=<last EventId printed> (or the notice's ResumeSince), and an Id
 * at or below the last one printed is dropped and counted.
 *
 * Options, usage and help text live in cli_tail_opts.c.
 */
#include "cli.h"
#include "cli_tail.h"
#include "fb_event_scan.h"
#include "fb_http_auth.h"
#include "fb_time.h"
#include "fb_ws_client.h"

#include <libwebsockets.h>
#include <jansson.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAIL_MAX_MSG (1u << 20)        /* larger messages end the tail */
#define TAIL_RX_BUF (256u * 1024)      /* lws rx buffer and socket read size */
#define TAIL_TICK_US 50000
#define TAIL_BACKOFF_MIN_US 100000
#define TAIL_BACKOFF_MAX_US 2000000
#define TAIL_MISSED_ID "Fabricbus.1.0.SubscriberEventsMissed"

struct tail {
	struct fb_tail_opts o;
	struct fb_http_auth auth; /* --token-file, --tls-ca */
	char url[320];       /* ws://host:port/ws/events, for messages */
	char hosthdr[300];
	struct fb_buf filters; /* "&prefix=..&severity=.." encoded, NUL-terminated */
	struct fb_buf path;
	struct fb_buf msg;     /* reassembly of fragmented messages */
	int assembling;
	struct lws_context *ctx;
	lws_sorted_usec_list_t tick;
	int attempt_live;      /* a connection is being made or is open */
	int established;
	int resume_pending;    /* closed by us after a missed notice */
	char close_why[160];
	int64_t next_connect_us, backoff_us;
	uint64_t events, notices, dups;
	uint64_t connects, reconnects; /* established; re-established */
	uint64_t last_id;
	int have_last;
	int got_msg;           /* messages arrived in this service pass */
	int got_event;
	int64_t start_us, first_msg_us, last_msg_us, last_event_us;
	int done, status;
};

/* The one piece of global state here: signal handlers can reach nothing else. */
static volatile sig_atomic_t tail_stop_signal;
/* stdout keeps pointing at its buffer after we return, so it must be static. */
static char tail_stdout_buf[1u << 20];

static void tail_on_signal(int sig) { tail_stop_signal = sig; }

static void tail_note(const struct tail *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tail_note(const struct tail *t, const char *fmt, ...)
{
	va_list ap;

	if (t->o.quiet)
		return;
	va_start(ap, fmt);
	fputs("fabricbus tail: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void tail_finish(struct tail *t, int status)
{
	if (!t->done) {
		t->done = 1;
		t->status = status;
	}
}

/* ---- message handling ------------------------------------------------- */

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

static int json_u64(json_t *v, uint64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return 1;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *e;

		errno = 0;
		*out = strtoull(s, &e, 10);
		return *s >= '0' && *s <= '9' && !*e && !errno;
	}
	return 0;
}

/* Rare path: confirm with jansson that this is the missed notice and read
 * Oem.Fabricbus from the record (or the envelope). 1 = notice handled,
 * 0 = not a notice after all, -1 = close the connection. */
static int tail_notice(struct tail *t, const char *p, size_t len)
{
	json_t *root = json_loadb(p, len, 0, NULL), *rec, *fb;
	uint64_t missed = 0, resume = 0;
	int have_resume = 0;
	const char *mid;

	rec = json_array_get(json_object_get(root, "Events"), 0);
	mid = json_string_value(json_object_get(rec ? rec : root, "MessageId"));
	if (!mid || strcmp(mid, TAIL_MISSED_ID)) {
		json_decref(root);
		return 0;
	}
	fb = json_object_get(json_object_get(rec, "Oem"), "Fabricbus");
	if (!fb)
		fb = json_object_get(json_object_get(root, "Oem"), "Fabricbus");
	json_u64(json_object_get(fb, "Missed"), &missed);
	have_resume = json_u64(json_object_get(fb, "ResumeSince"), &resume);
	json_decref(root);

	t->notices++;
	tail_emit(t->o.events_only ? stderr : stdout, p, len);
	if (have_resume && (!t->have_last || resume > t->last_id)) {
		t->last_id = resume;
		t->have_last = 1;
	}
	if (!t->o.reconnect) {
		fflush(stdout);
		if (t->have_last)
			fprintf(stderr, "fabricbus tail: %s: missed %" PRIu64 " events (this subscriber fell "
				"behind); resume with --since %" PRIu64 " or use --reconnect\n",
				t->url, missed, t->last_id);
		else
			fprintf(stderr, "fabricbus tail: %s: missed %" PRIu64 " events (this subscriber fell "
				"behind) and the notice has no ResumeSince\n", t->url, missed);
		tail_finish(t, TAIL_MISSED);
		return -1;
	}
	tail_note(t, "%s: missed %" PRIu64 " events; reconnecting with since=%" PRIu64,
		  t->url, missed, t->last_id);
	t->resume_pending = 1;
	return -1;
}

/* A whole message. Returns -1 to have lws close the connection. */
static int tail_message(struct tail *t, const char *p, size_t len)
{
	uint64_t id;
	int have_id, r;

	if (!t->first_msg_us)
		t->first_msg_us = fb_time_us(); /* once: --stats times from the first message */
	t->got_msg = 1;
	if (t->done)
		return -1;
	if (!len)
		return 0;
	if (memmem(p, len, TAIL_MISSED_ID, sizeof(TAIL_MISSED_ID) - 1)) {
		r = tail_notice(t, p, len);
		if (r)
			return r < 0 ? -1 : 0;
	}
	if (t->o.validate) {
		json_error_t je;
		json_t *root = json_loadb(p, len, 0, &je);
		int ok = json_is_object(root);

		if (!ok) {
			if (root)
				snprintf(je.text, sizeof(je.text), "valid JSON but not an object");
			fprintf(stderr, "fabricbus tail: %s: message after EventId %" PRIu64
				" is not a JSON object: %s\n", t->url, t->last_id, je.text);
			tail_finish(t, TAIL_RUNTIME);
		}
		json_decref(root);
		if (!ok)
			return -1;
	}
	have_id = fb_event_scan_id(p, len, &id);
	if (have_id && t->have_last && id <= t->last_id) {
		if (!t->dups++)
			tail_note(t, "%s: dropping EventId %" PRIu64 ", already printed up to %" PRIu64,
				  t->url, id, t->last_id);
		return 0;
	}
	tail_emit(stdout, p, len);
	if (have_id) {
		t->last_id = id;
		t->have_last = 1;
	}
	t->got_event = 1;
	if (++t->events == t->o.count) {
		tail_finish(t, TAIL_OK);
		return -1;
	}
	return 0;
}

/* A frame or part of one. Whole messages skip the reassembly buffer. */
static int tail_rx(struct tail *t, struct lws *wsi, const char *in, size_t len)
{
	int final = lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi);
	int r;

	if (!t->assembling && final)
		return tail_message(t, in, len);
	if (t->msg.len + len > TAIL_MAX_MSG) {
		fprintf(stderr, "fabricbus tail: %s: message after EventId %" PRIu64 " exceeds %u bytes; "
			"refusing it\n", t->url, t->last_id, TAIL_MAX_MSG);
		tail_finish(t, TAIL_RUNTIME);
		return -1;
	}
	if (fb_buf_put(&t->msg, in, len) < 0) {
		fprintf(stderr, "fabricbus tail: out of memory reassembling a message\n");
		tail_finish(t, TAIL_RUNTIME);
		return -1;
	}
	t->assembling = 1;
	if (!final)
		return 0;
	r = tail_message(t, (const char *)t->msg.data, t->msg.len);
	fb_buf_reset(&t->msg);
	t->assembling = 0;
	return r;
}

/* ---- connection life cycle -------------------------------------------- */

static void tail_schedule_reconnect(struct tail *t, const char *what, const char *why)
{
	t->next_connect_us = fb_time_us() + t->backoff_us;
	if (what)
		tail_note(t, "%s: %s (%s); reconnecting in %" PRId64 " ms", t->url, what, why,
			  t->backoff_us / 1000);
	t->backoff_us *= 2;
	if (t->backoff_us > TAIL_BACKOFF_MAX_US)
		t->backoff_us = TAIL_BACKOFF_MAX_US;
}

/* The connection attempt failed or the open connection ended. */
static void tail_lost(struct tail *t, const char *why)
{
	int was_open = t->established;
	const char *what = was_open ? "connection lost" : "cannot connect";

	if (!t->attempt_live)
		return;
	t->attempt_live = 0;
	t->established = 0;
	t->assembling = 0;
	fb_buf_reset(&t->msg);
	if (t->done)
		return;
	if (t->resume_pending) {
		t->resume_pending = 0;
		tail_schedule_reconnect(t, NULL, NULL);
		return;
	}
	if (t->o.reconnect) {
		tail_schedule_reconnect(t, what, why);
		return;
	}
	fprintf(stderr, "fabricbus tail: %s: %s: %s%s\n", t->url, what, why,
		was_open ? "" : "; is fabricbusd running with HttpListen at this address?");
	tail_finish(t, TAIL_RUNTIME);
}

static int tail_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			 size_t len)
{
	struct tail *t = lws_context_user(lws_get_context(wsi));

	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		t->established = 1;
		if (t->connects++) {
			t->reconnects++;
			tail_note(t, "%s: reconnected", t->url);
		}
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		return tail_rx(t, wsi, in, len);
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		fb_wsc_close_text(in, len, t->close_why, sizeof(t->close_why));
		break;
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: { /* in: char ** cursor, len: room */
		if (!t->auth.token[0])
			break;
		char v[FB_HTTP_TOKEN_MAX + 8];
		int n = snprintf(v, sizeof(v), "Bearer %s", t->auth.token);
		int rc = lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION,
						      (const unsigned char *)v, n,
						      (unsigned char **)in, *(unsigned char **)in + len);
		memset(v, 0, sizeof(v));
		return rc ? -1 : 0;
	}
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: {
		int status = wsi ? (int)lws_http_client_http_response(wsi) : 0;
		snprintf(t->close_why, sizeof(t->close_why), "%.*s", in ? (int)(len > 120 ? 120 : len) : 0,
			 in ? (const char *)in : "");
		if (status > 0 && status != 101)
			snprintf(t->close_why + strlen(t->close_why),
				 sizeof(t->close_why) - strlen(t->close_why), " (HTTP %d%s)", status,
				 status == 401 ? ": give --token-file" : "");
		tail_lost(t, t->close_why[0] ? t->close_why : "connection failed");
		break;
	}
	case LWS_CALLBACK_CLIENT_CLOSED:
		tail_lost(t, t->close_why[0] ? t->close_why : "connection closed");
		break;
	default:
		break;
	}
	return 0;
}

static void tail_connect(struct tail *t)
{
	struct lws_client_connect_info ci;

	fb_buf_reset(&t->path);
	if (fb_buf_puts(&t->path, "/ws/events") < 0 ||
	    (t->have_last && fb_buf_printf(&t->path, "?since=%" PRIu64, t->last_id) < 0) ||
	    (t->filters.len && fb_buf_printf(&t->path, "%c%s", t->have_last ? '&' : '?',
						 (const char *)t->filters.data + 1) < 0) ||
	    fb_buf_put_u8(&t->path, 0) < 0) {
		fprintf(stderr, "fabricbus tail: out of memory\n");
		tail_finish(t, TAIL_RUNTIME);
		return;
	}
	memset(&ci, 0, sizeof(ci));
	ci.context = t->ctx;
	ci.address = t->o.host;
	ci.port = t->o.port;
	ci.path = (const char *)t->path.data;
	ci.host = t->hosthdr;
	ci.origin = t->hosthdr;
	ci.ietf_version_or_minus_one = -1;
	if (t->auth.tls) {
		ci.ssl_connection = LCCSCF_USE_SSL; /* chain and host name checked */
		ci.alpn = "http/1.1";
	}
	t->next_connect_us = 0;
	t->close_why[0] = '\0';
	t->attempt_live = 1;
	if (!lws_client_connect_via_info(&ci))
		tail_lost(t, "could not start the connection"); /* no-op if lws reported it */
}

static void tail_tick(lws_sorted_usec_list_t *sul)
{
	struct tail *t = lws_container_of(sul, struct tail, tick);

	lws_sul_schedule(t->ctx, 0, &t->tick, tail_tick, TAIL_TICK_US);
}

static void tail_lws_log(int level, const char *line)
{
	(void)level;
	fprintf(stderr, "fabricbus tail: lws: %s", line);
}

static const struct lws_protocols tail_protocols[] = {
	{ "fabricbus-tail", tail_callback, 0, TAIL_RX_BUF, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static int tail_create_context(struct tail *t)
{
	struct lws_context_creation_info info;

	lws_set_log_level(LLL_ERR, tail_lws_log);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = tail_protocols;
	info.gid = -1;
	info.uid = -1;
	info.user = t;
	info.pt_serv_buf_size = TAIL_RX_BUF;
	info.fd_limit_per_thread = 16; /* else lws sizes its fd table from ulimit -n */
	info.options = LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS;
	if (t->auth.tls) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.client_ssl_ca_filepath = t->auth.tls_ca;
	}
	t->ctx = lws_create_context(&info);
	if (!t->ctx) {
		fprintf(stderr, "fabricbus tail: cannot create the libwebsockets context\n");
		return -1;
	}
	lws_sul_schedule(t->ctx, 0, &t->tick, tail_tick, TAIL_TICK_US);
	return 0;
}

/* ---- the loop ----------------------------------------------------------- */

/* A pipe whose reader exited shows POLLERR on our end; without this check a
 * quiet stream would only notice at the next event (`tail | head -1`). */
static int stdout_reader_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

static void tail_check_deadlines(struct tail *t, int64_t now, int quiet_pass)
{
	if (tail_stop_signal || (quiet_pass && stdout_reader_gone())) {
		tail_finish(t, TAIL_OK);
		return;
	}
	if (t->o.timeout_s > 0 && now - t->start_us >= (int64_t)(t->o.timeout_s * 1e6)) {
		if (t->o.count) {
			fprintf(stderr, "fabricbus tail: %s: timeout after %g s: received %" PRIu64
				" of %" PRIu64 " events\n", t->url, t->o.timeout_s, t->events, t->o.count);
			tail_finish(t, TAIL_RUNTIME);
		} else {
			tail_finish(t, TAIL_OK);
		}
		return;
	}
	if (t->o.idle_s > 0 && now - t->last_msg_us >= (int64_t)(t->o.idle_s * 1e6)) {
		tail_note(t, "%s: no message for %g s; exiting", t->url, t->o.idle_s);
		tail_finish(t, TAIL_OK);
		return;
	}
	if (!t->attempt_live && t->next_connect_us && now >= t->next_connect_us)
		tail_connect(t);
}

static void tail_run(struct tail *t)
{
	t->start_us = t->last_msg_us = fb_time_us();
	t->backoff_us = TAIL_BACKOFF_MIN_US;
	tail_connect(t);
	while (!t->done) {
		int64_t now;
		int quiet_pass;

		if (lws_service(t->ctx, 0) < 0 && !tail_stop_signal) {
			fprintf(stderr, "fabricbus tail: %s: libwebsockets service failed\n", t->url);
			tail_finish(t, TAIL_RUNTIME);
			break;
		}
		now = fb_time_us();
		quiet_pass = !t->got_msg;
		if (t->got_msg) {
			t->got_msg = 0;
			t->last_msg_us = now;
			t->backoff_us = TAIL_BACKOFF_MIN_US;
		}
		if (t->got_event) {
			t->got_event = 0;
			t->last_event_us = now;
		}
		/* One write per pass: prompt when quiet, batched when busy. */
		if (fflush(stdout) == EOF) {
			int e = errno;

			if (e != EPIPE) /* a reader that went away is not an error */
				fprintf(stderr, "fabricbus tail: writing stdout: %s\n", strerror(e));
			tail_finish(t, e == EPIPE ? TAIL_OK : TAIL_RUNTIME);
		}
		if (!t->done)
			tail_check_deadlines(t, now, quiet_pass);
	}
}

static void tail_print_stats(const struct tail *t)
{
	double secs = t->first_msg_us && t->last_event_us > t->first_msg_us
		      ? (double)(t->last_event_us - t->first_msg_us) / 1e6 : 0.0;
	char last[24] = "none";

	if (t->have_last)
		snprintf(last, sizeof(last), "%" PRIu64, t->last_id);
	fprintf(stderr, "received %" PRIu64 " events in %.6g s (%.0f events/s), last EventId %s, "
		"reconnects %" PRIu64, t->events, secs, secs > 0 ? (double)t->events / secs : 0.0,
		last, t->reconnects);
	if (t->notices)
		fprintf(stderr, ", missed notices %" PRIu64, t->notices);
	if (t->dups)
		fprintf(stderr, ", duplicates dropped %" PRIu64, t->dups);
	fputc('\n', stderr);
}

static int tail_setup(struct tail *t)
{
	const struct fb_tail_opts *o = &t->o;
	int v6 = strchr(o->host, ':') != NULL;

	snprintf(t->hosthdr, sizeof(t->hosthdr), v6 ? "[%s]:%d" : "%s:%d", o->host, o->port);
	snprintf(t->url, sizeof(t->url), "%s://%s/ws/events", fb_http_auth_scheme(&t->auth, 1),
		 t->hosthdr);
	t->last_id = o->since;
	t->have_last = o->have_since;
	return fb_tail_opts_filters(o, &t->filters);
}

int fb_cli_tail(int argc, char **argv)
{
	struct tail t;
	struct sigaction sa, old_int, old_term;
	int r;

	memset(&t, 0, sizeof(t));
	r = fb_tail_opts_parse(argc, argv, &t.o);
	if (r)
		return r < 0 ? TAIL_OK : r;
	char aerr[600];
	if (fb_http_auth_init(&t.auth, t.o.token_file, t.o.tls_ca, aerr, sizeof(aerr))) {
		fprintf(stderr, "fabricbus tail: %s\n", aerr);
		return TAIL_USAGE;
	}
	if (tail_setup(&t) < 0) {
		fb_http_auth_free(&t.auth);
		fprintf(stderr, "fabricbus tail: out of memory\n");
		fb_buf_free(&t.filters);
		return TAIL_RUNTIME;
	}
	setvbuf(stdout, tail_stdout_buf, _IOFBF, sizeof(tail_stdout_buf));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tail_on_signal; /* no SA_RESTART: poll() returns EINTR */
	sigemptyset(&sa.sa_mask);
	tail_stop_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	if (tail_create_context(&t) == 0) {
		tail_run(&t);
		t.done = 1; /* callbacks during destroy must not reconnect */
		lws_sul_cancel(&t.tick);
		lws_context_destroy(t.ctx);
	} else {
		t.status = TAIL_RUNTIME;
	}
	if (fflush(stdout) == EOF && errno != EPIPE && t.status == TAIL_OK) {
		fprintf(stderr, "fabricbus tail: writing stdout: %s\n", strerror(errno));
		t.status = TAIL_RUNTIME;
	}
	if (t.o.stats)
		tail_print_stats(&t);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	fb_buf_free(&t.filters);
	fb_buf_free(&t.path);
	fb_buf_free(&t.msg);
	fb_http_auth_free(&t.auth);
	return t.status;
}

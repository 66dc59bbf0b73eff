/* cli_consume.c - `fabricbus consume`: a Kafka consumer-group member that
 * prints each fabricbus event (one Redfish Event JSON document per Kafka
 * message) as one JSON line on stdout.
 *
 * The consumer is proto/client/fb_kafka_consumer.c, the one the Slurm and
 * PMIx adapters use, so this is also their test harness. Its at-least-once
 * contract carries through: offsets are committed only after the lines of
 * the events they cover were flushed to stdout (before_commit), so a member
 * killed mid-way leaves its unflushed/uncommitted events to the next owner of
 * the partition, which prints them (again, possibly).
 *
 * Output goes into a 1 MiB stdout buffer and is flushed once per poll batch
 * (up to 1024 messages), right before that batch's offsets are committed.
 */
#include "cli.h"
#include "cli_opts.h"
#include "fb_err.h"
#include "fb_kafka_consumer.h"
#include "fb_log.h"
#include "fb_time.h"

#include <jansson.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONSUME_POLL_MS 100
#define CONSUME_MAX_TOPICS 64
#define CONSUME_MAX_PROPS 64

enum { CONSUME_OK = 0, CONSUME_RUNTIME = 1, CONSUME_USAGE = FB_CLI_USAGE };

struct consume_opts {
	const char *brokers, *group;         /* borrowed from argv */
	char *topics_buf;                    /* owned: split copy of --topics */
	const char *topics[CONSUME_MAX_TOPICS];
	size_t n_topics;
	struct fb_kc_prop props[CONSUME_MAX_PROPS]; /* name owned (strndup), value in argv */
	size_t n_props;
	int from_beginning, with_meta;
	struct fb_cli_stream_opts s;         /* --count --timeout --idle-exit --quiet --stats */
};

struct consume {
	struct consume_opts o;
	uint64_t events, tombstones, not_json;
	int write_errno;                     /* first stdout error, 0 if none */
	int64_t start_us, first_us, last_us; /* first/last event printed */
};

/* Signal handlers can reach nothing else. */
static volatile sig_atomic_t consume_stop_signal;
/* stdout keeps pointing at its buffer after we return, so it must be static. */
static char consume_stdout_buf[1u << 20];

static void consume_on_signal(int sig) { consume_stop_signal = sig; }

/* ---- output ---------------------------------------------------------------- */

/* The value as one line: newlines (JSON whitespace) become spaces. */
static void put_oneline(FILE *f, const char *p, size_t len)
{
	const char *nl;

	while ((nl = memchr(p, '\n', len))) {
		fwrite_unlocked(p, 1, (size_t)(nl - p), f);
		putc_unlocked(' ', f);
		len -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
	fwrite_unlocked(p, 1, len, f);
}

/* Bytes as a JSON string literal. Control characters, '"' and '\\' are
 * escaped; other bytes pass through (keys are Redfish paths, ASCII). */
static void put_json_str(FILE *f, const void *v, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = v;

	putc_unlocked('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];

		if (c == '"' || c == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(c, f);
		} else if (c < 0x20) {
			fputs("\\u00", f);
			putc_unlocked(hex[c >> 4], f);
			putc_unlocked(hex[c & 15], f);
		} else {
			putc_unlocked(c, f);
		}
	}
	putc_unlocked('"', f);
}

static void put_meta(struct consume *c, const struct fb_kc_msg *m)
{
	FILE *f = stdout;

	fputs("{\"topic\":", f);
	put_json_str(f, m->topic, strlen(m->topic));
	fprintf(f, ",\"partition\":%" PRId32 ",\"offset\":%" PRId64 ",\"key\":", m->partition,
		m->offset);
	if (m->key)
		put_json_str(f, m->key, m->key_len);
	else
		fputs("null", f);
	fprintf(f, ",\"event_id\":%" PRIu64 ",\"broker\":", m->event_id);
	if (m->broker[0])
		put_json_str(f, m->broker, strlen(m->broker));
	else
		fputs("null", f);
	fputs(",\"event\":", f);
	if (!m->value_len) {
		fputs("null", f);
	} else {
		json_t *j = json_loadb(m->value, m->value_len, JSON_DECODE_ANY, NULL);

		/* Not JSON (not from fabricbusd): keep the output valid JSON. */
		if (j)
			put_oneline(f, m->value, m->value_len);
		else
			put_json_str(f, m->value, m->value_len);
		if (!j && !c->not_json++ && !c->o.s.quiet)
			fprintf(stderr, "fabricbus consume: %s[%" PRId32 "] offset %" PRId64 ": value "
				"is not JSON; printing it as a JSON string (noted once)\n", m->topic,
				m->partition, m->offset);
		json_decref(j);
	}
	putc_unlocked('}', f);
}

static int consume_on_msg(const struct fb_kc_msg *m, void *arg)
{
	struct consume *c = arg;

	if (ferror(stdout))
		return -EIO; /* not printed: leave it uncommitted */
	if (!m->value_len && !c->o.with_meta) {
		if (!c->tombstones++ && !c->o.s.quiet)
			fprintf(stderr, "fabricbus consume: %s[%" PRId32 "] offset %" PRId64 ": empty "
				"message (not an event); skipping such messages\n", m->topic,
				m->partition, m->offset);
		return 0;
	}
	if (c->o.with_meta)
		put_meta(c, m);
	else
		put_oneline(stdout, m->value, m->value_len);
	putc_unlocked('\n', stdout);
	c->last_us = fb_time_us();
	if (!c->first_us)
		c->first_us = c->last_us;
	if (++c->events == c->o.s.count)
		return FB_KC_STOP;
	return 0;
}

/* Runs before every commit: what is committed must have been written. */
static int consume_flush(void *arg)
{
	struct consume *c = arg;

	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	if (!c->write_errno)
		c->write_errno = errno ? errno : EIO;
	return -1;
}

/* ---- options --------------------------------------------------------------- */

static void consume_usage(FILE *f)
{
	fputs("usage: fabricbus consume --kafka BROKERS --group G --topics T[,T..]\n"
	      "                         [--from-beginning] [--count N] [--timeout SEC]\n"
	      "                         [--idle-exit SEC] [--set PROP=VALUE]... [--with-meta]\n"
	      "                         [--quiet] [--stats]\n"
	      "       fabricbus consume --help\n", f);
}

static void consume_help(void)
{
	fputs("NAME\n"
	      "    fabricbus consume - read fabricbus events from Kafka as a consumer-group member\n\n"
	      "SYNOPSIS\n"
	      "    fabricbus consume --kafka BROKERS --group G --topics T[,T..]\n"
	      "                      [--from-beginning] [--count N] [--timeout SEC]\n"
	      "                      [--idle-exit SEC] [--set PROP=VALUE]... [--with-meta]\n"
	      "                      [--quiet] [--stats]\n", stdout);
	fputs("\nDESCRIPTION\n"
	      "    Joins consumer group G on the Kafka cluster BROKERS, subscribes to the topics\n"
	      "    and prints each message's value (one Redfish Event JSON document, as\n"
	      "    fabricbusd's Kafka sink writes it) as one line on stdout. Members of the same\n"
	      "    group share the topics' partitions; when one leaves or dies, the others take\n"
	      "    its partitions over (after session.timeout.ms, default 10 s, if it died).\n\n"
	      "    Delivery is at least once: offsets are committed only after the lines of the\n"
	      "    events they cover were flushed to stdout (once per batch of up to 1024). An\n"
	      "    event printed by a member that is then killed may be printed again by the\n"
	      "    member that takes its partition over. Assignments and revocations are\n"
	      "    logged on stderr.\n\n"
	      "OPTIONS\n"
	      "    --kafka BROKERS    bootstrap servers, HOST:PORT[,HOST:PORT..] (required)\n"
	      "    --group G          consumer group id (required)\n"
	      "    --topics T[,T..]   topics to subscribe to (required); fabricbusd's defaults\n"
	      "                       are fabric.events, fabric.netdev, fabric.resource and\n"
	      "                       fabric.other. A name starting with ^ is a regex\n"
	      "    --from-beginning   where the group has no committed offset yet, start at the\n"
	      "                       oldest message (default: only new messages). Committed\n"
	      "                       offsets always win\n"
	      "    --count N          exit 0 after printing N events (default: unbounded)\n"
	      "    --timeout SEC      overall deadline; exit 1 when it passes (default: none)\n"
	      "    --idle-exit SEC    exit 0 after SEC seconds without a message, counted from\n"
	      "                       the last message or the last rebalance (default: none)\n"
	      "    --set PROP=VALUE   a librdkafka property, e.g. security.protocol=SASL_SSL or\n"
	      "                       session.timeout.ms=6000; repeatable, applied after ours.\n"
	      "                       enable.auto.commit and enable.auto.offset.store are refused\n"
	      "    --with-meta        print {\"topic\":..,\"partition\":..,\"offset\":..,\"key\":..,\n"
	      "                       \"event_id\":..,\"broker\":..,\"event\":<the event>} instead;\n"
	      "                       key and broker are null and event_id 0 when absent\n"
	      "    --quiet            no notes on stderr: only warnings and errors\n"
	      "    --stats            at exit, print to stderr: received N events in T s\n"
	      "                       (R events/s), assignments A, revocations V, commit\n"
	      "                       failures F, errors E (T runs from the first event to the last)\n"
	      "    -h, --help         this text\n\n"
	      "DEFAULTS\n"
	      "    client.id=fabricbus-consumer, auto.offset.reset=latest (earliest with\n"
	      "    --from-beginning), session.timeout.ms=10000, heartbeat.interval.ms=3000,\n"
	      "    enable.auto.commit=false, enable.auto.offset.store=false\n\n"
	      "EXAMPLES\n"
	      "    fabricbus consume --kafka kafka1:9092 --group ops --topics fabric.events\n"
	      "    fabricbus consume --kafka 127.0.0.1:9092 --group audit --from-beginning \\\n"
	      "        --topics fabric.events,fabric.netdev --idle-exit 5 --stats > events.jsonl\n"
	      "    fabricbus consume --kafka k:9093 --group g --topics fabric.events --with-meta \\\n"
	      "        --set security.protocol=SSL --set ssl.ca.location=/etc/pki/ca.pem \\\n"
	      "        | jq -r '\"\\(.partition)/\\(.offset) \\(.event.Events[0].MessageId)\"'\n"
	      "    fabricbus consume --kafka 127.0.0.1:9092 --group t --from-beginning \\\n"
	      "        --topics fabric.events --count 1000 --timeout 30\n\n"
	      "EXIT STATUS\n"
	      "    0  --count reached, --idle-exit, SIGINT/SIGTERM (offsets committed, group left)\n"
	      "       or stdout closed\n"
	      "    1  --timeout passed, a fatal Kafka error (e.g. not authorized), or a stdout\n"
	      "       write error\n"
	      "    2  usage error, including a librdkafka property it does not accept\n", stdout);
}

/* Split the --topics copy in place; empty names are refused. */
static int split_topics(struct consume_opts *o)
{
	char *s = o->topics_buf, *save = NULL, *t;

	if (!*s || s[strlen(s) - 1] == ',' || *s == ',' || strstr(s, ",,"))
		return -1;
	for (t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->n_topics == CONSUME_MAX_TOPICS)
			return -1;
		o->topics[o->n_topics++] = t;
	}
	return o->n_topics ? 0 : -1;
}

static int add_prop(struct consume_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *name;

	if (!eq || eq == arg || o->n_props == CONSUME_MAX_PROPS)
		return -1;
	if (!(name = strndup(arg, (size_t)(eq - arg))))
		return -1;
	o->props[o->n_props].name = name;
	o->props[o->n_props++].value = eq + 1;
	return 0;
}

static void consume_free_opts(struct consume_opts *o)
{
	for (size_t i = 0; i < o->n_props; i++)
		free((char *)o->props[i].name);
	free(o->topics_buf);
}

static const struct fb_cli_cmd consume_cmd = { "consume", FB_CLI_CONSUME, consume_usage,
						 consume_help };

static int consume_opt(void *arg, int code, const char *v)
{
	struct consume_opts *o = arg;
	const struct fb_cli_cmd *c = &consume_cmd;

	switch (code) {
	case FB_OPT_KAFKA:
		return fb_cli_nonempty(c, v, "--kafka wants HOST:PORT[,HOST:PORT..]", &o->brokers);
	case FB_OPT_GROUP:
		return fb_cli_nonempty(c, v, "--group wants a consumer group id", &o->group);
	case FB_OPT_TOPICS:
		free(o->topics_buf);
		o->n_topics = 0;
		if (!(o->topics_buf = strdup(v)) || split_topics(o))
			return fb_cli_bad(c, "--topics wants topic names separated by commas "
					  "(at most 64), not '%s'", v);
		return 0;
	case FB_OPT_BEGIN: o->from_beginning = 1; return 0;
	case FB_OPT_SET:
		if (add_prop(o, v))
			return fb_cli_bad(c, "--set wants PROP=VALUE (at most 64), not '%s'", v);
		return 0;
	default: o->with_meta = 1; return 0; /* FB_OPT_META */
	}
}

static int consume_parse(int argc, char **argv, struct consume_opts *o)
{
	int r = fb_cli_parse(&consume_cmd, argc, argv, consume_opt, o, &o->s);

	if (r)
		return r;
	if (!o->brokers)
		return fb_cli_bad(&consume_cmd, "--kafka BROKERS is required%s", "");
	if (!o->group)
		return fb_cli_bad(&consume_cmd, "--group G is required%s", "");
	if (!o->n_topics)
		return fb_cli_bad(&consume_cmd, "--topics T[,T..] is required%s", "");
	return 0;
}

/* ---- the loop ---------------------------------------------------------------- */

/* Returns the exit status. */
static int consume_run(struct consume *c, struct fb_kc *kc)
{
	const struct consume_opts *o = &c->o;
	struct fb_kc_counters k;
	uint64_t rebalances = 0;
	int64_t idle_from = c->start_us, now;
	int r;

	for (;;) {
		r = fb_kc_poll(kc, CONSUME_POLL_MS, consume_on_msg, c);
		if (r == FB_KC_EFATAL)
			return CONSUME_RUNTIME; /* logged by the consumer */
		if (r < 0 || c->write_errno) {
			/* stdout failed; its events stay uncommitted */
			int e = c->write_errno ? c->write_errno : EIO;

			if (e == EPIPE)
				return CONSUME_OK; /* the reader went away (| head) */
			fprintf(stderr, "fabricbus consume: writing stdout: %s\n", strerror(e));
			return CONSUME_RUNTIME;
		}
		now = fb_time_us();
		if (r > 0)
			idle_from = now;
		fb_kc_get_counters(kc, &k);
		if (k.assignments + k.revocations != rebalances) {
			rebalances = k.assignments + k.revocations;
			idle_from = now;
		}
		if (o->s.count && c->events >= o->s.count)
			return CONSUME_OK;
		if (consume_stop_signal)
			return CONSUME_OK;
		if (o->s.timeout_s > 0 && now - c->start_us >= (int64_t)(o->s.timeout_s * 1e6)) {
			fflush(stdout);
			if (o->s.count)
				fprintf(stderr, "fabricbus consume: group %s on %s: timeout after %g s: "
					"received %" PRIu64 " of %" PRIu64 " events\n", o->group,
					o->brokers, o->s.timeout_s, c->events, o->s.count);
			else
				fprintf(stderr, "fabricbus consume: group %s on %s: timeout after %g s: "
					"received %" PRIu64 " events\n", o->group, o->brokers,
					o->s.timeout_s, c->events);
			return CONSUME_RUNTIME;
		}
		if (o->s.idle_s > 0 && now - idle_from >= (int64_t)(o->s.idle_s * 1e6)) {
			if (!o->s.quiet)
				fprintf(stderr, "fabricbus consume: no message for %g s; exiting\n",
					o->s.idle_s);
			return CONSUME_OK;
		}
	}
}

static void consume_print_stats(const struct consume *c, const struct fb_kc_counters *k)
{
	double secs = c->first_us && c->last_us > c->first_us
		      ? (double)(c->last_us - c->first_us) / 1e6 : 0.0;

	fprintf(stderr, "received %" PRIu64 " events in %.6g s (%.0f events/s), assignments %"
		PRIu64 ", revocations %" PRIu64 ", commit failures %" PRIu64 ", errors %" PRIu64,
		c->events, secs, secs > 0 ? (double)c->events / secs : 0.0, k->assignments,
		k->revocations, k->commit_failures, k->errors);
	if (c->tombstones)
		fprintf(stderr, ", empty messages skipped %" PRIu64, c->tombstones);
	fputc('\n', stderr);
}

int fb_cli_consume(int argc, char **argv)
{
	struct consume c;
	struct fb_kc_opts ko;
	struct fb_kc *kc;
	struct fb_kc_counters k;
	struct sigaction sa, old_int, old_term, old_pipe;
	char err[512];
	int r, status;

	memset(&c, 0, sizeof(c));
	r = consume_parse(argc, argv, &c.o);
	if (r) {
		consume_free_opts(&c.o);
		return r < 0 ? CONSUME_OK : r;
	}
	fb_log_init("fabricbus consume", 0, c.o.s.quiet ? FB_LOG_WARN : FB_LOG_INFO);
	memset(&ko, 0, sizeof(ko));
	ko.brokers = c.o.brokers;
	ko.group_id = c.o.group;
	ko.topics = c.o.topics;
	ko.n_topics = c.o.n_topics;
	ko.from_beginning = c.o.from_beginning;
	ko.props = c.o.props;
	ko.n_props = c.o.n_props;
	ko.before_commit = consume_flush;
	ko.before_commit_arg = &c;
	r = fb_kc_new(&ko, &kc, err, sizeof(err));
	if (r) {
		fprintf(stderr, "fabricbus consume: %s\n", err);
		consume_free_opts(&c.o);
		return r == FB_ECONFIG ? CONSUME_USAGE : CONSUME_RUNTIME;
	}
	setvbuf(stdout, consume_stdout_buf, _IOFBF, sizeof(consume_stdout_buf));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = consume_on_signal;
	sigemptyset(&sa.sa_mask);
	consume_stop_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = SIG_IGN; /* a closed stdout is EPIPE, and we still leave the group */
	sigaction(SIGPIPE, &sa, &old_pipe);

	c.start_us = fb_time_us();
	status = consume_run(&c, kc);
	fb_kc_get_counters(kc, &k);
	/* Flushes stdout (before_commit), commits, leaves the group. */
	if (fb_kc_close(kc) < 0 && status == CONSUME_OK && c.write_errno != EPIPE)
		status = CONSUME_RUNTIME;
	if (c.write_errno && c.write_errno != EPIPE && status == CONSUME_OK) {
		fprintf(stderr, "fabricbus consume: writing stdout: %s\n", strerror(c.write_errno));
		status = CONSUME_RUNTIME;
	}
	if (c.o.s.stats)
		consume_print_stats(&c, &k);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	consume_free_opts(&c.o);
	return status;
}

/* push.c - the push engine: one destination per Redfish subscription,
 * following the journal (push.h). */
#include "push.h"

#include "fb_err.h"
#include "fb_event.h"
#include "fb_hc.h"
#include "fb_log.h"
#include "fb_redfish.h"
#include "journal.h"
#include "push_cursor.h"
#include "push_retry.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define READ_BURST 512 /* journal records one destination reads per turn */
#define TICK_MS 100
#define EXTRAS_MAX 1024 /* test events waiting per destination */

struct extra {
	struct extra *next;
	size_t len;
	char data[];
};

struct dest {
	struct fb_push *p;
	struct fb_rf_sub *sub; /* in the store; the store keeps the pointer stable */
	struct fb_journal_reader *rd;
	uint64_t cursor;       /* every event <= cursor delivered or not for us */
	struct fb_hc_xfer *xfer;
	struct fb_buf body;    /* the event being delivered (or retried) */
	uint64_t body_id;      /* its EventId; 0 for a heartbeat or test event */
	char origin[FB_REDFISH_ORIGIN_MAX]; /* its OriginOfCondition, "" for none */
	long last_status;      /* the last failed try's HTTP status (0: none) ... */
	int last_no_reply;     /* ... or the receiver closed without a reply */
	int have_body, body_hb;
	struct fb_push_retry retry;
	uint64_t next_hb_ms;
	struct extra *extras, **extras_tail;
	size_t n_extras;
	uint64_t delivered, failures, body_tries;
	int told_failing, told_read_error;
	struct dest *next;
};

struct fb_push {
	struct fb_push_opts o;
	char journal_dir[4096], fabric[64], ca_file[4096];
	struct fb_rf_store store;
	struct fb_hc *hc;
	struct event *kick, *tick;
	uint64_t committed;
	struct dest *dests;
	int cursors_dirty;
	uint64_t saved_ms;
	uint64_t test_seq, hb_seq;
	struct fb_push_stats st;
	struct fb_buf tmp;
	struct {
		fb_push_watch_fn fn;
		void *arg;
	} watch[FB_PUSH_WATCHERS_MAX];
	unsigned n_watch;
};

static void tell(struct fb_push *p, enum fb_push_what what, const char *id, const char *detail)
{
	if (!p->n_watch)
		return;
	char copy[FB_RF_SUB_ID_MAX];
	snprintf(copy, sizeof(copy), "%s", id); /* id may be the subscription's own */
	const struct fb_rf_sub *s = what == FB_PUSH_DELETED ? NULL : fb_rf_store_find(&p->store, copy);
	for (unsigned i = 0; i < p->n_watch; i++)
		p->watch[i].fn(p->watch[i].arg, what, copy, s, detail ? detail : "");
}

int fb_push_watch(struct fb_push *p, fb_push_watch_fn fn, void *arg)
{
	if (p->n_watch == FB_PUSH_WATCHERS_MAX)
		return -ENOSPC;
	p->watch[p->n_watch].fn = fn;
	p->watch[p->n_watch++].arg = arg;
	return 0;
}

static uint64_t now_ms(void) { return fb_now_ns() / 1000000u; }

static struct dest *find_dest(struct fb_push *p, const char *id)
{
	for (struct dest *d = p->dests; d; d = d->next)
		if (strcmp(d->sub->id, id) == 0)
			return d;
	return NULL;
}

static void changed(struct fb_push *p)
{
	if (p->o.changed)
		p->o.changed(p->o.changed_arg);
}

static void kick(struct fb_push *p) { event_active(p->kick, 0, 0); }

/* ---- cursors ---- */

static int save_cursors(struct fb_push *p)
{
	size_t n = 0;
	for (struct dest *d = p->dests; d; d = d->next)
		n++;
	struct fb_push_cursor *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t i = 0;
	for (struct dest *d = p->dests; d; d = d->next, i++) {
		snprintf(v[i].id, sizeof(v[i].id), "%s", d->sub->id);
		v[i].cursor = d->cursor;
	}
	int rc = fb_push_cursors_write(p->journal_dir, p->o.epoch, v, n);
	free(v);
	if (rc)
		fb_log_err("push: cannot write %s/" FB_PUSH_CURSOR_NAME ": %s (retrying; after a crash now "
			   "some events would be delivered twice)",
			   p->journal_dir, fb_strerror(rc));
	else
		p->cursors_dirty = 0;
	p->saved_ms = now_ms();
	return rc;
}

/* ---- destinations ---- */

static void drop_body(struct dest *d)
{
	d->have_body = d->body_hb = 0;
	d->body_id = d->body_tries = 0;
	d->origin[0] = '\0';
	fb_buf_reset(&d->body);
}

static void close_reader(struct dest *d)
{
	if (d->rd)
		fb_journal_reader_close(d->rd);
	d->rd = NULL;
}

static void drop_extras(struct dest *d)
{
	while (d->extras) {
		struct extra *x = d->extras;
		d->extras = x->next;
		free(x);
	}
	d->extras_tail = &d->extras;
	d->n_extras = 0;
}

static struct dest *dest_new(struct fb_push *p, struct fb_rf_sub *s, uint64_t cursor)
{
	struct dest *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->p = p;
	d->sub = s;
	d->cursor = cursor > p->committed ? p->committed : cursor;
	d->extras_tail = &d->extras;
	d->next_hb_ms = now_ms() + (uint64_t)s->heartbeat_minutes * p->o.heartbeat_unit_ms;
	d->next = p->dests;
	p->dests = d;
	return d;
}

static void dest_free(struct fb_push *p, struct dest *d)
{
	for (struct dest **q = &p->dests; *q; q = &(*q)->next)
		if (*q == d) {
			*q = d->next;
			break;
		}
	if (d->xfer)
		fb_hc_cancel(p->hc, d->xfer);
	close_reader(d);
	drop_extras(d);
	fb_buf_free(&d->body);
	free(d);
}

/* Suspended (or resumed): nothing in flight or queued survives; the
 * journal events are read again from the cursor on resume. */
static void dest_pause(struct fb_push *p, struct dest *d)
{
	if (d->xfer)
		fb_hc_cancel(p->hc, d->xfer);
	d->xfer = NULL;
	close_reader(d);
	drop_body(d);
	drop_extras(d);
	fb_push_retry_ok(&d->retry);
}

/* ---- bodies ---- */

static int put_envelope(struct dest *d, const char *id, const char *name, const char *record,
			size_t rlen)
{
	struct fb_buf *b = &d->body;
	fb_buf_reset(b);
	int rc = fb_buf_puts(b, "{\"@odata.type\":\"#Event.v1_13_0.Event\",\"Id\":");
	rc = rc ? rc : fb_buf_put_json_str(b, id);
	rc = rc ? rc : fb_buf_puts(b, ",\"Name\":");
	rc = rc ? rc : fb_buf_put_json_str(b, name);
	rc = rc ? rc : fb_buf_puts(b, ",\"Context\":");
	rc = rc ? rc : fb_buf_put_json_str(b, d->sub->context);
	rc = rc ? rc : fb_buf_puts(b, ",\"Events@odata.count\":1,\"Events\":[");
	rc = rc ? rc : fb_buf_put(b, record, rlen);
	return rc ? rc : fb_buf_puts(b, "]}");
}

static void wall_time(char *out, size_t n)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int heartbeat_body(struct fb_push *p, struct dest *d)
{
	char id[32], ts[32], rec[512];
	snprintf(id, sizeof(id), "heartbeat-%" PRIu64, ++p->hb_seq);
	wall_time(ts, sizeof(ts));
	int n = snprintf(rec, sizeof(rec),
			 "{\"EventType\":\"Other\",\"EventId\":\"%s\",\"EventTimestamp\":\"%s\","
			 "\"MessageId\":\"HeartbeatEvent.1.1.RedfishServiceFunctional\","
			 "\"MessageSeverity\":\"OK\",\"Message\":\"Redfish service is functional.\","
			 "\"MessageArgs\":[],\"MemberId\":\"0\"}",
			 id, ts);
	return put_envelope(d, id, "Heartbeat Event", rec, (size_t)n);
}

/* IncludeOriginOfCondition: the rendered event with its OriginOfCondition
 * link replaced by the resource itself. 0 when done, 1 when the tree has no
 * such resource (the link stays), or a negative error. */
static int expand_origin(struct fb_push *p, struct dest *d, struct fb_buf *out)
{
	if (!d->sub->include_origin || !d->origin[0] || !p->o.origin_body)
		return 1;
	struct fb_buf needle = FB_BUF_INIT;
	int rc = fb_buf_puts(&needle, "\"OriginOfCondition\":{\"@odata.id\":");
	rc = rc ? rc : fb_buf_put_json_str(&needle, d->origin);
	rc = rc ? rc : fb_buf_puts(&needle, "}");
	const uint8_t *at = NULL;
	for (size_t i = 0; !rc && i + needle.len <= p->tmp.len; i++)
		if (memcmp(p->tmp.data + i, needle.data, needle.len) == 0) {
			at = p->tmp.data + i;
			break;
		}
	char *body = at ? p->o.origin_body(p->o.origin_body_arg, d->origin) : NULL;
	if (body) {
		size_t head = (size_t)(at - p->tmp.data);
		rc = fb_buf_put(out, p->tmp.data + 1, head - 1);
		rc = rc ? rc : fb_buf_puts(out, "\"OriginOfCondition\":");
		rc = rc ? rc : fb_buf_puts(out, body);
		rc = rc ? rc : fb_buf_put(out, at + needle.len, p->tmp.len - head - needle.len);
	}
	free(body);
	fb_buf_free(&needle);
	return rc ? rc : body ? 0 : 1;
}

/* The rendered Event with the subscription's Context as its second key. */
static int event_body(struct fb_push *p, struct dest *d, uint64_t id, const struct fb_event *ev)
{
	fb_buf_reset(&p->tmp);
	int rc = fb_redfish_render(&p->tmp, ev, id, p->fabric);
	if (rc || p->tmp.len < 2)
		return rc ? rc : -EINVAL;
	if (fb_redfish_origin(ev, p->fabric, d->origin, sizeof(d->origin)) < 0)
		d->origin[0] = '\0';
	struct fb_buf *b = &d->body;
	fb_buf_reset(b);
	rc = fb_buf_puts(b, "{\"Context\":");
	rc = rc ? rc : fb_buf_put_json_str(b, d->sub->context);
	rc = rc ? rc : fb_buf_puts(b, ",");
	size_t mark = b->len;
	int ex = rc ? rc : expand_origin(p, d, b);
	if (ex < 0)
		return ex;
	if (ex == 1) {
		b->len = mark; /* not expanded: the event as rendered */
		rc = fb_buf_put(b, p->tmp.data + 1, p->tmp.len - 1);
	}
	return rc;
}

static int event_matches(struct fb_push *p, const struct fb_rf_sub *s, const struct fb_event *ev)
{
	/* Quiet events (symptoms, over a rate limit...) are for readers that
	 * ask: /ws/events or SSE with quiet=1, Kafka (PROTOCOL.md). */
	if (fb_event_quiet(ev))
		return 0;
	struct fb_redfish_class cls;
	char origin[FB_REDFISH_ORIGIN_MAX];
	fb_redfish_classify(ev, &cls);
	if (fb_redfish_origin(ev, p->fabric, origin, sizeof(origin)) < 0)
		origin[0] = '\0';
	struct fb_rf_facts f;
	fb_rf_facts_init(&f, cls.message_id, cls.severity, cls.event_type, origin);
	return fb_rf_match(&s->match, &f);
}

/* ---- delivery ---- */

static void on_result(struct dest *d, int ok, long status, const char *error);

static void done_cb(void *arg, const struct fb_hc_resp *r)
{
	struct dest *d = arg;
	d->xfer = NULL;
	char why[300];
	d->last_status = r->ok ? 0 : r->status;
	d->last_no_reply = r->no_reply;
	if (!r->ok && r->status)
		snprintf(why, sizeof(why), "HTTP %ld", r->status);
	else
		snprintf(why, sizeof(why), "%s", r->error);
	on_result(d, r->ok, r->status, why);
}

static void send_body(struct fb_push *p, struct dest *d)
{
	struct fb_hc_req req = {
		.method = "POST", .url = d->sub->destination,
		.headers = (const char *const *)d->sub->headers, .n_headers = d->sub->n_headers,
		.body = d->body.data, .body_len = d->body.len, .timeout_ms = (long)p->o.timeout_ms,
		.no_verify = !d->sub->verify_certificate,
	};
	int rc = fb_hc_send(p->hc, &req, done_cb, d, &d->xfer);
	if (rc) {
		d->xfer = NULL;
		on_result(d, 0, 0, fb_strerror(rc));
	}
}

static void delivered(struct fb_push *p, struct dest *d)
{
	int was_failing = d->told_failing;
	if (d->told_failing)
		fb_log_info("push: subscription %s (%s) takes deliveries again after %" PRIu64
			    " failed tries",
			    d->sub->id, d->sub->destination, (uint64_t)d->retry.failures);
	d->told_failing = 0;
	fb_push_retry_ok(&d->retry);
	if (d->body_id) {
		d->cursor = d->body_id;
		p->cursors_dirty = 1;
	}
	if (d->body_hb) {
		p->st.heartbeats++;
		d->next_hb_ms = now_ms() + (uint64_t)d->sub->heartbeat_minutes * p->o.heartbeat_unit_ms;
	}
	p->st.delivered++;
	d->delivered++;
	drop_body(d);
	if (was_failing)
		tell(p, FB_PUSH_DELIVERED, d->sub->id, NULL);
}

static void on_result(struct dest *d, int ok, long status, const char *error)
{
	struct fb_push *p = d->p;
	(void)status;
	if (ok) {
		delivered(p, d);
		kick(p);
		return;
	}
	p->st.failed++;
	d->failures++;
	d->body_tries++;
	struct fb_push_retry_conf c = { p->o.retry_attempts, p->o.retry_interval_ms, p->o.max_backoff_ms };
	int v = fb_push_retry_failed(&d->retry, d->sub->retry_policy, &c, now_ms());
	if (!d->told_failing)
		fb_log_warn("push: delivery to subscription %s (%s) failed: %s; retrying every %" PRIu64
			    " ms (%s, %u retries)",
			    d->sub->id, d->sub->destination, error, p->o.retry_interval_ms,
			    fb_rf_retry_policy_name(d->sub->retry_policy), p->o.retry_attempts);
	d->told_failing = 1;
	char id[FB_RF_SUB_ID_MAX];
	snprintf(id, sizeof(id), "%s", d->sub->id);
	tell(p, FB_PUSH_FAILED, id, error);
	if (!find_dest(p, id) || !d->sub->enabled || !d->have_body)
		return; /* the watcher suspended it, or dropped the event */
	if (v == FB_PUSH_RETRY) {
		p->st.retries++;
		return;
	}
	if (v == FB_PUSH_TERMINATE) {
		fb_log_warn("push: subscription %s (%s) deleted after %u failed retries "
			    "(DeliveryRetryPolicy TerminateAfterRetries): %s",
			    id, d->sub->destination, p->o.retry_attempts, error);
		p->st.terminated++;
		fb_push_delete(p, id);
	} else {
		fb_log_warn("push: subscription %s (%s) suspended after %u failed retries "
			    "(DeliveryRetryPolicy SuspendRetries): %s; PATCH its Status.State to "
			    "Enabled to resume from EventId %" PRIu64,
			    id, d->sub->destination, p->o.retry_attempts, error, d->cursor + 1);
		p->st.suspended++;
		fb_push_set_enabled(p, id, 0);
	}
}

/* One turn of one destination. Returns 1 if it stopped with work left. */
static int pump(struct fb_push *p, struct dest *d, uint64_t now)
{
	struct fb_rf_sub *s = d->sub;
	if (!s->enabled || d->xfer)
		return 0;
	if (d->have_body) {
		if (fb_push_retry_due(&d->retry, now))
			send_body(p, d);
		return 0;
	}
	if (d->extras) {
		struct extra *x = d->extras;
		d->extras = x->next;
		d->n_extras--;
		if (!d->extras)
			d->extras_tail = &d->extras;
		fb_buf_reset(&d->body);
		int rc = fb_buf_put(&d->body, x->data, x->len);
		free(x);
		if (!rc) {
			d->have_body = 1;
			send_body(p, d);
		}
		return 0;
	}
	if (s->send_heartbeat && now >= d->next_hb_ms) {
		if (heartbeat_body(p, d) == 0) {
			d->have_body = d->body_hb = 1;
			send_body(p, d);
		}
		return 0;
	}
	if (!d->rd) {
		int rc = fb_journal_reader_open(p->journal_dir, d->cursor, &d->rd);
		if (rc) {
			if (!d->told_read_error++) /* retried every tick: say it once */
				fb_log_err("push: subscription %s: cannot read the journal in %s: %s", s->id,
					   p->journal_dir, fb_strerror(rc));
			return 0;
		}
	}
	for (unsigned n = 0; n < READ_BURST; n++) {
		uint64_t id;
		struct fb_event ev;
		int rc = fb_journal_reader_next(d->rd, p->committed, &id, &ev);
		if (rc == FB_EGONE) {
			uint64_t gap = fb_journal_reader_gap(d->rd);
			fb_log_err("push: subscription %s: EventIds %" PRIu64 "..%" PRIu64 " were removed by "
				   "journal retention before they were delivered (raise JournalRetainSize/Age)",
				   s->id, d->cursor + 1, gap - 1);
			d->cursor = gap - 1;
			continue;
		}
		if (rc < 0) {
			if (!d->told_read_error++)
				fb_log_err("push: subscription %s: reading the journal: %s (retrying)", s->id,
					   fb_strerror(rc));
			close_reader(d);
			return 0;
		}
		if (rc == 0)
			return 0;
		d->told_read_error = 0;
		if (!event_matches(p, s, &ev)) {
			d->cursor = id;
			p->cursors_dirty = 1;
			p->st.skipped++;
			continue;
		}
		if (event_body(p, d, id, &ev)) {
			fb_log_err("push: cannot render EventId %" PRIu64 " (out of memory); retrying", id);
			close_reader(d); /* read it again from the cursor */
			return 0;
		}
		d->have_body = 1;
		d->body_id = id;
		send_body(p, d);
		return 0;
	}
	return 1;
}

static void kick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_push *p = arg;
	uint64_t now = now_ms();
	int more = 0;
	for (struct dest *d = p->dests, *next; d; d = next) {
		next = d->next; /* a failure inside may delete d */
		more |= pump(p, d, now);
	}
	if (more)
		kick(p); /* yield to the sockets, then go on */
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_push *p = arg;
	kick_cb(-1, 0, p);
	if (p->cursors_dirty && now_ms() - p->saved_ms >= p->o.cursor_sync_ms)
		save_cursors(p);
}

/* ---- the loop side ---- */

int fb_push_committed(void *arg, struct fb_batch *batch, uint64_t last_id)
{
	(void)batch;
	struct fb_push *p = arg;
	if (last_id > p->committed)
		p->committed = last_id;
	kick(p);
	return 0;
}

static int add_dests(struct fb_push *p)
{
	struct fb_push_cursor *cv = NULL;
	size_t cn = 0;
	const char *why = NULL;
	int rc = fb_push_cursors_read(p->journal_dir, p->o.epoch, &cv, &cn, &why);
	if (rc && rc != -ENOENT)
		fb_log_warn("push: ignoring %s/" FB_PUSH_CURSOR_NAME " (%s): subscriptions resume at "
			    "EventId %" PRIu64,
			    p->journal_dir, why ? why : fb_strerror(rc), p->committed + 1);
	for (size_t i = 0; i < p->store.n; i++) {
		struct fb_rf_sub *s = p->store.v[i];
		if (s->protocol != FB_RF_PROTO_REDFISH)
			continue;
		uint64_t c = p->committed;
		int found = 0;
		for (size_t j = 0; j < cn; j++)
			if (strcmp(cv[j].id, s->id) == 0) {
				c = cv[j].cursor;
				found = 1;
			}
		if (!found && !rc)
			fb_log_warn("push: subscription %s has no cursor; it starts at EventId %" PRIu64,
				    s->id, c + 1);
		if (!dest_new(p, s, c)) {
			free(cv);
			return -ENOMEM;
		}
	}
	free(cv);
	return 0;
}

int fb_push_start(const struct fb_push_opts *o, struct fb_push **out)
{
	struct fb_push *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->o = *o;
	snprintf(p->journal_dir, sizeof(p->journal_dir), "%s", o->journal_dir);
	snprintf(p->fabric, sizeof(p->fabric), "%s", o->fabric ? o->fabric : "IB");
	snprintf(p->ca_file, sizeof(p->ca_file), "%s", o->ca_file ? o->ca_file : "");
	if (!p->o.heartbeat_unit_ms)
		p->o.heartbeat_unit_ms = 60000;
	if (!p->o.cursor_sync_ms)
		p->o.cursor_sync_ms = 200;
	if (!p->o.max_backoff_ms)
		p->o.max_backoff_ms = 3600000;
	p->committed = o->committed_id;
	fb_rf_store_init(&p->store, p->journal_dir);
	char err[512];
	if (fb_rf_store_load(&p->store, err, sizeof(err))) {
		char bad[4300];
		snprintf(bad, sizeof(bad), "%s.bad", p->store.path);
		int moved = rename(p->store.path, bad) == 0;
		fb_log_err("redfish: cannot load the subscriptions: %s; starting without them (%s)", err,
			   moved ? "the file is kept as " FB_RF_STORE_NAME ".bad" : "the file is left as it is");
	}
	struct fb_hc_opts ho = { .ca_file = p->ca_file, .timeout_ms = (long)o->timeout_ms };
	int rc = fb_hc_new(o->base, &ho, &p->hc);
	p->kick = event_new(o->base, -1, 0, kick_cb, p);
	p->tick = event_new(o->base, -1, EV_PERSIST, tick_cb, p);
	struct timeval tv = { 0, TICK_MS * 1000 };
	if (rc || !p->kick || !p->tick || event_add(p->tick, &tv) || add_dests(p)) {
		fb_log_err("push: cannot start: %s", fb_strerror(rc ? rc : -ENOMEM));
		fb_push_stop(p);
		return rc ? rc : -ENOMEM;
	}
	size_t n = 0;
	for (struct dest *d = p->dests; d; d = d->next)
		n++;
	fb_log_info("push: %zu subscriptions (%zu pushed over HTTP), from EventId %" PRIu64,
		    p->store.n, n, p->committed + 1);
	kick(p);
	*out = p;
	return 0;
}

void fb_push_stop(struct fb_push *p)
{
	if (!p)
		return;
	if (p->hc && p->dests)
		save_cursors(p);
	while (p->dests)
		dest_free(p, p->dests);
	if (p->kick)
		event_free(p->kick);
	if (p->tick)
		event_free(p->tick);
	fb_hc_free(p->hc);
	fb_rf_store_free(&p->store);
	fb_buf_free(&p->tmp);
	free(p);
}

const struct fb_rf_store *fb_push_store(const struct fb_push *p) { return &p->store; }
struct fb_hc *fb_push_hc(struct fb_push *p) { return p->hc; }

int fb_push_create(struct fb_push *p, struct fb_rf_sub *s, const char *id, struct fb_rf_sub **out)
{
	struct fb_rf_sub *stored;
	int rc = fb_rf_store_add(&p->store, s, id, &stored);
	if (rc)
		return rc;
	rc = fb_rf_store_save(&p->store);
	if (rc) {
		fb_rf_store_remove(&p->store, stored->id);
		return rc;
	}
	if (stored->protocol == FB_RF_PROTO_REDFISH) {
		if (!dest_new(p, stored, p->committed)) {
			fb_rf_store_remove(&p->store, stored->id);
			fb_rf_store_save(&p->store);
			return -ENOMEM;
		}
		save_cursors(p); /* a crash from now on must not skip its events */
	}
	fb_log_info("redfish: subscription %s created: %s %s, from EventId %" PRIu64, stored->id,
		    stored->protocol == FB_RF_PROTO_KAFKA ? "Kafka topic" : "push to",
		    stored->protocol == FB_RF_PROTO_KAFKA ? stored->context : stored->destination,
		    p->committed + 1);
	if (out)
		*out = stored;
	changed(p);
	tell(p, FB_PUSH_CREATED, stored->id, NULL);
	kick(p);
	return 0;
}

int fb_push_update(struct fb_push *p, struct fb_rf_sub *s)
{
	struct fb_rf_sub *old = fb_rf_store_find(&p->store, s->id);
	if (!old)
		return -ENOENT;
	struct dest *d = find_dest(p, s->id);
	int was = old->enabled;
	unsigned hb = old->heartbeat_minutes;
	int rc = fb_rf_store_replace(&p->store, s);
	if (!rc)
		rc = fb_rf_store_save(&p->store);
	if (d && was != old->enabled)
		dest_pause(p, d); /* resumed: read again from the cursor */
	if (d && hb != old->heartbeat_minutes)
		d->next_hb_ms = now_ms() + (uint64_t)old->heartbeat_minutes * p->o.heartbeat_unit_ms;
	changed(p);
	tell(p, FB_PUSH_UPDATED, old->id, NULL);
	if (was != old->enabled)
		tell(p, old->enabled ? FB_PUSH_ENABLED : FB_PUSH_DISABLED, old->id, NULL);
	kick(p);
	return rc;
}

int fb_push_set_enabled(struct fb_push *p, const char *id, int enabled)
{
	struct fb_rf_sub *s = fb_rf_store_find(&p->store, id);
	if (!s)
		return -ENOENT;
	if (s->enabled == !!enabled)
		return 0;
	int rc = fb_rf_sub_set_enabled(s, enabled);
	if (!rc)
		rc = fb_rf_store_save(&p->store);
	struct dest *d = find_dest(p, id);
	if (d)
		dest_pause(p, d);
	if (enabled)
		fb_log_info("push: subscription %s resumed at EventId %" PRIu64, id,
			    d ? d->cursor + 1 : p->committed + 1);
	changed(p);
	tell(p, enabled ? FB_PUSH_ENABLED : FB_PUSH_DISABLED, id, NULL);
	kick(p);
	return rc;
}

int fb_push_delete(struct fb_push *p, const char *id_in)
{
	char id[FB_RF_SUB_ID_MAX]; /* id_in may be the subscription's own, freed below */
	snprintf(id, sizeof(id), "%s", id_in);
	struct dest *d = find_dest(p, id);
	if (!fb_rf_store_find(&p->store, id))
		return -ENOENT;
	if (d)
		dest_free(p, d);
	fb_rf_store_remove(&p->store, id);
	int rc = fb_rf_store_save(&p->store);
	p->cursors_dirty = 1;
	fb_log_info("redfish: subscription %s deleted", id);
	changed(p);
	tell(p, FB_PUSH_DELETED, id, NULL);
	return rc;
}

static const char *record_str(json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);
	return json_is_string(v) ? json_string_value(v) : "";
}

int fb_push_submit(struct fb_push *p, json_t *record)
{
	const char *sev = record_str(record, "MessageSeverity");
	if (!*sev)
		sev = record_str(record, "Severity");
	int sv = fb_severity_parse(*sev ? sev : "OK");
	json_t *o = json_object_get(record, "OriginOfCondition");
	const char *origin = json_is_string(o) ? json_string_value(o)
					       : record_str(o, "@odata.id");
	struct fb_rf_facts f;
	fb_rf_facts_init(&f, record_str(record, "MessageId"), sv < 0 ? 0 : (unsigned)sv,
			 record_str(record, "EventType"), origin);
	char *text = json_dumps(record, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	char id[32];
	snprintf(id, sizeof(id), "test-%" PRIu64, ++p->test_seq);
	int n = 0;
	for (struct dest *d = p->dests; d; d = d->next) {
		if (!d->sub->enabled || !fb_rf_match(&d->sub->match, &f))
			continue;
		if (d->n_extras >= EXTRAS_MAX) {
			fb_log_warn("push: subscription %s already has %d test events waiting; this one "
				    "is dropped", d->sub->id, EXTRAS_MAX);
			continue;
		}
		/* The envelope carries each destination's own Context. */
		struct fb_buf save = d->body;
		d->body = (struct fb_buf)FB_BUF_INIT;
		int rc = put_envelope(d, id, "Test Event", text, strlen(text));
		struct extra *x = rc ? NULL : malloc(sizeof(*x) + d->body.len);
		if (x) {
			x->next = NULL;
			x->len = d->body.len;
			memcpy(x->data, d->body.data, d->body.len);
			*d->extras_tail = x;
			d->extras_tail = &x->next;
			d->n_extras++;
			n++;
		}
		fb_buf_free(&d->body);
		d->body = save;
		if (!x) {
			free(text);
			return -ENOMEM;
		}
	}
	free(text);
	kick(p);
	return n;
}

int fb_push_pending(const struct fb_push *p, const char *id, struct fb_push_pending *out)
{
	const struct dest *d = find_dest((struct fb_push *)p, id);
	if (!d || !d->have_body)
		return -ENOENT;
	*out = (struct fb_push_pending){ d->body_id, d->origin, d->last_status, d->last_no_reply,
					 d->body_tries };
	return 0;
}

int fb_push_drop(struct fb_push *p, const char *id, const char *why)
{
	struct dest *d = find_dest(p, id);
	if (!d || !d->have_body)
		return -ENOENT;
	if (d->body_id) {
		fb_log_warn("push: subscription %s (%s): EventId %" PRIu64 " (OriginOfCondition %s) "
			    "dropped as undeliverable after %" PRIu64 " tries: %s; the next events follow",
			    d->sub->id, d->sub->destination, d->body_id, d->origin[0] ? d->origin : "none",
			    d->body_tries, why);
		d->cursor = d->body_id;
		p->cursors_dirty = 1;
	} else {
		fb_log_warn("push: subscription %s (%s): a %s event dropped as undeliverable: %s",
			    d->sub->id, d->sub->destination, d->body_hb ? "heartbeat" : "test", why);
	}
	p->st.undeliverable++;
	d->told_failing = 0;
	drop_body(d);
	fb_push_retry_ok(&d->retry);
	kick(p);
	return 0;
}

json_t *fb_push_render(struct fb_push *p, const struct fb_rf_sub *s)
{
	(void)p;
	return fb_rf_sub_render(s);
}

void fb_push_get_stats(const struct fb_push *p, struct fb_push_stats *st) { *st = p->st; }

void fb_push_get_retry(const struct fb_push *p, unsigned *attempts, uint64_t *interval_ms)
{
	*attempts = p->o.retry_attempts;
	*interval_ms = p->o.retry_interval_ms;
}

void fb_push_set_retry(struct fb_push *p, unsigned attempts, uint64_t interval_ms)
{
	p->o.retry_attempts = attempts;
	p->o.retry_interval_ms = interval_ms;
	fb_log_info("push: DeliveryRetryAttempts %u, DeliveryRetryIntervalSeconds %" PRIu64
		    " (until the next start)", attempts, interval_ms / 1000);
}

#include "ofmf_reg.h"

#include "fb_log.h"
#include "ofmf_origins.h"
#include "ofmf_state.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANNOUNCE_TRIES 3 /* refusals of one origin by a live core before it is dropped */

struct fb_ofmf_reg {
	char base[FB_OFMF_URL_MAX], cm[FB_OFMF_URL_MAX], fabric[FB_OFMF_URL_MAX];
	struct fb_ofmf_reg_opts o;
	enum fb_ofmf_state_id st;
	char context[FB_OFMF_CONTEXT_MAX];
	char path[FB_OFMF_URL_MAX + FB_OFMF_CONTEXT_MAX]; /* the request's path */
	char err[FB_OFMF_URL_MAX * 2 + 256];
	int in_flight;               /* a request is out ... */
	enum fb_ofmf_act flight;     /* ... of this kind */
	int flight_stale;            /* the state moved on: ignore its result */
	int patched;                 /* the PATCH came during this discovery */
	int want_save, want_set;
	int live;                    /* the fabric's crawl is done: deliver events */
	uint64_t due;                /* the state's next request, not before */
	uint64_t check_due;          /* REGISTERED: next GET of our AggregationSource */
	uint64_t backoff;
	uint64_t wait_until;         /* AWAIT_CONTEXT's deadline */
	char **members;              /* ADOPT_MEMBER: the core's AggregationSources */
	size_t n_members, member;
	char taken_by[FB_OFMF_URL_MAX]; /* HostName holding our ConnectionMethod */
	struct fb_ofmf_origins og;   /* owed ResourceCreated, and what the core holds */
	unsigned head_tries;
	int head_failed;             /* the head's POST got no reply: check the core first */
	int overflow;                /* origins were turned away: crawl the fabric again */
	/* The event the core refuses (fb_ofmf_reg_delivery_failed): its origin
	 * is announced, then we check we are registered, then it is dropped. */
	uint64_t refused_id, refused_since;
	unsigned refused_n;          /* refusals after the first */
	char refused_origin[FB_OFMF_URL_MAX];
	enum { REF_NONE, REF_CHECK_DUE, REF_CHECK_SENT, REF_CHECKED } refused_phase;
	struct fb_ofmf_reg_stats st_;
};

static const char *const state_names[] = { "discovering", "awaiting-context", "checking",
					   "adopting",    "adopting",         "registered",
					   "conflict" };

const char *fb_ofmf_reg_state_name(enum fb_ofmf_state_id st)
{
	return (unsigned)st < sizeof(state_names) / sizeof(state_names[0]) ? state_names[st] : "?";
}

static void free_members(struct fb_ofmf_reg *r)
{
	for (size_t i = 0; i < r->n_members; i++)
		free(r->members[i]);
	free(r->members);
	r->members = NULL;
	r->n_members = r->member = 0;
}

static void go(struct fb_ofmf_reg *r, enum fb_ofmf_state_id st, uint64_t due)
{
	r->st = st;
	r->due = due;
	if (r->in_flight)
		r->flight_stale = 1;
}

static void set_context(struct fb_ofmf_reg *r, const char *ctx)
{
	if (strcmp(r->context, ctx) == 0)
		return;
	snprintf(r->context, sizeof(r->context), "%s", ctx);
	r->want_save = r->want_set = 1;
}

static void backoff(struct fb_ofmf_reg *r, uint64_t now, enum fb_ofmf_state_id st)
{
	r->backoff = r->backoff ? r->backoff * 2 : r->o.retry_min_ns;
	if (r->backoff > r->o.retry_max_ns)
		r->backoff = r->o.retry_max_ns;
	go(r, st, now + r->backoff);
}

/* The head changes: its tries start again. */
static int queue_push(struct fb_ofmf_reg *r, const char *path, int front, uint64_t due)
{
	if (fb_ofmf_origins_push(&r->og, path, front, due))
		return -1;
	if (front)
		r->head_tries = r->head_failed = 0;
	return 0;
}

static void queue_pop(struct fb_ofmf_reg *r)
{
	fb_ofmf_origins_pop(&r->og);
	r->head_tries = r->head_failed = 0;
}

static void go_live(struct fb_ofmf_reg *r)
{
	if (!r->live) {
		r->live = 1;
		r->want_set = 1;
	}
}

/* Registered, by whichever road: the core crawls the fabric again, so that
 * what appeared while we were apart is known to it too. */
static void registered(struct fb_ofmf_reg *r, uint64_t now, const char *ctx, const char *how)
{
	set_context(r, ctx);
	r->refused_id = 0;
	r->refused_phase = REF_NONE;
	r->live = 0; /* events wait for the fabric's crawl: the core refuses unknown origins */
	r->backoff = 0;
	r->err[0] = '\0';
	free_members(r);
	go(r, FB_OFMF_ST_REGISTERED, now);
	r->check_due = now + r->o.check_ns;
	if (!r->og.n || strcmp(r->og.q[0].path, r->fabric) != 0)
		(void)queue_push(r, r->fabric, 1, now); /* ENOMEM: the next registration retries */
	fb_log_info("ofmf: registered with the core as AggregationSource %s (%s)", r->context, how);
}

static void forgotten(struct fb_ofmf_reg *r, uint64_t now, const char *why)
{
	r->st_.forgotten++;
	fb_log_warn("ofmf: the core no longer knows AggregationSource %s (%s): registering again",
		    r->context, why);
	set_context(r, "");
	r->refused_id = 0;
	r->refused_phase = REF_NONE;
	r->live = 0;
	r->want_set = 1;
	fb_ofmf_origins_forget(&r->og); /* a new core holds nothing of ours */
	r->backoff = 0;
	go(r, FB_OFMF_ST_DISCOVER, now);
}

struct fb_ofmf_reg *fb_ofmf_reg_new(const struct fb_ofmf_reg_opts *opts, const char *saved_context,
				    uint64_t now)
{
	struct fb_ofmf_reg *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->o = *opts;
	if (snprintf(r->base, sizeof(r->base), "%s", opts->base) >= (int)sizeof(r->base) ||
	    snprintf(r->cm, sizeof(r->cm), "%s", opts->connection_method) >= (int)sizeof(r->cm) ||
	    snprintf(r->fabric, sizeof(r->fabric), "%s", opts->fabric) >= (int)sizeof(r->fabric) ||
	    (saved_context && strlen(saved_context) >= sizeof(r->context))) {
		free(r);
		return NULL;
	}
	fb_ofmf_origins_init(&r->og, r->o.queue_max ? r->o.queue_max : 4096);
	r->want_set = 1; /* deliveries to the core wait until it has crawled us */
	if (saved_context && saved_context[0]) {
		snprintf(r->context, sizeof(r->context), "%s", saved_context);
		go(r, FB_OFMF_ST_CHECK, now);
	} else {
		go(r, FB_OFMF_ST_DISCOVER, now);
	}
	return r;
}

void fb_ofmf_reg_free(struct fb_ofmf_reg *r)
{
	if (!r)
		return;
	free_members(r);
	fb_ofmf_origins_fini(&r->og);
	free(r);
}

static void request(struct fb_ofmf_reg *r, enum fb_ofmf_act kind, struct fb_ofmf_action *out)
{
	r->in_flight = 1;
	r->flight = kind;
	r->flight_stale = 0;
	r->st_.requests++;
	out->kind = kind;
	out->path = r->path;
	out->context = r->context;
	if (kind == FB_OFMF_GET_SOURCE && r->refused_phase == REF_CHECK_DUE)
		r->refused_phase = REF_CHECK_SENT;
}

static void source_path(struct fb_ofmf_reg *r, const char *id_or_path)
{
	if (id_or_path[0] == '/')
		snprintf(r->path, sizeof(r->path), "%s", id_or_path);
	else
		snprintf(r->path, sizeof(r->path), "%s/%s", FB_OFMF_SOURCES, id_or_path);
}

void fb_ofmf_reg_next(struct fb_ofmf_reg *r, uint64_t now, struct fb_ofmf_action *out)
{
	memset(out, 0, sizeof(*out));
	out->context = r->context;
	if (r->want_save) {
		r->want_save = 0;
		out->kind = FB_OFMF_SAVE;
		return;
	}
	if (r->want_set) {
		r->want_set = 0;
		out->kind = FB_OFMF_SET_CONTEXT;
		out->deliver = r->st == FB_OFMF_ST_REGISTERED && r->live;
		return;
	}
	if (r->st == FB_OFMF_ST_AWAIT_CONTEXT && now >= r->wait_until) {
		/* The PATCH was lost: the core may hold a source of ours all the same. */
		fb_log_warn("ofmf: the core accepted our discovery but never set our Context; "
			    "looking for our AggregationSource");
		go(r, FB_OFMF_ST_ADOPT_LIST, now);
	}
	if (r->in_flight || now < r->due)
		return;
	switch (r->st) {
	case FB_OFMF_ST_CONFLICT:
		go(r, FB_OFMF_ST_DISCOVER, now);
		/* fall through */
	case FB_OFMF_ST_DISCOVER:
		r->patched = 0;
		r->path[0] = '\0';
		request(r, FB_OFMF_DISCOVER, out);
		return;
	case FB_OFMF_ST_CHECK:
		source_path(r, r->context);
		request(r, FB_OFMF_GET_SOURCE, out);
		return;
	case FB_OFMF_ST_ADOPT_LIST:
		snprintf(r->path, sizeof(r->path), "%s", FB_OFMF_SOURCES);
		request(r, FB_OFMF_LIST_SOURCES, out);
		return;
	case FB_OFMF_ST_ADOPT_MEMBER:
		source_path(r, r->members[r->member]);
		request(r, FB_OFMF_GET_SOURCE, out);
		return;
	case FB_OFMF_ST_REGISTERED:
		if (now >= r->check_due || r->head_failed) {
			source_path(r, r->context);
			request(r, FB_OFMF_GET_SOURCE, out);
		} else if (r->og.n && now >= r->og.q[0].due) {
			snprintf(r->path, sizeof(r->path), "%s", r->og.q[0].path);
			request(r, FB_OFMF_ANNOUNCE, out);
		}
		return;
	case FB_OFMF_ST_AWAIT_CONTEXT: return;
	}
}

uint64_t fb_ofmf_reg_wake(const struct fb_ofmf_reg *r)
{
	if (r->want_save || r->want_set)
		return 0;
	if (r->st == FB_OFMF_ST_AWAIT_CONTEXT)
		return r->wait_until;
	if (r->in_flight)
		return UINT64_MAX;
	if (r->st != FB_OFMF_ST_REGISTERED || r->head_failed)
		return r->due;
	uint64_t t = r->check_due;
	if (r->og.n && r->og.q[0].due < t)
		t = r->og.q[0].due;
	return t > r->due ? t : r->due;
}

/* ---- reading the core's AggregationSources ----------------------------- */

/* 1 when the AggregationSource in body is ours: our ConnectionMethod and our
 * base URL as HostName. *host gets its HostName (for the conflict message).
 * What it lists in ResourcesAccessed the core holds: never announced. */
static int source_is_ours(struct fb_ofmf_reg *r, const char *body, size_t len, char *id,
			  size_t idsz, char *host, size_t hostsz)
{
	json_t *j = body ? json_loadb(body, len, 0, NULL) : NULL;
	const char *h = json_string_value(json_object_get(j, "HostName"));
	const char *cm = json_string_value(
		json_object_get(json_object_get(json_object_get(j, "Links"), "ConnectionMethod"),
				"@odata.id"));
	const char *sid = json_string_value(json_object_get(j, "Id"));
	int cm_ours = cm && strcmp(cm, r->cm) == 0;
	int ours = cm_ours && h && strcmp(h, r->base) == 0;
	if (cm_ours && h)
		snprintf(host, hostsz, "%s", h);
	snprintf(id, idsz, "%s", sid && fb_ofmf_state_value_ok(sid, FB_OFMF_CONTEXT_MAX) ? sid : "");
	if (ours && id[0] &&
	    fb_ofmf_origins_learn(&r->og,
				  json_object_get(json_object_get(j, "Links"), "ResourcesAccessed"),
				  r->fabric))
		r->head_tries = r->head_failed = 0;
	json_decref(j);
	return ours && id[0];
}

static int take_members(struct fb_ofmf_reg *r, const char *body, size_t len)
{
	json_t *j = body ? json_loadb(body, len, 0, NULL) : NULL;
	json_t *m = json_object_get(j, "Members");
	size_t n = json_array_size(m);
	free_members(r);
	r->members = n ? calloc(n, sizeof(char *)) : NULL;
	for (size_t i = 0; r->members && i < n; i++) {
		const char *id = json_string_value(json_object_get(json_array_get(m, i), "@odata.id"));
		if (id && strncmp(id, FB_OFMF_SOURCES "/", sizeof(FB_OFMF_SOURCES)) == 0 &&
		    fb_ofmf_state_value_ok(id, FB_OFMF_URL_MAX) && (r->members[r->n_members] = strdup(id)))
			r->n_members++;
	}
	json_decref(j);
	return j ? 0 : -1;
}

static void conflict(struct fb_ofmf_reg *r, uint64_t now)
{
	r->st_.conflicts++;
	snprintf(r->err, sizeof(r->err),
		 "the core refused our discovery (409: it already holds ConnectionMethod %s%s%s) and "
		 "lists no AggregationSource of ours: give each broker its own "
		 "OfmfConnectionMethodId, or restart the core",
		 r->cm, r->taken_by[0] ? ", registered by " : "", r->taken_by);
	fb_log_err("ofmf: %s; retrying in %llu s", r->err,
		   (unsigned long long)(r->o.conflict_ns / 1000000000ull));
	free_members(r);
	go(r, FB_OFMF_ST_CONFLICT, now + r->o.conflict_ns);
}

static void unreachable(struct fb_ofmf_reg *r, uint64_t now, int status, const char *what,
			enum fb_ofmf_state_id then)
{
	r->st_.request_failures++;
	if (status < 0)
		snprintf(r->err, sizeof(r->err), "%s: no reply from the core (%s)", what,
			 strerror(-status));
	else
		snprintf(r->err, sizeof(r->err), "%s: the core answered %d", what, status);
	backoff(r, now, then);
	fb_log_warn("ofmf: %s; retrying in %.1f s", r->err, (double)r->backoff / 1e9);
}

/* ---- results ------------------------------------------------------------ */

static void done_discover(struct fb_ofmf_reg *r, uint64_t now, int status)
{
	if (status == 200 && r->patched) {
		r->st_.registrations++;
		registered(r, now, r->context, "new registration");
	} else if (status == 200) {
		r->wait_until = now + r->o.context_wait_ns;
		go(r, FB_OFMF_ST_AWAIT_CONTEXT, UINT64_MAX);
	} else if (status == 409) {
		r->taken_by[0] = '\0';
		go(r, FB_OFMF_ST_ADOPT_LIST, now);
	} else if (r->patched) {
		/* The core made a source and gave it to us, then failed: is it there? */
		go(r, FB_OFMF_ST_CHECK, now);
	} else {
		/* 500: the core could not GET our ConnectionMethod (our HTTP not up?) */
		unreachable(r, now, status, "registering (AggregationSourceDiscovered)",
			    FB_OFMF_ST_DISCOVER);
	}
}

static void done_source(struct fb_ofmf_reg *r, uint64_t now, int status, const char *body,
			size_t len)
{
	char id[FB_OFMF_CONTEXT_MAX], host[FB_OFMF_URL_MAX] = "";
	int ours = status == 200 && source_is_ours(r, body, len, id, sizeof(id), host, sizeof(host));
	if (r->st == FB_OFMF_ST_ADOPT_MEMBER) {
		if (ours) {
			r->st_.adoptions++;
			registered(r, now, id, "found on the core after a 409");
			return;
		}
		if (host[0])
			snprintf(r->taken_by, sizeof(r->taken_by), "%s", host);
		if (status != 200 && status != 404) {
			unreachable(r, now, status, "reading the core's AggregationSources",
				    FB_OFMF_ST_ADOPT_LIST);
			return;
		}
		if (++r->member == r->n_members)
			conflict(r, now);
		else
			go(r, FB_OFMF_ST_ADOPT_MEMBER, now);
		return;
	}
	/* CHECK or REGISTERED: is the source named by our Context still ours? */
	if (ours && strcmp(id, r->context) == 0) {
		if (r->st == FB_OFMF_ST_CHECK) {
			r->st_.resumed++;
			registered(r, now, r->context, "the core still knew us");
			return;
		}
		r->backoff = 0;
		r->check_due = now + r->o.check_ns;
		if (r->refused_phase == REF_CHECK_SENT)
			r->refused_phase = REF_CHECKED;
		if (r->head_failed && r->og.n && ++r->head_tries >= ANNOUNCE_TRIES) {
			fb_log_warn("ofmf: the core keeps refusing ResourceCreated for %s (it could "
				    "not read it from us?); dropped",
				    r->og.q[0].path);
			r->st_.announce_dropped++;
			if (strcmp(r->og.q[0].path, r->fabric) == 0)
				go_live(r);
			queue_pop(r);
		} else if (r->head_failed && r->og.n) {
			/* The core is alive and refused it: maybe our tree did not show
			 * it yet. Try again a little later. */
			r->og.q[0].due = now + (r->o.retry_min_ns << (r->head_tries - 1));
		}
		r->head_failed = 0;
		go(r, FB_OFMF_ST_REGISTERED, now);
	} else if (status == 404 || (status == 200 && !ours)) {
		forgotten(r, now, status == 404 ? "404" : "it names another agent");
	} else {
		unreachable(r, now, status, "checking our AggregationSource", r->st);
		if (r->st == FB_OFMF_ST_REGISTERED)
			r->check_due = r->due;
	}
}

static void done_announce(struct fb_ofmf_reg *r, uint64_t now, int status)
{
	if (status == 200) {
		r->st_.announced++;
		if (strcmp(r->og.q[0].path, r->fabric) == 0) {
			r->check_due = now; /* learn what its crawl reached */
			go_live(r);
		}
		queue_pop(r);
		if (r->overflow && queue_push(r, r->fabric, 0, now) == 0)
			r->overflow = 0;
	} else if (status == 400) {
		/* "Cannot find aggregation source": our Context means nothing to it. */
		r->check_due = now;
	} else if (status < 0) {
		/* Down, or it refused the origin by closing (what the reference core
		 * does when a GET of it fails): a check tells which. */
		r->head_failed = 1;
		r->st_.request_failures++;
		r->check_due = now;
	} else {
		fb_log_warn("ofmf: the core answered %d to ResourceCreated for %s; dropped", status,
			    r->og.q[0].path);
		r->st_.announce_dropped++;
		if (strcmp(r->og.q[0].path, r->fabric) == 0)
			go_live(r); /* what it could crawl, it holds */
		queue_pop(r);
	}
	go(r, FB_OFMF_ST_REGISTERED, now);
}

void fb_ofmf_reg_done(struct fb_ofmf_reg *r, uint64_t now, int status, const char *body, size_t len)
{
	if (!r->in_flight)
		return;
	r->in_flight = 0;
	if (r->flight_stale) {
		r->flight_stale = 0;
		return;
	}
	switch (r->flight) {
	case FB_OFMF_DISCOVER: done_discover(r, now, status); break;
	case FB_OFMF_LIST_SOURCES:
		if (status != 200 || take_members(r, body, len) != 0)
			unreachable(r, now, status, "listing the core's AggregationSources",
				    FB_OFMF_ST_ADOPT_LIST);
		else if (r->n_members)
			go(r, FB_OFMF_ST_ADOPT_MEMBER, now);
		else
			conflict(r, now);
		break;
	case FB_OFMF_GET_SOURCE: done_source(r, now, status, body, len); break;
	case FB_OFMF_ANNOUNCE: done_announce(r, now, status); break;
	default: break;
	}
}

/* ---- other inputs ------------------------------------------------------- */

void fb_ofmf_reg_context_patched(struct fb_ofmf_reg *r, uint64_t now, const char *context)
{
	if (!fb_ofmf_state_value_ok(context, FB_OFMF_CONTEXT_MAX) || !context[0]) {
		fb_log_warn("ofmf: ignored a SunfishServer Context that is empty or not printable");
		return;
	}
	if (r->st == FB_OFMF_ST_DISCOVER && r->in_flight) {
		/* Inside our POST: saved now (a crash before the 200 must not lose
		 * it), used once the 200 completes the registration. */
		set_context(r, context);
		r->want_set = 0;
		r->patched = 1;
	} else if (r->st == FB_OFMF_ST_AWAIT_CONTEXT) {
		r->st_.registrations++;
		registered(r, now, context, "new registration");
	} else if (strcmp(context, r->context) != 0) {
		set_context(r, context);
		go(r, FB_OFMF_ST_CHECK, now); /* not asked for: believe the core, not the PATCH */
	}
}

void fb_ofmf_reg_origin(struct fb_ofmf_reg *r, uint64_t now, const char *path)
{
	if (fb_ofmf_origins_known(&r->og, path) || strlen(path) >= FB_OFMF_URL_MAX)
		return;
	if (queue_push(r, path, 0, now + r->o.announce_delay_ns)) {
		/* Too many at once: a crawl of the whole fabric, once the queue has
		 * room, covers what its tree links; the rest comes back with its
		 * next event (it is not remembered as known). */
		r->overflow = 1;
		return;
	}
	(void)fb_ofmf_origins_remember(&r->og, path); /* ENOMEM: again at its next event */
}

/* A refused event: its origin goes to the front of the queue (the core
 * may not have crawled it yet: our tree shows a new resource within the
 * announce delay), unless it waits there already. */
static void refused_first(struct fb_ofmf_reg *r, uint64_t now, uint64_t event_id, const char *origin)
{
	r->refused_id = event_id;
	r->refused_since = now;
	r->refused_n = 0;
	snprintf(r->refused_origin, sizeof(r->refused_origin), "%s", origin);
	r->refused_phase = REF_CHECK_DUE;
	r->check_due = now;
	if (origin[0] && strlen(origin) < FB_OFMF_URL_MAX &&
	    !fb_ofmf_origins_queued(&r->og, origin) &&
	    queue_push(r, origin, 1, now + r->o.announce_delay_ns) == 0)
		(void)fb_ofmf_origins_remember(&r->og, origin);
}

int fb_ofmf_reg_delivery_failed(struct fb_ofmf_reg *r, uint64_t now, uint64_t event_id,
				const char *origin, int refused)
{
	uint64_t soon = now + r->o.retry_min_ns;
	if (r->st == FB_OFMF_ST_REGISTERED && r->check_due > soon)
		r->check_due = soon;
	if (!refused || !event_id || r->st != FB_OFMF_ST_REGISTERED || !r->live)
		return 0; /* down, or not (yet) delivering: the registration copes */
	if (!origin)
		origin = "";
	if (event_id != r->refused_id) {
		refused_first(r, now, event_id, origin);
		return 0;
	}
	uint64_t min = r->o.refuse_min_ns ? r->o.refuse_min_ns : 10000000000ull;
	if (++r->refused_n < 2 || now - r->refused_since < min ||
	    r->refused_phase != REF_CHECKED || fb_ofmf_origins_queued(&r->og, r->refused_origin))
		return 0; /* not announced yet, not checked since, or not for long enough */
	r->st_.undeliverable++;
	fb_log_warn("ofmf: the core keeps refusing EventId %llu (OriginOfCondition %s) although it "
		    "knows us and was sent ResourceCreated for it; dropped, the next events follow",
		    (unsigned long long)event_id, r->refused_origin[0] ? r->refused_origin : "none");
	r->refused_id = 0;
	r->refused_phase = REF_NONE;
	return 1;
}

enum fb_ofmf_state_id fb_ofmf_reg_state(const struct fb_ofmf_reg *r) { return r->st; }
const char *fb_ofmf_reg_context(const struct fb_ofmf_reg *r) { return r->context; }
const char *fb_ofmf_reg_last_error(const struct fb_ofmf_reg *r) { return r->err; }
void fb_ofmf_reg_get_stats(const struct fb_ofmf_reg *r, struct fb_ofmf_reg_stats *out) { *out = r->st_; }

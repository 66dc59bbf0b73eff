/* ib_worker.c - the MAD thread, its schedule, and the queue to the loop. */
#include "ib_worker.h"

#include "fb_event_json.h"
#include "fb_log.h"
#include "fb_metrics.h"
#include "ib_discover.h"
#include "ib_mad.h"
#include "ib_poll.h"
#include "fb_map_get.h"
#include "ib_resync.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUEUE_CAP 4096
#define QUEUE_WAIT_MS 1000
#define DRAIN_BATCH 64

struct ib_worker {
	const struct ib_worker_cfg *cfg;
	pthread_t thread;
	int started;
	_Atomic int stop;
	_Atomic int resync_req;    /* ib_worker_resync() */

	pthread_mutex_t mu;
	pthread_cond_t cond;       /* room in the ring, or stop */
	struct fb_event *ring;
	size_t head, count;
	uint64_t dropped;
	int fatal;

	struct event *wake;
	ib_worker_deliver_fn deliver;
	ib_worker_fatal_fn on_fatal;
	void *arg;
};

static void add_ms(struct timespec *ts, unsigned ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static int ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static double ms_between(const struct timespec *t0, const struct timespec *t1)
{
	return (double)(t1->tv_sec - t0->tv_sec) * 1e3 + (double)(t1->tv_nsec - t0->tv_nsec) / 1e6;
}

/* MAD thread: queue one event, waiting a bounded time for room. */
static void push(void *arg, const struct fb_event *ev)
{
	struct ib_worker *w = arg;
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	add_ms(&until, QUEUE_WAIT_MS);
	pthread_mutex_lock(&w->mu);
	while (w->count == QUEUE_CAP && !atomic_load(&w->stop))
		if (pthread_cond_timedwait(&w->cond, &w->mu, &until) == ETIMEDOUT)
			break;
	int ok = w->count < QUEUE_CAP;
	if (ok)
		w->ring[(w->head + w->count++) % QUEUE_CAP] = *ev;
	else
		w->dropped++;
	pthread_mutex_unlock(&w->mu);
	if (ok)
		event_active(w->wake, 0, 0);
	else
		fb_log_warn("event queue to the broker session full for %d ms: dropped a %s "
			    "event for switch '%s' port %u", QUEUE_WAIT_MS, fb_kind_name(ev->kind),
			    ev->subj.switch_name, ev->subj.port);
}

/* Loop thread: hand queued events to the owner in small batches, so the
 * lock is never held across a session call. */
static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ib_worker *w = arg;
	struct fb_event batch[DRAIN_BATCH];
	for (;;) {
		size_t n = 0;
		pthread_mutex_lock(&w->mu);
		while (n < DRAIN_BATCH && w->count) {
			batch[n++] = w->ring[w->head];
			w->head = (w->head + 1) % QUEUE_CAP;
			w->count--;
		}
		int fatal = w->fatal;
		w->fatal = 0;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->mu);
		for (size_t i = 0; i < n; i++)
			w->deliver(w->arg, &batch[i]);
		if (fatal && w->on_fatal)
			w->on_fatal(w->arg);
		if (n < DRAIN_BATCH)
			return;
	}
}

/* Sleep until *next (CLOCK_MONOTONIC) or stop. */
static void sleep_until(struct ib_worker *w, const struct timespec *next)
{
	pthread_mutex_lock(&w->mu);
	while (!atomic_load(&w->stop))
		if (pthread_cond_timedwait(&w->cond, &w->mu, next) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&w->mu);
}

static int open_and_discover(const struct ib_worker_cfg *cfg, struct ib_mad **mad,
			     struct ib_topo *topo)
{
	int rc = ib_mad_open(cfg->ca, cfg->ca_port, cfg->timeout_ms, cfg->retries, mad);
	if (rc)
		return rc;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = ib_discover(*mad, topo);
	if (rc)
		return rc;
	size_t n = ib_topo_assign(topo, cfg->switches, cfg->shard_i, cfg->shard_n);
	fb_log_info("discovered %zu switches in %.1f ms; %zu assigned to this agent (--switches "
		    "%s, --shard %u/%u)", topo->n, ms_since(&t0), n, cfg->switches, cfg->shard_i,
		    cfg->shard_n);
	for (size_t i = 0; i < topo->n; i++) {
		char route[4 * IB_DR_MAX_HOPS + 2];
		ib_dr_format(&topo->sw[i].dr, route, sizeof(route));
		fb_log_debug("switch '%s' GUID 0x%016" PRIx64 " ports %u route %s%s",
			     topo->sw[i].desc, topo->sw[i].guid, topo->sw[i].nports, route,
			     topo->sw[i].assigned ? " (assigned)" : "");
	}
	return 0;
}

static void poll_all(struct ib_poll_ctx *c)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int mads = 0;
	for (size_t i = 0; i < c->topo->n && !(c->stop && atomic_load(c->stop)); i++)
		if (c->topo->sw[i].assigned)
			mads += ib_poll_switch(c, &c->topo->sw[i]);
	fb_log_debug("poll: %d PortInfo answers in %.2f ms", mads, ms_since(&t0));
}

/* ---- resync against the broker's map (ib_resync.h) ---- */

#define RESYNC_HTTP_MS 1000      /* one GET /fabric/map, on this thread */
#define RESYNC_GIVE_UP_MS 60000  /* then report without it */

#define REDISCOVER_POLLS 10     /* look for switches found gone this often */
/* The map is rendered at most every 100 ms (big ones more rarely), so the
 * first one read may not show yet what our previous run reported just
 * before it died; a second pass this much later does. */
#define RESYNC_AGAIN_MS 1000

struct resync {
	int pending, topology;     /* a resync to do; topology events wait for it */
	int passes;                /* diffs still to do: 2, then 1 */
	struct timespec not_before;/* of the next pass */
	int logged;                /* the first failure was logged */
	struct timespec give_up;
	struct ib_gone gone;       /* ours in the map, not found by discovery */
	unsigned polls;
};

/* A resync begins: what goes out live from now on is newer than any map. */
static void clear_live(struct ib_topo *t)
{
	for (size_t i = 0; i < t->n; i++) {
		t->sw[i].live = 0;
		for (unsigned p = 0; p <= t->sw[i].nports; p++)
			t->sw[i].ports[p].live = 0;
	}
}

static void resync_want(struct resync *r, struct ib_topo *t, int topology)
{
	clear_live(t);
	r->pending = 1;
	r->passes = 2;
	r->topology |= topology;
	r->logged = 0;
	clock_gettime(CLOCK_MONOTONIC, &r->give_up);
	r->not_before = r->give_up; /* now */
	add_ms(&r->give_up, RESYNC_GIVE_UP_MS);
}

/* all: every assigned switch (at start); else those adopted since. */
static void emit_topology(struct ib_poll_ctx *c, int all)
{
	for (size_t i = 0; i < c->topo->n; i++) {
		struct ib_switch *sw = &c->topo->sw[i];
		if (sw->assigned && (all || sw->announce))
			ib_poll_topology(c, sw);
		sw->announce = 0;
	}
}

/* A switch that failed while we were away is not in our topology, so no
 * poll sees it come back: discover again now and then, adopt it when it
 * answers, and resync (the map still says unreachable: switch_reachable,
 * and its ports' differences). */
static void rediscover(struct resync *r, struct ib_poll_ctx *c)
{
	if (!r->gone.n || ++r->polls % REDISCOVER_POLLS != 0)
		return;
	struct ib_topo found = { 0 };
	size_t adopted = 0;
	if (ib_discover(c->mad, &found) == 0) {
		for (size_t i = r->gone.n; i-- > 0;) {
			uint64_t guid = r->gone.guid[i];
			if (ib_topo_adopt(c->topo, &found, guid) != 0)
				continue;
			for (size_t k = 0; k < c->topo->n; k++)
				if (c->topo->sw[k].guid == guid) {
					c->topo->sw[k].announce = 1;
					fb_log_info("switch '%s' (GUID 0x%016" PRIx64 ") answers again: "
						    "polling it", c->topo->sw[k].desc, guid);
				}
			ib_gone_remove(&r->gone, i);
			adopted++;
		}
	}
	ib_topo_free(&found);
	if (adopted)
		resync_want(r, c->topo, 0);
}

/* Diff against the map before the topology events (their PortState would
 * move the map's LinkState without the link event a consumer acts on). */
static void resync_try(struct resync *r, struct ib_poll_ctx *c, const struct ib_worker_cfg *cfg)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!r->pending || ts_before(&now, &r->not_before))
		return;
	json_t *map = NULL;
	char err[320];
	int rc = cfg->map_host ? fb_map_get(cfg->map_client, cfg->map_host, cfg->map_port,
					    "/fabric/map", RESYNC_HTTP_MS, &map, err, sizeof(err))
			       : 1;
	if (rc < 0) {
		int give_up = !ts_before(&now, &r->give_up);
		if (!r->logged || give_up)
			fb_log_warn("resync: %s; %s", err,
				    give_up ? "giving up: changes made while this agent was away may "
					      "stay unreported (is fabricbusd's HttpListen at --map?)"
					    : "retrying at every poll");
		r->logged = 1;
		if (!give_up)
			return;
	} else if (rc == 0) {
		size_t n = ib_resync_diff(c, map, cfg->agent_id, &r->gone);
		fb_log_info("resync%s: %zu difference%s against the broker's map (LastEventId %"
			    JSON_INTEGER_FORMAT ")", r->passes == 1 ? " (second pass)" : "", n,
			    n == 1 ? "" : "s", json_integer_value(json_object_get(map, "LastEventId")));
		json_decref(map);
		/* The topology events wait for the last pass: their PortState and
		 * "the switch answered" would move the map the second pass reads,
		 * without the link or switch event a consumer acts on. */
		if (--r->passes > 0) {
			r->not_before = now;
			add_ms(&r->not_before, RESYNC_AGAIN_MS);
			return;
		}
	} else if (cfg->map_host) {
		fb_log_warn("resync: the broker has no GET /fabric/map (HTTP 404); not resyncing");
	}
	r->pending = 0;
	emit_topology(c, r->topology);
	r->topology = 0;
}

static void counters_all(struct ib_poll_ctx *c)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int mads = 0;
	for (size_t i = 0; i < c->topo->n && !(c->stop && atomic_load(c->stop)); i++)
		if (c->topo->sw[i].assigned)
			mads += ib_counters_switch(c, &c->topo->sw[i]);
	fb_log_debug("counters: %d PerfMgt answers in %.2f ms", mads, ms_since(&t0));
}

/* ---- SA traps: Reports are triggers for an immediate poll, never the truth ---- */

/* Re-read the local PortInfo's SM LID every TRAP_CHECK_POLLS polls and
 * re-subscribe when it changed or the last attempt failed; re-subscribe anyway
 * every TRAP_REFRESH_CHECKS checks (an SM restarted at the same LID has
 * forgotten us; a repeated Set of the same InformInfo is harmless). */
#define TRAP_CHECK_POLLS 25
#define TRAP_REFRESH_CHECKS 10
#define TRAP_DRAIN_MAX 64

static const uint16_t trap_nums[] = { 64, 65, 128 };

struct traps {
	uint16_t sm_lid;           /* where we are subscribed, 0: not subscribed */
	unsigned polls, checks;
	int no_sm_logged, fail_logged;
	uint64_t reports, triggered;
};

static void traps_check(struct traps *t, struct ib_mad *mad, int force)
{
	uint16_t lid = 0, sm_lid = 0;
	if (ib_mad_local_sm(mad, &lid, &sm_lid) != 0) {
		fb_log_debug("traps: cannot read the local PortInfo; retrying later");
		return;
	}
	if (!sm_lid || !lid) {
		if (!t->no_sm_logged)
			fb_log_info("no subnet manager (local port LID %u, SM LID %u): not "
				    "subscribing to SA traps; polling only", lid, sm_lid);
		t->no_sm_logged = 1;
		t->sm_lid = 0;
		return;
	}
	t->no_sm_logged = 0;
	int refresh = ++t->checks % TRAP_REFRESH_CHECKS == 0;
	if (!force && !refresh && sm_lid == t->sm_lid)
		return;
	for (size_t i = 0; i < sizeof(trap_nums) / sizeof(trap_nums[0]); i++) {
		unsigned status = 0;
		int rc = ib_mad_sa_inform(mad, sm_lid, trap_nums[i], 1, &status);
		if (rc) {
			/* Once per outage: opensm -o leaves the SM LID set but no SA. */
			fb_log(t->fail_logged ? FB_LOG_DEBUG : FB_LOG_WARN,
			       "SA InformInfo Set (trap %u) at SM LID %u %s; polling only, "
			       "retrying in %u polls", trap_nums[i], sm_lid,
			       rc == -ETIMEDOUT ? "got no answer" : "was refused", TRAP_CHECK_POLLS);
			if (rc == -EPROTO)
				fb_log_debug("SA MAD status 0x%04x", status);
			t->sm_lid = 0;
			t->fail_logged = 1;
			return;
		}
	}
	t->fail_logged = 0;
	if (sm_lid != t->sm_lid)
		fb_log_info("subscribed to SA traps 64,65,128 at SM LID %u", sm_lid);
	else
		fb_log_debug("refreshed the SA trap subscription at SM LID %u", sm_lid);
	t->sm_lid = sm_lid;
}

/* Between polls: answer waiting Reports and poll what they point at. */
static void traps_drain(struct traps *t, struct ib_poll_ctx *c)
{
	struct ib_report r;
	for (int n = 0; n < TRAP_DRAIN_MAX && ib_mad_recv_report(c->mad, &r) == 1; n++) {
		t->reports++;
		int hit = 0;
		for (size_t i = 0; r.generic && r.trap == 128 && r.issuer_lid && i < c->topo->n; i++)
			if (c->topo->sw[i].assigned && c->topo->sw[i].ctr.lid == r.issuer_lid) {
				ib_poll_switch(c, &c->topo->sw[i]);
				hit = 1;
			}
		if (!hit)
			for (size_t i = 0; i < c->topo->n && !atomic_load(c->stop); i++)
				if (c->topo->sw[i].assigned)
					ib_poll_switch(c, &c->topo->sw[i]);
		t->triggered++;
		fb_log_debug("SA Report: trap %u from LID %u: polled %s (%" PRIu64 " reports, %"
			     PRIu64 " triggered polls)", r.trap, r.issuer_lid,
			     hit ? "the issuing switch" : "all assigned switches", t->reports,
			     t->triggered);
	}
}

/* Ticks stay on a fixed grid; a round longer than its period starts the next
 * one at once instead of a burst of catch-up rounds. */
static void advance(struct timespec *next, unsigned ms, const char *what, size_t n)
{
	add_ms(next, ms);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ts_before(next, &now)) {
		fb_log_warn("%s of %zu switches took longer than its period of %u ms", what, n, ms);
		*next = now;
	}
}

static void *run(void *arg)
{
	struct ib_worker *w = arg;
	const struct ib_worker_cfg *cfg = w->cfg;
	struct ib_mad *mad = NULL;
	struct ib_topo topo = { 0 };
	struct timespec next;

	/* Retry discovery: at boot the local link may not be up yet. */
	int rc;
	while ((rc = open_and_discover(cfg, &mad, &topo)) != 0 && !atomic_load(&w->stop)) {
		if (rc == -ENODEV) {
			pthread_mutex_lock(&w->mu);
			w->fatal = 1;
			pthread_mutex_unlock(&w->mu);
			event_active(w->wake, 0, 0);
			return NULL;
		}
		ib_topo_free(&topo);
		ib_mad_close(mad);
		mad = NULL;
		fb_log_warn("discovery found nothing to watch; retrying in 5 s");
		clock_gettime(CLOCK_MONOTONIC, &next);
		add_ms(&next, 5000);
		sleep_until(w, &next);
	}
	struct ib_poll_ctx c = { mad, &topo, cfg->fabric, cfg->unreachable_after, push, w,
				 &w->stop, &cfg->ctr, &cfg->flap };
	struct resync rs = { 0 };
	if (rc == 0) {
		resync_want(&rs, &topo, 1);
		resync_try(&rs, &c, cfg);
	}
	int counters = cfg->ctr.interval_ms > 0;
	if (rc == 0 && counters)
		counters_all(&c); /* the baseline: the first round then has deltas */
	struct traps traps = { 0 };
	if (rc == 0 && cfg->traps)
		traps_check(&traps, mad, 1);
	struct timespec next_ctr;
	clock_gettime(CLOCK_MONOTONIC, &next);
	next_ctr = next;
	add_ms(&next, cfg->interval_ms);
	add_ms(&next_ctr, counters ? cfg->ctr.interval_ms : 0);
	while (rc == 0 && !atomic_load(&w->stop)) {
		sleep_until(w, counters && ts_before(&next_ctr, &next) ? &next_ctr : &next);
		if (atomic_load(&w->stop))
			break;
		if (cfg->traps && traps.sm_lid)
			traps_drain(&traps, &c);
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!ts_before(&now, &next)) {
			poll_all(&c);
			fb_metric_observe(cfg->poll_seconds, ms_since(&now) / 1e3);
			if (atomic_exchange(&w->resync_req, 0))
				resync_want(&rs, &topo, 0);
			rediscover(&rs, &c);
			resync_try(&rs, &c, cfg);
			advance(&next, cfg->interval_ms, "a PortInfo poll", topo.n);
			if (cfg->traps && ++traps.polls % TRAP_CHECK_POLLS == 0)
				traps_check(&traps, mad, 0);
		}
		if (counters && !ts_before(&now, &next_ctr)) {
			counters_all(&c);
			advance(&next_ctr, cfg->ctr.interval_ms, "a counters round", topo.n);
		}
	}
	ib_gone_free(&rs.gone);
	ib_topo_free(&topo);
	ib_mad_close(mad);
	return NULL;
}

int ib_worker_start(struct event_base *base, const struct ib_worker_cfg *cfg,
		    ib_worker_deliver_fn deliver, ib_worker_fatal_fn fatal, void *arg,
		    struct ib_worker **out)
{
	struct ib_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = cfg;
	w->deliver = deliver;
	w->on_fatal = fatal;
	w->arg = arg;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	w->ring = malloc(QUEUE_CAP * sizeof(*w->ring));
	w->wake = event_new(base, -1, 0, wake_cb, w);
	int rc = !w->ring || !w->wake ? -ENOMEM : -pthread_create(&w->thread, NULL, run, w);
	if (rc) {
		ib_worker_free(w);
		return rc;
	}
	w->started = 1;
	*out = w;
	return 0;
}

void ib_worker_stop(struct ib_worker *w)
{
	if (!w || !w->started)
		return;
	atomic_store(&w->stop, 1);
	pthread_mutex_lock(&w->mu);
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	w->started = 0;
	wake_cb(-1, 0, w);
}

uint64_t ib_worker_dropped(struct ib_worker *w)
{
	pthread_mutex_lock(&w->mu);
	uint64_t n = w->dropped;
	pthread_mutex_unlock(&w->mu);
	return n;
}

void ib_worker_resync(struct ib_worker *w)
{
	if (w)
		atomic_store(&w->resync_req, 1);
}

void ib_worker_free(struct ib_worker *w)
{
	if (!w)
		return;
	ib_worker_stop(w);
	if (w->wake)
		event_free(w->wake);
	free(w->ring);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

/* ---- --once ---------------------------------------------------------------- */

struct once_out {
	const char *agent_id;
	FILE *out;
	int failed;
};

static void print_json(void *arg, const struct fb_event *ev)
{
	struct once_out *o = arg;
	struct fb_event e = *ev;
	snprintf(e.agent_id, sizeof(e.agent_id), "%s", o->agent_id);
	json_t *j = fb_event_to_json(&e);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (!s || fprintf(o->out, "%s\n", s) < 0)
		o->failed = 1;
	free(s);
	json_decref(j);
}

int ib_worker_once(const struct ib_worker_cfg *cfg, const char *agent_id, FILE *out)
{
	struct ib_mad *mad = NULL;
	struct ib_topo topo = { 0 };
	struct once_out o = { agent_id, out, 0 };
	int rc = open_and_discover(cfg, &mad, &topo);
	if (rc == 0) {
		/* The poll refreshes the states discovery saw; changes print too. */
		struct ib_poll_ctx c = { mad, &topo, cfg->fabric, cfg->unreachable_after,
					 print_json, &o, NULL, &cfg->ctr, NULL };
		poll_all(&c);
		for (size_t i = 0; i < topo.n; i++)
			if (topo.sw[i].assigned)
				ib_poll_topology(&c, &topo.sw[i]);
	}
	ib_topo_free(&topo);
	ib_mad_close(mad);
	if (fflush(out) != 0)
		o.failed = 1;
	if (o.failed)
		fb_log_err("--once: cannot write the topology to stdout");
	return rc || o.failed ? 1 : 0;
}

/* ---- --measure -------------------------------------------------------------- */

static void discard(void *arg, const struct fb_event *ev)
{
	(void)arg;
	(void)ev;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double pctl(const double *v, unsigned n, unsigned p)
{
	unsigned k = (unsigned)(((unsigned long long)p * n + 99) / 100);
	return v[k ? k - 1 : 0];
}

int ib_worker_measure(const struct ib_worker_cfg *cfg, unsigned n, FILE *out)
{
	struct ib_mad *mad = NULL;
	struct ib_topo topo = { 0 };
	double *all = calloc(n, sizeof(*all)), *pi = calloc(n, sizeof(*pi)),
	       *ctr = calloc(n, sizeof(*ctr));
	int rc = !all || !pi || !ctr ? -ENOMEM : open_and_discover(cfg, &mad, &topo);
	if (rc == 0) {
		struct ib_poll_ctx c = { mad, &topo, cfg->fabric, cfg->unreachable_after,
					 discard, NULL, NULL, &cfg->ctr, NULL };
		int counters = cfg->ctr.interval_ms > 0;
		size_t nsw = 0, nports = 0;
		for (size_t i = 0; i < topo.n; i++)
			if (topo.sw[i].assigned) {
				nsw++;
				nports += topo.sw[i].nports;
			}
		long mads_pi = 0, mads_ctr = 0;
		for (unsigned r = 0; r <= n; r++) { /* round 0: warm-up (LIDs, capmasks) */
			struct timespec t0, t1, t2;
			int a = 0, b = 0;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			for (size_t i = 0; i < topo.n; i++)
				if (topo.sw[i].assigned)
					a += ib_poll_switch(&c, &topo.sw[i]);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			for (size_t i = 0; counters && i < topo.n; i++)
				if (topo.sw[i].assigned)
					b += ib_counters_switch(&c, &topo.sw[i]);
			clock_gettime(CLOCK_MONOTONIC, &t2);
			if (r == 0)
				continue;
			pi[r - 1] = ms_between(&t0, &t1);
			ctr[r - 1] = ms_between(&t1, &t2);
			all[r - 1] = pi[r - 1] + ctr[r - 1];
			mads_pi += a;
			mads_ctr += b;
		}
		qsort(all, n, sizeof(*all), cmp_double);
		qsort(pi, n, sizeof(*pi), cmp_double);
		qsort(ctr, n, sizeof(*ctr), cmp_double);
		fprintf(out, "switches: %zu\nports: %zu\npolls: %u\n", nsw, nports, n);
		fprintf(out, "portinfo_answers_per_poll: %.1f MADs\n", (double)mads_pi / n);
		fprintf(out, "counters_answers_per_poll: %.1f MADs\n", (double)mads_ctr / n);
		fprintf(out, "portinfo_ms_median: %.3f ms\n", pctl(pi, n, 50));
		fprintf(out, "counters_ms_median: %.3f ms\n", pctl(ctr, n, 50));
		fprintf(out, "poll_ms_min: %.3f ms\n", all[0]);
		fprintf(out, "poll_ms_median: %.3f ms\n", pctl(all, n, 50));
		fprintf(out, "poll_ms_p99: %.3f ms\n", pctl(all, n, 99));
		fprintf(out, "poll_ms_max: %.3f ms\n", all[n - 1]);
		if (fflush(out) != 0)
			rc = 1;
	}
	free(all);
	free(pi);
	free(ctr);
	ib_topo_free(&topo);
	ib_mad_close(mad);
	return rc ? 1 : 0;
}

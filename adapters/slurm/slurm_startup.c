/* slurm_startup.c - the start-up phases: reconcile with Slurm, seed from the
 * broker's map, then start the event source (slurm_source.h). */
#include "slurm_adapter.h"

#include "fb_http.h"
#include "fb_log.h"
#include "slurm_source.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAP_TIMEOUT_MS 3000
#define MAP_MAX_BYTES (64u << 20)
#define MAP_ABSENT 1 /* the broker has no /fabric/map (older broker) */

/* Names for the start-up summary: "node001 node002 (+3 more)". */
struct namelist {
	char text[512];
	size_t n;
};

static void namelist_add(struct namelist *l, const char *name)
{
	size_t off = strlen(l->text);
	if (l->n++ < 16 && off + strlen(name) + 2 < sizeof(l->text))
		snprintf(l->text + off, sizeof(l->text) - off, "%s%s", off ? " " : "", name);
}

static const char *namelist_str(struct namelist *l)
{
	size_t off = strlen(l->text);
	if (l->n > 16)
		snprintf(l->text + off, sizeof(l->text) - off, " (+%zu more)", l->n - 16);
	return l->n ? l->text : "none";
}

/* "(EventId 1234)" at the end of one of our reasons, or 0. */
static uint64_t reason_event_id(const char *reason)
{
	const char *p = strstr(reason, "(EventId ");
	return p ? strtoull(p + 9, NULL, 10) : 0;
}

/* A drain we recorded that Slurm no longer holds is forgotten; a drain with
 * our prefix that we did not record is adopted. */
static void reconcile(struct fbs_adapter *a, const struct fbs_snodes *sn, uint64_t now)
{
	struct namelist forgot, adopted;
	memset(&forgot, 0, sizeof(forgot));
	memset(&adopted, 0, sizeof(adopted));
	for (size_t i = fbs_policy_count(a->pol); i-- > 0;) {
		const struct fbs_node *n = fbs_policy_at(a->pol, i);
		if (n->hold != FBS_H_DRAINED)
			continue; /* in flight: its pending action settles it */
		const struct fbs_snode *s = fbs_snodes_find(sn, n->name);
		int held = n->dry_run ? a->cfg->dry_run
				      : s && s->drained && fbs_policy_reason_is_ours(a->pol, s->reason);
		if (held)
			continue;
		char name[FB_NAME_MAX];
		snprintf(name, sizeof(name), "%s", n->name);
		namelist_add(&forgot, name);
		fb_log_info("forgetting %s: %s", name,
			    n->dry_run ? "drained in a dry run only, and DryRun is now off"
			    : !s	? "slurmctld no longer knows it"
			    : !s->drained ? "no longer drained in Slurm (resumed by an admin?)"
					  : "Slurm holds another reason now");
		fbs_policy_released(a->pol, name, now);
	}
	for (size_t i = 0; i < sn->n; i++) {
		const struct fbs_snode *s = &sn->v[i];
		const struct fbs_node *n = fbs_policy_node(a->pol, s->name);
		if (!s->drained || !fbs_policy_reason_is_ours(a->pol, s->reason) ||
		    (n && n->hold != FBS_H_NONE))
			continue;
		namelist_add(&adopted, s->name);
		fb_log_info("adopting %s: drained with our reason '%s' but not in the state file",
			    s->name, s->reason);
		if (fbs_policy_drained(a->pol, s->name, s->reason, reason_event_id(s->reason),
				       (uint64_t)time(NULL), 0, now))
			fb_log_err("out of memory adopting %s", s->name);
	}
	unsigned limit = fbs_policy_limit(a->pol);
	char lim[32];
	snprintf(lim, sizeof(lim), "%u", limit);
	fb_log_info("reconciled with slurmctld: %zu Slurm nodes, %u held drained or in flight by "
		    "us, cap base %u, cap limit %s; adopted: %s; forgotten: %s", sn->n,
		    fbs_policy_held(a->pol), sn->cap_base,
		    limit == UINT32_MAX ? "none" : lim, namelist_str(&adopted), namelist_str(&forgot));
	if (adopted.n || forgot.n)
		a->dirty = 1;
}

int fbs_map_fetch(struct fbs_adapter *a, int level)
{
	struct fb_http_resp r;
	char err[256];
	const struct fbs_config *c = a->cfg;
	a->map_fetched_ms = fbs_now_ms();
	int rc = fb_http_request_as(&a->http.client, c->broker_host, (uint16_t)c->broker_port, "GET",
				    "/fabric/map", NULL, NULL, 0, MAP_TIMEOUT_MS, MAP_MAX_BYTES, &r, err,
				    sizeof(err));
	if (rc) {
		fb_log(level, "broker map: GET /fabric/map: %s (is fabricbusd's HttpListen at "
		       "%s:%d?)", err, c->broker_host, c->broker_port);
		return -1;
	}
	if (r.status == 404) {
		fb_http_resp_free(&r);
		return MAP_ABSENT;
	}
	if (r.status != 200) {
		fb_log(level, "broker map: GET http://%s:%d/fabric/map: HTTP %d", c->broker_host,
		       c->broker_port, r.status);
		fb_http_resp_free(&r);
		return -1;
	}
	rc = fbs_fabmap_parse((const char *)r.body.data, r.body.len, &a->fabmap, err, sizeof(err));
	fb_http_resp_free(&r);
	if (rc) {
		a->have_map = 0;
		fb_log(level, "broker map: GET http://%s:%d/fabric/map: %s", c->broker_host,
		       c->broker_port, err);
		return -1;
	}
	a->have_map = 1;
	fb_log_debug("broker map: %zu nodes, %zu switches at EventId %" PRIu64, a->fabmap.n_nodes,
		     a->fabmap.n_switches, a->fabmap.last_event_id);
	return 0;
}

/* ---- after an agent's resync ---- */

#define RESYNC_QUIET_MS 1000  /* a resync's events come together; then look */
#define RESYNC_TRIES 10       /* map fetches that may lag the resync's events */

void fbs_resync_note(struct fbs_adapter *a, uint64_t event_id)
{
	if (event_id > a->resync_id)
		a->resync_id = event_id;
	a->resync_tries = 0;
	fbs_arm(a->resync_ev, RESYNC_QUIET_MS); /* re-armed by every resync event */
}

/* A drain must not outlive its cause whatever was missed: compare every
 * condition with the map, as at start. The map must include the resync
 * (LastEventId at or past it), or it would bring back what it corrected. */
void fbs_resync_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fbs_adapter *a = arg;
	if (a->phase != FBS_P_RUNNING || !a->resync_id)
		return;
	int rc = fbs_map_fetch(a, a->resync_tries ? FB_LOG_DEBUG : FB_LOG_WARN);
	if (rc == MAP_ABSENT)
		return;
	if (rc < 0 || a->fabmap.last_event_id < a->resync_id) {
		if (++a->resync_tries < RESYNC_TRIES) {
			fbs_arm(a->resync_ev, a->cfg->retry_ms);
			return;
		}
		fb_log_warn("after an agent's resync (EventId %" PRIu64 "): no map that includes it "
			    "after %u tries; conditions are not compared with the map", a->resync_id,
			    a->resync_tries);
		a->resync_id = 0;
		return;
	}
	int n = fbs_map_seed(a->pol, &a->fabmap, &a->ccfg, fbs_now_ms());
	fb_log_info("after an agent's resync (EventId %" PRIu64 "): map at EventId %" PRIu64 ", %d "
		    "condition%s seeded or cleared from link states", a->resync_id,
		    a->fabmap.last_event_id, n, n == 1 ? "" : "s");
	a->resync_id = 0;
	if (n)
		a->dirty = 1;
	fbs_adapter_kick(a);
}

static int subscribe(struct fbs_adapter *a)
{
	/* Resume after what the state file holds; at a first start, after what
	 * the map was a picture of, or from now when the map names no EventId. */
	if (!a->seen_id && a->have_map)
		a->seen_id = a->fabmap.last_event_id;
	a->src = fbs_source_start(a);
	return a->src ? 0 : -1;
}

/* MAP phase: fetch, seed, subscribe. Retried every RetryInterval. */
static void startup_map(struct fbs_adapter *a, unsigned attempt)
{
	int rc = fbs_map_fetch(a, attempt == 1 ? FB_LOG_WARN : FB_LOG_DEBUG);
	if (rc < 0) {
		if (attempt == 1)
			fb_log_warn("start-up waits for the broker's /fabric/map; retrying every %" PRIu64
				    " ms", a->cfg->retry_ms);
		fbs_arm(a->retry_ev, a->cfg->retry_ms);
		return;
	}
	if (attempt > 1)
		fb_log_info("broker map: fetched after %u attempts", attempt);
	if (rc == MAP_ABSENT) {
		fb_log_warn("broker %s:%d has no /fabric/map: no seeding from link states, and "
			    "switch_unreachable drains only hosts named in events", a->cfg->broker_host,
			    a->cfg->broker_port);
	} else {
		int n = fbs_map_seed(a->pol, &a->fabmap, &a->ccfg, fbs_now_ms());
		fb_log_info("broker map at EventId %" PRIu64 ": %zu nodes, %zu switches; %d "
			    "condition%s seeded or cleared from link states", a->fabmap.last_event_id,
			    a->fabmap.n_nodes, a->fabmap.n_switches, n, n == 1 ? "" : "s");
		if (n)
			a->dirty = 1;
	}
	if (subscribe(a)) {
		event_base_loopbreak(a->base);
		return;
	}
	a->phase = FBS_P_RUNNING;
	a->dirty = 1; /* the first save: LastEventId and what reconcile found */
	fbs_adapter_kick(a);
}

void fbs_startup_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fbs_adapter *a = arg;
	if (a->phase == FBS_P_MAP)
		startup_map(a, ++a->map_attempts);
	else
		fbs_adapter_kick(a); /* a failed save */
}

void fbs_startup_reconciled(struct fbs_adapter *a, const struct fbs_result *r)
{
	if (a->phase != FBS_P_RECONCILE)
		return;
	if (r->cap_partition_missing)
		fb_log_err("CapPartition '%s' is not a Slurm partition: the percentage cap allows "
			   "no drain until it exists", a->cfg->cap_partition);
	fbs_policy_set_cap_base(a->pol, r->cap_base);
	fbs_adapter_slurm_nodes(a, &r->nodes);
	reconcile(a, &r->nodes, fbs_now_ms());
	for (size_t i = 0; i < a->st.n_pending; i++) {
		const struct fbs_batch *b = &a->st.pending[i];
		fb_log_info("resuming pending %s of %zu node%s (batch %" PRIu64 ")",
			    b->action == FBS_A_DRAIN ? "drain" : "undrain", b->n, b->n == 1 ? "" : "s",
			    b->id);
		if (fbs_actuator_submit(a->act, FBS_J_BATCH, b))
			fb_log_err("out of memory resuming batch %" PRIu64, b->id);
	}
	a->phase = FBS_P_MAP;
	a->map_attempts = 1;
	startup_map(a, 1);
}

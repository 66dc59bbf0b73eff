/* slurm_adapter.c - the loop thread: events in, decisions, state file, actions out. */
#include "slurm_adapter.h"
#include "slurm_metrics.h"
#include "slurm_reconcile.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_redfish_parse.h"
#include "slurm_pub.h"
#include "slurm_source.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUTE_MAX 4096         /* nodes one event may concern (hosts of a switch) */
#define IDLE_SAVE_MS 1000      /* LastEventId alone is saved at most this often */

uint64_t fbs_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void fbs_adapter_kick(struct fbs_adapter *a)
{
	if (a->flush_ev && a->phase != FBS_P_STOPPING)
		event_active(a->flush_ev, EV_TIMEOUT, 0);
}

void fbs_adapter_publish(struct fbs_adapter *a, const struct fb_event *ev)
{
	int rc = a->sess ? fb_session_submit(a->sess, ev) : FB_EFULL;
	if (rc == 0) {
		a->published++;
		return;
	}
	if (a->publish_drops++ % 100 == 0)
		fb_log_warn("cannot publish '%s' to %s:%d: %s (%" PRIu64 " dropped so far)", ev->text,
			    a->cfg->agent_host, a->cfg->agent_port,
			    rc == FB_EFULL ? "session buffer full; is fabricbusd up?" : fb_strerror(rc),
			    a->publish_drops);
}

/* ---- events in ---------------------------------------------------------------- */

static const char *op_words(const struct fbs_obs *o)
{
	switch (o->op) {
	case FBS_OP_START: return "condition starts";
	case FBS_OP_CLEAR: return "condition clears";
	case FBS_OP_LINK_DOWN: return o->drains ? "condition starts" : "link down noted";
	default: return "link conditions there clear";
	}
}

/* Keys that name one place in the fabric; "nic:" keys are per node. */
static int key_is_global(const char *key) { return strncmp(key, "nic:", 4) != 0; }

static int listed(const char *name, char (*nodes)[FB_NAME_MAX], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(nodes[i], name) == 0)
			return 1;
	return 0;
}

static int holds(const struct fbs_node *x, const struct fbs_obs *o)
{
	for (size_t k = 0; k < x->n_conds; k++)
		if (x->conds[k].type == o->type && strcmp(x->conds[k].key, o->key) == 0)
			return 1;
	return 0;
}

/* A root cause names the incident's hosts without a path as they are now:
 * the condition ends on a host it no longer names (its path is back), so
 * that host is resumed while the switch is still partly down. */
static int root_cause_replace(struct fbs_adapter *a, const struct fbs_obs *o, char (*nodes)[FB_NAME_MAX],
			      size_t n, uint64_t now)
{
	struct fbs_obs c = *o;
	c.op = FBS_OP_CLEAR;
	int changed = 0;
	for (size_t i = fbs_policy_count(a->pol); i-- > 0;) { /* backwards: gc removes at i */
		const struct fbs_node *x = fbs_policy_at(a->pol, i);
		if (!x || !holds(x, o) || listed(x->name, nodes, n))
			continue;
		char name[FB_NAME_MAX];
		memcpy(name, x->name, sizeof(name));
		changed |= fbs_policy_observe(a->pol, name, &c, now) > 0;
	}
	return changed;
}

static void handle_event(struct fbs_adapter *a, const struct fb_event *ev, uint64_t id)
{
	struct fbs_obs o;
	const char *why;
	if (fbs_classify(ev, id, &a->ccfg, &o, &why) == FBS_OP_NONE) {
		a->ignored++;
		fb_log_debug("EventId %" PRIu64 " %s: ignored: %s", id, fb_kind_name(ev->kind), why);
		return;
	}
	if (!a->route && !(a->route = calloc(ROUTE_MAX, FB_NAME_MAX))) {
		fb_log_err("EventId %" PRIu64 ": out of memory routing it", id);
		return;
	}
	char (*nodes)[FB_NAME_MAX] = a->route;
	size_t n = 0;
	const char *how;
	uint64_t now = fbs_now_ms();
	int rc = fbs_route(ev, &o, a->mapfile, a->have_map ? &a->fabmap : NULL, nodes, ROUTE_MAX,
			   &n, &how);
	/* A clear of a fabric-wide key goes to every node holding it, so the
	 * nodes routed serve the log line only: no blocking map fetch for it. */
	int changed = 0, to_all = (o.op == FBS_OP_CLEAR || o.op == FBS_OP_LINK_UP) &&
				  key_is_global(o.key);
	if (!to_all && rc == FBS_ROUTE_NEED_MAP && now - a->map_fetched_ms >= 1000 &&
	    fbs_map_fetch(a, FB_LOG_WARN) == 0)
		rc = fbs_route(ev, &o, a->mapfile, &a->fabmap, nodes, ROUTE_MAX, &n, &how);
	if (to_all) {
		changed = fbs_policy_observe_all(a->pol, &o, now); /* wherever it was started */
	} else if (n == 0) {
		a->unrouted++;
		fb_log_warn("EventId %" PRIu64 " %s (%s): no Slurm node known for it (no Oem Node, "
			    "not in MapFile%s); ignored", id, fb_kind_name(ev->kind), o.cause,
			    rc == FBS_ROUTE_NEED_MAP ? ", switch not in the broker's /fabric/map"
						     : " or /fabric/map");
	}
	if (o.root_cause && o.op == FBS_OP_START)
		changed |= root_cause_replace(a, &o, nodes, n, now);
	for (size_t i = 0; !to_all && i < n; i++) {
		int r = fbs_policy_observe(a->pol, nodes[i], &o, now);
		if (r < 0)
			fb_log_err("EventId %" PRIu64 ": out of memory for node %s", id, nodes[i]);
		else
			changed |= r;
	}
	if (changed) {
		char hold[32];
		fbs_duration_format(o.hold_ms, hold, sizeof(hold));
		int starts = o.op == FBS_OP_START || (o.op == FBS_OP_LINK_DOWN && o.drains);
		fb_log_info("EventId %" PRIu64 " (%s): %s on %s%s (%zu node%s, by %s): %s%s%s", id,
			    fb_kind_name(ev->kind), o.cause, n ? nodes[0] : "every node holding it",
			    n > 1 ? ",..." : "", n, n == 1 ? "" : "s", how, op_words(&o),
			    starts ? ", drains after " : "", starts ? hold : "");
		a->dirty = 1;
	}
}

void fbs_adapter_on_message(void *arg, const char *json, size_t len, uint64_t event_id)
{
	struct fbs_adapter *a = arg;
	if (a->phase != FBS_P_RUNNING)
		return;
	struct fb_event ev;
	struct fb_redfish_parsed p;
	char err[256];
	if (fb_redfish_parse(json, len, &ev, &p, err, sizeof(err))) {
		fb_log_warn("EventId %" PRIu64 " from the broker cannot be parsed, ignored: %s",
			    event_id, err);
	} else if (p.missed) {
		fb_log_warn("the broker says this subscriber missed %" PRIu64 " events; resuming "
			    "from EventId %" PRIu64 " (they are replayed from its journal)",
			    p.missed_count, p.resume_since);
		return;
	} else {
		if (!event_id)
			event_id = p.event_id;
		if (event_id && event_id <= a->seen_id)
			return; /* handled (a replay overlapping the state file), or from
				 * Kafka, older than where the adapter began */
		a->events++;
		handle_event(a, &ev, event_id);
		if (fb_event_counter(&ev, FB_CTR_RESYNC, 0))
			fbs_resync_note(a, event_id);
	}
	/* Kafka orders per partition only: an EventId is no resume point there
	 * (slurm_source.h), so LastEventId stays put. */
	if (event_id > a->seen_id && (!a->src || fb_source_ordered(a->src)))
		a->seen_id = event_id;
	fbs_adapter_kick(a);
}

/* ---- decisions, state, hand-off ----------------------------------------------- */

static void log_decision(const struct fbs_batch *b)
{
	const char *names[8];
	size_t k = b->n < 8 ? b->n : 8;
	for (size_t i = 0; i < k; i++)
		names[i] = b->t[i].node;
	if (b->action == FBS_A_DRAIN)
		fb_log_info("decided: drain %s%s%s (%zu node%s) with reason '%s' (batch %" PRIu64 ")",
			    names[0], k > 1 ? " " : "", k > 1 ? names[1] : "", b->n,
			    b->n == 1 ? "" : "s", b->reason, b->id);
	else
		fb_log_info("decided: undrain %s%s%s (%zu node%s, stable; batch %" PRIu64 ")",
			    names[0], k > 1 ? " " : "", k > 1 ? names[1] : "", b->n,
			    b->n == 1 ? "" : "s", b->id);
}

static void cap_event(struct fbs_adapter *a, const struct fbs_decision *d, uint64_t cause_id)
{
	const char **names = calloc(d->n_refused ? d->n_refused : 1, sizeof(*names));
	if (!names)
		return;
	for (size_t i = 0; i < d->n_refused; i++)
		names[i] = d->refused[i];
	char *hl = fbs_slurm_hostlist(names, d->n_refused);
	free(names);
	fb_log_err("cap: %u node%s drained by fabricbus, limit %u (MaxDrainNodes=%" PRIu64
		   ", MaxDrainPercent=%" PRIu64 "%%%s%s); not draining %s: check the fabric, then "
		   "raise the limit or drain by hand", d->cap_count, d->cap_count == 1 ? "" : "s",
		   d->cap_limit,
		   a->cfg->max_drain_nodes, a->cfg->max_drain_percent,
		   a->cfg->cap_partition[0] ? " of " : "", a->cfg->cap_partition, hl ? hl : "?");
	if (d->cap_event) {
		struct fb_event ev;
		fbs_pub_cap(&ev, d->cap_count, d->cap_limit, hl ? hl : "?", d->n_refused, cause_id,
			    a->cfg->dry_run);
		fbs_adapter_publish(a, &ev);
	}
	free(hl);
}

static void decide(struct fbs_adapter *a, uint64_t now)
{
	struct fbs_decision d;
	if (fbs_policy_decide(a->pol, now, &d)) {
		fb_log_err("out of memory deciding; retrying at the next event or timer");
		return;
	}
	for (size_t i = 0; i < d.n_batches; i++) {
		struct fbs_batch *b = &d.batches[i];
		struct fbs_batch *nq = realloc(a->queued, (a->n_queued + 1) * sizeof(*nq));
		if (nq)
			a->queued = nq;
		if (!nq || fbs_state_push(&a->st, b)) {
			fb_log_err("out of memory queueing a batch for %s; decided again later",
				   b->t[0].node);
			for (size_t k = 0; k < b->n; k++)
				fbs_policy_undo(a->pol, b->t[k].node);
			continue;
		}
		log_decision(b);
		a->queued[a->n_queued++] = *b; /* moves b->t */
		b->t = NULL;
		b->n = 0;
		a->dirty = 1;
	}
	for (size_t i = 0; i < d.n_not_slurm; i++) {
		const struct fbs_node *n = fbs_policy_node(a->pol, d.not_slurm[i]);
		fb_log_warn("not draining %s%s%s: slurmctld knows no such node, so it is neither "
			    "drained nor counted against the cap (check the node names in the "
			    "broker's inventory or MapFile)", d.not_slurm[i], n && n->n_conds ? " for " : "",
			    n && n->n_conds ? n->conds[0].cause : "");
	}
	fbs_metrics_held_back(a->metrics, d.n_newly_refused, d.n_not_slurm);
	if (d.n_newly_refused) {
		uint64_t cause = 0;
		const struct fbs_node *n = fbs_policy_node(a->pol, d.refused[0]);
		for (size_t k = 0; n && k < n->n_conds; k++)
			cause = n->conds[k].event_id;
		cap_event(a, &d, cause);
		a->dirty = 1;
	}
	fbs_decision_free(&d);
}

static int save(struct fbs_adapter *a)
{
	char err[1024];
	a->st.last_event_id = a->seen_id;
	if (fbs_state_save(a->cfg->state_file, &a->st, a->pol, err, sizeof(err))) {
		if (!a->save_failing)
			fb_log_err("state not saved: %s; actions go on, the save is retried every "
				   "RetryInterval", err);
		a->save_failing = 1;
		return -1;
	}
	if (a->save_failing)
		fb_log_info("state saved again to %s", a->cfg->state_file);
	a->save_failing = 0;
	a->dirty = 0;
	return 0;
}

void fbs_arm(struct event *ev, uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	event_add(ev, &tv);
}

static void flush(struct fbs_adapter *a)
{
	if (a->phase == FBS_P_STOPPING)
		return;
	uint64_t now = fbs_now_ms();
	if (a->phase != FBS_P_RECONCILE)
		decide(a, now);
	int idle = !a->dirty && a->seen_id != a->st.last_event_id;
	if (a->dirty || (idle && now - a->last_save_ms >= IDLE_SAVE_MS)) {
		if (save(a) == 0)
			a->last_save_ms = now;
		else
			fbs_arm(a->retry_ev, a->cfg->retry_ms);
	}
	/* Only now, with the decision on disk, does Slurm hear of it. */
	for (size_t i = 0; i < a->n_queued; i++) {
		if (fbs_actuator_submit(a->act, FBS_J_BATCH, &a->queued[i]))
			fb_log_err("out of memory handing batch %" PRIu64 " to the actuator; it is "
				   "retried at the next start", a->queued[i].id);
		fbs_batch_free(&a->queued[i]);
	}
	a->n_queued = 0;
	uint64_t due = fbs_policy_next_due(a->pol, now);
	if (!a->dirty && a->seen_id != a->st.last_event_id && a->last_save_ms + IDLE_SAVE_MS < due)
		due = a->last_save_ms + IDLE_SAVE_MS;
	if (due != UINT64_MAX)
		fbs_arm(a->due_ev, due > now ? due - now : 0);
}

int fbs_adapter_sync(struct fbs_adapter *a)
{
	if (a->phase == FBS_P_STOPPING)
		return a->dirty && save(a) ? -1 : 0;
	flush(a);
	return a->dirty ? -1 : 0;
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flush(arg);
}

/* ---- results ------------------------------------------------------------------ */

/* "node001=12,13 node002=-" for the action's log line, cut to fit. */
static void jobs_summary(const struct fbs_result *r, char *out, size_t outsz)
{
	size_t off = 0;
	out[0] = '\0';
	for (size_t i = 0; i < r->n && off + 1 < outsz; i++) {
		if (r->r[i].outcome != FBS_R_DONE)
			continue;
		int k = snprintf(out + off, outsz - off, "%s%s=%s", off ? " " : "", r->r[i].node,
				 r->r[i].jobs[0] ? r->r[i].jobs : "-");
		if (k < 0 || (size_t)k >= outsz - off) {
			snprintf(out + (outsz > 4 ? outsz - 4 : 0), outsz > 4 ? 4 : outsz, "...");
			break;
		}
		off += (size_t)k;
	}
}

static void log_action(const struct fbs_adapter *a, const struct fbs_batch *b,
		       const struct fbs_result *r, size_t done)
{
	char jobs[600];
	jobs_summary(r, jobs, sizeof(jobs));
	const char *dry = a->cfg->dry_run ? "dry-run " : "";
	if (!done)
		fb_log_info("%s%s batch %" PRIu64 ": no node left to %s (see above)", dry,
			    b->action == FBS_A_DRAIN ? "drain" : "undrain", b->id,
			    b->action == FBS_A_DRAIN ? "drain" : "undrain");
	else if (b->action == FBS_A_DRAIN)
		fb_log_info("%sdrain %s reason '%s': %s in %.1f ms (%u attempt%s); running jobs: %s",
			    dry, r->hostlist, b->reason, a->cfg->dry_run ? "not sent (dry run)" : "done",
			    r->update_ms, r->attempts, r->attempts == 1 ? "" : "s", jobs);
	else
		fb_log_info("%sundrain %s (no condition for StableFor): %s in %.1f ms (%u attempt%s); "
			    "running jobs: %s", dry, r->hostlist,
			    a->cfg->dry_run ? "not sent (dry run)" : "done", r->update_ms, r->attempts,
			    r->attempts == 1 ? "" : "s", jobs);
	if (r->jobs_err[0])
		fb_log_warn("running jobs on %s unknown: %s", r->hostlist, r->jobs_err);
}

static void drain_result(struct fbs_adapter *a, const struct fbs_batch *b,
			 const struct fbs_node_result *x, const struct fbs_target *t, uint64_t now)
{
	struct fb_event ev;
	int dry = a->cfg->dry_run;
	fbs_metrics_node(a->metrics, 1, x, t->cause);
	switch (x->outcome) {
	case FBS_R_DONE:
		if (fbs_policy_drained(a->pol, x->node, b->reason, b->event_id,
				       (uint64_t)time(NULL), dry, now))
			fb_log_err("out of memory recording the drain of %s", x->node);
		fbs_pub_drain(&ev, x->node, b->reason, b->event_id, x->jobs, dry);
		fbs_adapter_publish(a, &ev);
		return;
	case FBS_R_SKIPPED:
		fb_log_warn("%snot draining %s for '%s': Slurm holds reason '%s', not ours (%s); "
			    "left alone until a new condition", dry ? "dry-run " : "", x->node,
			    t->cause, x->reason, a->cfg->reason_prefix);
		fbs_policy_released(a->pol, x->node, now);
		fbs_pub_skip(&ev, x->node, x->reason, b->event_id, x->jobs, dry);
		fbs_adapter_publish(a, &ev);
		return;
	default:
		fb_log_warn("not draining %s for '%s': slurmctld knows no such node (check the "
			    "node names in the broker's inventory or MapFile)", x->node, t->cause);
		fbs_policy_released(a->pol, x->node, now);
	}
}

static void undrain_result(struct fbs_adapter *a, const struct fbs_node_result *x,
			   const struct fbs_target *t, uint64_t now)
{
	struct fb_event ev;
	fbs_metrics_node(a->metrics, 0, x, t->cause);
	switch (x->outcome) {
	case FBS_R_DONE:
		fbs_policy_undrained(a->pol, x->node, now);
		fbs_pub_undrain(&ev, x->node, t->cause, a->cfg->stable_ms, t->event_id, x->jobs,
				a->cfg->dry_run);
		fbs_adapter_publish(a, &ev);
		return;
	case FBS_R_GONE:
		fb_log_warn("not undraining %s: Slurm %s (an admin took it over); forgetting our "
			    "drain", x->node, x->drained ? "holds a reason that is not ours" :
			    "no longer has it drained");
		if (x->drained)
			fb_log_warn("%s keeps reason '%s'", x->node, x->reason);
		fbs_policy_released(a->pol, x->node, now);
		return;
	default:
		fb_log_warn("not undraining %s: slurmctld no longer knows the node; forgetting it",
			    x->node);
		fbs_policy_undrained(a->pol, x->node, now);
	}
}

void fbs_adapter_slurm_nodes(struct fbs_adapter *a, const struct fbs_snodes *sn)
{
	if (!sn->v)
		return;
	const char **names = calloc(sn->n ? sn->n : 1, sizeof(*names));
	for (size_t i = 0; names && i < sn->n; i++)
		names[i] = sn->v[i].name;
	if (!names || fbs_policy_set_slurm_nodes(a->pol, names, sn->n))
		fb_log_err("out of memory keeping the list of Slurm nodes; the old one stays");
	free(names);
}

void fbs_adapter_on_result(void *arg, struct fbs_result *r)
{
	struct fbs_adapter *a = arg;
	if (a->phase == FBS_P_STOPPING)
		return; /* the batch stays pending in the state file */
	if (r->type == FBS_J_RECONCILE) {
		fbs_startup_reconciled(a, r);
		return;
	}
	struct fbs_batch *b = fbs_state_find(&a->st, r->batch_id);
	if (!b) {
		fb_log_warn("result for unknown batch %" PRIu64 " ignored", r->batch_id);
		return;
	}
	if (r->cap_partition_missing)
		fb_log_err("CapPartition '%s' is not a Slurm partition: the percentage cap allows "
			   "no drain", a->cfg->cap_partition);
	fbs_policy_set_cap_base(a->pol, r->cap_base);
	fbs_adapter_slurm_nodes(a, &r->nodes);
	uint64_t now = fbs_now_ms();
	size_t done = 0;
	for (size_t i = 0; i < r->n && i < b->n; i++)
		done += r->r[i].outcome == FBS_R_DONE;
	log_action(a, b, r, done);
	fbs_metrics_batch(a->metrics, r);
	for (size_t i = 0; i < r->n && i < b->n; i++) {
		if (b->action == FBS_A_DRAIN)
			drain_result(a, b, &r->r[i], &b->t[i], now);
		else
			undrain_result(a, &r->r[i], &b->t[i], now);
	}
	fbs_state_remove(&a->st, r->batch_id);
	a->dirty = 1;
	fbs_adapter_kick(a);
}

/* ---- life cycle --------------------------------------------------------------- */

int fbs_adapter_init(struct fbs_adapter *a, const struct fbs_config *cfg, struct event_base *base,
		     char *err, size_t errsz)
{
	memset(a, 0, sizeof(*a));
	a->cfg = cfg;
	a->base = base;
	fbs_state_init(&a->st);
	a->ccfg.drain_on = cfg->drain_on;
	a->ccfg.hold_ms = cfg->hold_ms;
	a->ccfg.congestion_ppm = cfg->congestion_ppm;
	a->ccfg.congestion_for_ms = cfg->congestion_for_ms;
	a->ccfg.drain_degraded = cfg->drain_degraded;
	struct fbs_policy_cfg pc;
	memset(&pc, 0, sizeof(pc));
	pc.stable_ms = cfg->stable_ms;
	pc.max_nodes = cfg->max_drain_nodes;
	pc.max_percent = cfg->max_drain_percent;
	snprintf(pc.reason_prefix, sizeof(pc.reason_prefix), "%s", cfg->reason_prefix);
	if (fbs_policy_new(&pc, &a->pol))
		return fb_err_set(err, errsz, -1, "out of memory");
	if (fb_http_auth_init(&a->http, cfg->broker_token_file, cfg->broker_tls_ca, err, errsz))
		return FB_ECONFIG;
	if (cfg->map_file[0] && fbs_mapfile_load(cfg->map_file, &a->mapfile, err, errsz))
		return FB_ECONFIG;
	if (cfg->source == FBS_SRC_KAFKA && fbs_source_kafka_check(cfg, err, errsz))
		return FB_ECONFIG;
	int exists;
	if (fbs_state_load(cfg->state_file, &a->st, a->pol, &exists, err, errsz)) {
		size_t n = strlen(err);
		return fb_err_set(err + n, errsz - n, -1,
				  "; refusing to start: the drains it records would be "
				  "lost. Move the file aside to start afresh (nodes drained with '%s' are "
				  "then adopted from Slurm)", cfg->reason_prefix);
	}
	char why[1024];
	if (fbs_state_save(cfg->state_file, &a->st, a->pol, why, sizeof(why)))
		return fb_err_set(err, errsz, -1, "cannot write the state file: %s", why);
	a->seen_id = a->st.last_event_id;
	size_t held = fbs_policy_held(a->pol), conds = 0;
	for (size_t i = 0; i < fbs_policy_count(a->pol); i++)
		conds += fbs_policy_at(a->pol, i)->n_conds;
	if (exists)
		fb_log_info("state %s: LastEventId %" PRIu64 ", %zu node%s held drained or in "
			    "flight, %zu active condition%s, %zu pending action%s", cfg->state_file,
			    a->st.last_event_id, held, held == 1 ? "" : "s", conds,
			    conds == 1 ? "" : "s", a->st.n_pending, a->st.n_pending == 1 ? "" : "s");
	else
		fb_log_info("state %s: none yet (first start): nodes drained with '%s' will be "
			    "adopted from Slurm", cfg->state_file, cfg->reason_prefix);
	if (a->mapfile)
		fb_log_info("MapFile %s: %zu addresses", cfg->map_file, fbs_mapfile_count(a->mapfile));
	return 0;
}

int fbs_adapter_start(struct fbs_adapter *a)
{
	const struct fbs_config *c = a->cfg;
	struct fb_session_opts so = { c->agent_host, c->agent_port, c->agent_id, 8192, 512, 5000,
				      NULL, NULL, NULL };
	int rc = fb_session_new(a->base, &so, &a->sess);
	if (!rc)
		rc = fb_session_start(a->sess);
	if (rc) {
		fb_log_err("cannot start the session to %s:%d: %s", c->agent_host, c->agent_port,
			   fb_strerror(rc));
		return -1;
	}
	a->flush_ev = event_new(a->base, -1, 0, on_flush, a);
	a->due_ev = event_new(a->base, -1, 0, on_flush, a);
	a->retry_ev = event_new(a->base, -1, 0, fbs_startup_retry, a);
	a->resync_ev = event_new(a->base, -1, 0, fbs_resync_cb, a);
	struct fbs_actuator_cfg ac;
	memset(&ac, 0, sizeof(ac));
	snprintf(ac.reason_prefix, sizeof(ac.reason_prefix), "%s", c->reason_prefix);
	snprintf(ac.cap_partition, sizeof(ac.cap_partition), "%s", c->cap_partition);
	ac.dry_run = c->dry_run;
	ac.retry_ms = c->retry_ms;
	if (!a->flush_ev || !a->due_ev || !a->retry_ev || !a->resync_ev ||
	    (rc = fbs_actuator_start(&ac, a->base, fbs_adapter_on_result, a, &a->act)) ||
	    (rc = fbs_actuator_submit(a->act, FBS_J_RECONCILE, NULL))) {
		fb_log_err("cannot start the Slurm thread: %s", fb_strerror(rc ? rc : -ENOMEM));
		return -1;
	}
	if (c->job_reconcile_ms && fbs_jobrec_start(a, c->job_reconcile_ms, &a->jobrec)) {
		fb_log_err("cannot start job reconciliation: out of memory");
		return -1;
	}
	a->phase = FBS_P_RECONCILE;
	return 0;
}

int fbs_adapter_stop(struct fbs_adapter *a, int wait_ms)
{
	a->phase = FBS_P_STOPPING;
	fbs_jobrec_free(a->jobrec);
	a->jobrec = NULL;
	fb_source_stop(a->src); /* Kafka: commits what the save below covers too */
	a->src = NULL;
	size_t backlog = a->act ? fbs_actuator_backlog(a->act) : 0;
	for (size_t i = 0; i < a->n_queued; i++)
		fbs_batch_free(&a->queued[i]); /* they are in st.pending: redone at the next start */
	a->n_queued = 0;
	if (save(a) == 0)
		fb_log_info("state saved to %s: LastEventId %" PRIu64 ", %zu pending action%s",
			    a->cfg->state_file, a->st.last_event_id, a->st.n_pending,
			    a->st.n_pending == 1 ? "" : "s");
	if (backlog)
		fb_log_info("%zu Slurm action%s in progress or queued; kept pending for the next start",
			    backlog, backlog == 1 ? "" : "s");
	int rc = fbs_actuator_stop(a->act, wait_ms);
	if (rc == 0)
		a->act = NULL;
	else
		fb_log_warn("the Slurm thread is still inside a libslurm call after %d ms; exiting "
			    "without it (its action is pending in the state file)", wait_ms);
	return rc;
}

void fbs_adapter_free(struct fbs_adapter *a)
{
	fbs_jobrec_free(a->jobrec);
	fb_source_stop(a->src);
	if (a->act)
		fbs_actuator_stop(a->act, 0);
	fb_session_free(a->sess);
	fb_http_auth_free(&a->http);
	struct event *evs[] = { a->flush_ev, a->due_ev, a->retry_ev, a->resync_ev };
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i])
			event_free(evs[i]);
	for (size_t i = 0; i < a->n_queued; i++)
		fbs_batch_free(&a->queued[i]);
	free(a->queued);
	free(a->route);
	fbs_fabmap_free(&a->fabmap);
	fbs_mapfile_free(a->mapfile);
	fbs_policy_free(a->pol);
	fbs_state_free(&a->st);
	memset(a, 0, sizeof(*a));
}

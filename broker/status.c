#include "status.h"

#include "fabric_map.h"
#include "fb_err.h"
#include "inventory.h"
#include "journal.h"
#include "kafka_sink.h"
#include "listener.h"
#include "storm.h"
#include "flapctl.h"
#include "ratectl.h"
#include "dedupctl.h"
#include "ofmf.h"
#include "ws_server.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Ports listed in /status "inventory"."ports"; "truncated" says when more are known. */
#define FB_STATUS_INVENTORY_CAP 10000
#define RATE_SAMPLES 11 /* one a second: enough for a 10 s rate */

struct fb_status {
	uint64_t events[RATE_SAMPLES];
	uint64_t at_ns[RATE_SAMPLES];
	unsigned n, head;
};

struct fb_status *fb_status_new(void) { return calloc(1, sizeof(struct fb_status)); }
void fb_status_free(struct fb_status *s) { free(s); }

static void sample(struct fb_status *s, uint64_t events, uint64_t now_ns)
{
	s->head = (s->head + 1) % RATE_SAMPLES;
	s->events[s->head] = events;
	s->at_ns[s->head] = now_ns;
	if (s->n < RATE_SAMPLES)
		s->n++;
}

/* Events per second over the last `back` samples (fewer if not yet taken). */
static double rate(const struct fb_status *s, unsigned back)
{
	if (back >= s->n)
		back = s->n ? s->n - 1 : 0;
	if (back == 0)
		return 0.0;
	unsigned old = (s->head + RATE_SAMPLES - back) % RATE_SAMPLES;
	double dt = (double)(s->at_ns[s->head] - s->at_ns[old]) / 1e9;
	return dt > 0 ? (double)(s->events[s->head] - s->events[old]) / dt : 0.0;
}

/* JSON has no unsigned 64-bit: a counter past INT64_MAX (a journal poisoned
 * before MaxSeqGap existed) shows as INT64_MAX, never negative. */
static json_int_t jint(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v;
}

struct agents_ctx {
	json_t *arr;
	uint64_t now_ns;
};

static void agent_json(void *arg, struct fb_agent *a)
{
	struct agents_ctx *ctx = arg;
	json_t *o = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I}", "id", a->id, "connected", a->conn != NULL,
			      "last_seq", jint(a->durable_seq), "events", jint(a->events),
			      "duplicates", jint(a->duplicates), "gaps", jint(a->gaps));
	if (!o)
		return;
	json_object_set_new(o, "peer", a->conn ? json_string(fb_conn_peer(a->conn)) : json_null());
	json_object_set_new(o, "last_seen_s",
			    a->last_seen_ns ? json_real((double)(ctx->now_ns - a->last_seen_ns) / 1e9)
					    : json_null());
	json_object_set_new(o, "lag_s", a->last_ts_ns ? json_real((double)a->lag_ns / 1e9) : json_null());
	json_array_append_new(ctx->arr, o);
}

/* The Kafka sink's counters (atomics kept by its thread), or {"enabled":false}. */
static json_t *kafka_json(struct fb_broker *b)
{
	if (!b->kafka)
		return json_pack("{s:b}", "enabled", 0);
	struct fb_kafka_stats st;
	fb_kafka_get_stats(b->kafka, &st);
	uint64_t backlog = b->committed_id > st.cursor ? b->committed_id - st.cursor : 0;
	json_t *o = json_pack("{s:b, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "enabled", 1,
			 "brokers", fb_kafka_brokers(b->kafka), "connected", st.connected, "cursor",
			 (json_int_t)st.cursor, "committed", (json_int_t)b->committed_id, "backlog",
			 (json_int_t)backlog, "produced", (json_int_t)st.produced, "delivered",
			 (json_int_t)st.delivered, "skipped", (json_int_t)st.skipped, "errors",
			 (json_int_t)st.errors);
	if (o && st.last_error[0]) {
		json_object_set_new(o, "last_error", json_string(st.last_error));
		json_object_set_new(o, "last_error_age_s", json_real(st.last_error_age_s));
	}
	return o;
}

/* GET /fabric/map's size and the job registry. */
static json_t *fabric_map_json(const struct fb_broker *b)
{
	struct fb_fabric_map_stats st;
	fb_fabric_map_get_stats(b->fabric_map, &st);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:b, s:I, s:I, s:I}", "nodes",
			 (json_int_t)st.nodes, "job_members", (json_int_t)st.job_members,
			 "switches", (json_int_t)st.switches, "switch_ports", (json_int_t)st.switch_ports,
			 "jobs", (json_int_t)st.jobs, "job_nodes", (json_int_t)st.job_nodes, "renders",
			 (json_int_t)st.renders, "render_ms", st.render_ms, "take_ms", st.take_ms,
			 "render_thread", st.render_thread, "job_requests",
			 (json_int_t)st.job_ops, "refused", (json_int_t)st.refused, "jobs_expired",
			 (json_int_t)st.jobs_expired);
}

void fb_status_sample(struct fb_status *s, const struct fb_broker *b, uint64_t now_ns)
{
	sample(s, b->st.events, now_ns);
}

static json_t *listener_json(const struct fb_listener *l, uint64_t open, uint64_t budget)
{
	struct fb_listener_stats st = { 0 };
	if (l)
		fb_listener_get_stats(l, &st);
	return json_pack("{s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:s?}", "accepting", l && !st.paused,
			 "paused_by", !l ? "closed" : st.held ? "budget" : st.paused ? "shortage" : "none",
			 "open", (json_int_t)open, "limit", (json_int_t)budget, "accept_errors",
			 (json_int_t)st.accept_errors, "pauses", (json_int_t)st.pauses, "refused",
			 (json_int_t)st.refused, "last_error", st.last_errno ? strerror(st.last_errno) : NULL);
}

/* Both listeners and the descriptor budget (accept.c, listener.c). */
static json_t *listeners_json(struct fb_broker *b)
{
	return json_pack("{s:I, s:o, s:o}", "fd_limit", (json_int_t)b->fd_limit, "agents",
			 listener_json(b->listener, b->n_conns, fb_ingest_agent_limit(b)), "http",
			 listener_json(b->http_listener, b->ws ? fb_ws_http_open(b->ws) : 0, b->fd_http));
}

/* What the agent port's guards refused (docs/security.md). */
static json_t *guards_json(const struct fb_broker *b)
{
	const struct fb_broker_stats *st = &b->st;
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "tls",
			 b->cfg->agent_tls == FB_AGENT_TLS_REQUIRED ? "required"
			 : b->cfg->agent_tls == FB_AGENT_TLS_OPTIONAL ? "optional" : "off",
			 "in_use_refused", jint(st->in_use), "takeovers", jint(st->takeovers),
			 "seq_refused", jint(st->seq_refused), "claims_refused", jint(st->claims_refused),
			 "gaps", jint(st->gaps), "forbidden", jint(st->forbidden), "tls_failed",
			 jint(st->tls_failed), "hello_timeouts", jint(st->hello_timeouts),
			 "per_address_refused", jint(st->per_addr_refused), "expired", jint(st->expired),
			 "expired_ids_kept", jint(fb_agent_expired_count(b->agents)));
}

/* The disk-full alarm: stalled is true while nothing can be acked. */
static void journal_alarm_json(json_t *j, const struct fb_journal_stats *js)
{
	json_object_set_new(j, "stalled", json_boolean(js->stalled != 0));
	json_object_set_new(j, "stall_error",
			    js->stalled ? json_string(fb_strerror(js->stalled)) : json_null());
	json_object_set_new(j, "stalled_for_s", json_real((double)js->stalled_for_ms / 1e3));
	json_object_set_new(j, "stalls", json_integer((json_int_t)js->stalls));
	json_object_set_new(j, "waiting_bytes", json_integer((json_int_t)js->waiting_bytes));
	/* What recovery found at start: a torn tail it cut, damage it skipped. */
	json_object_set_new(j, "truncated_bytes", json_integer((json_int_t)js->truncated_bytes));
	json_object_set_new(j, "damaged_bytes", json_integer((json_int_t)js->damaged_bytes));
}

char *fb_status_json(struct fb_status *s, struct fb_broker *b, uint64_t now_ns)
{
	struct fb_journal_stats js;
	fb_journal_get_stats(b->journal, &js);
	struct agents_ctx ctx = { json_array(), now_ns };
	fb_agent_foreach(b->agents, agent_json, &ctx);
	json_t *root = json_pack(
		"{s:s, s:I, s:I, s:{s:I, s:I, s:I, s:I, s:f, s:f}, s:{s:s, s:I, s:I, s:I, s:I, s:s, s:I, "
		"s:I}, s:{s:I, s:I, s:I}, s:o}",
		"version", FB_VERSION, "uptime_s", (json_int_t)((now_ns - b->start_ns) / 1000000000ull),
		"pid", (json_int_t)getpid(),
		"events", "total", (json_int_t)b->st.events, "duplicates", (json_int_t)b->st.duplicates,
		"last_event_id", (json_int_t)b->last_event_id, "committed_id",
		(json_int_t)b->committed_id, "rate_1s", rate(s, 1), "rate_10s", rate(s, 10),
		"journal", "dir", fb_journal_dir(b->journal), "first_id", (json_int_t)js.first_id,
		"last_id", (json_int_t)js.last_id, "bytes", (json_int_t)js.bytes, "segments",
		(json_int_t)js.segments, "sync", fb_sync_policy_name(b->cfg->sync_policy), "syncs",
		(json_int_t)js.syncs, "commits", (json_int_t)b->st.commits,
		"connections", "open", (json_int_t)b->n_conns, "accepted", (json_int_t)b->st.connections,
		"rejected", (json_int_t)b->st.rejected,
		"agents", ctx.arr);
	if (!root)
		return NULL;
	journal_alarm_json(json_object_get(root, "journal"), &js);
	json_object_set_new(root, "listeners", listeners_json(b));
	json_object_set_new(root, "agent_guards", guards_json(b));
	json_object_set_new(root, "kafka", kafka_json(b));
	json_object_set_new(root, "ofmf",
			    b->ofmf ? fb_ofmf_status(b->ofmf) : json_pack("{s:b}", "enabled", 0));
	json_object_set_new(root, "inventory", fb_inventory_json(b->inventory, FB_STATUS_INVENTORY_CAP));
	json_object_set_new(root, "fabric_map", fabric_map_json(b));
	if (b->storm)
		json_object_set_new(root, "storm", fb_storm_json(b->storm));
	if (b->flapctl)
		json_object_set_new(root, "flap", fb_flapctl_json(b->flapctl));
	json_object_set_new(root, "quiet", fb_quiets_json(&b->quiets));
	if (b->ratectl)
		json_object_set_new(root, "ratelimit", fb_ratectl_json(b->ratectl));
	if (b->dedupctl)
		json_object_set_new(root, "dedup", fb_dedupctl_json(b->dedupctl));
	char *out = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return out;
}

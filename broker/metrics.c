/* metrics.c - fabricbusd's loop-side Prometheus series: see metrics.h. */
#include "metrics.h"

#include "journal.h"
#include "kafka_sink.h"
#include "listener.h"
#include "ws_metrics.h"
#include "ws_server.h"

#include "fb_metrics.h"

#include <stddef.h>
#include <stdlib.h>
#include <time.h>

/* fdatasync on a local disk: tens of microseconds (NVMe) to tens of
 * milliseconds (a busy spinning disk); above 1 s something is wrong. */
static const double fsync_bounds[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
				       0.025,  0.05,    0.1,    0.25,  0.5,    1.0,   2.5 };

enum {
	M_IN, M_DUP, M_QUIET_SYMPTOM, M_QUIET_DUPLICATE, M_QUIET_RATE, M_QUIET_FLAP, M_FRAMES, M_BYTES, M_COMMITS, M_OUT_JOURNAL, M_OUT_KAFKA,
	M_LAST_ID, M_COMMITTED_ID,
	M_AGENT_CONNS, M_AGENT_ACCEPTED, M_AGENT_REJECTED, M_AGENTS_KNOWN, M_AGENT_GAPS,
	M_HTTP_CONNS, M_REFUSED_AGENTS, M_REFUSED_HTTP, M_ACCEPT_ERR_AGENTS, M_ACCEPT_ERR_HTTP,
	M_J_BYTES, M_J_SEGMENTS, M_J_SYNCS, M_J_FIRST, M_J_REMOVED, M_J_STALLED, M_J_STALLS,
	M_J_WAITING,
	M_K_CONNECTED, M_K_BACKLOG, M_K_CURSOR, M_K_INFLIGHT, M_K_PRODUCED, M_K_SKIPPED, M_K_ERRORS,
	M_COUNT
};

struct fb_broker_metrics {
	struct fb_metric *m[M_COUNT];
	struct fb_metric *fsync;
};

#define FB_BROKER_QUIET_HELP                                                                \
	"Events made quiet before they were journaled (default subscribers skip them), per reason."
/* One help text per family: its series (one per listener) must print the same. */
#define FB_BROKER_REFUSED_HELP "Connections refused at a configured limit, per listener."
#define FB_BROKER_ACCEPT_ERR_HELP "Failed accept(2) calls (e.g. out of descriptors), per listener."

#define C FB_METRIC_COUNTER
#define G FB_METRIC_GAUGE
#define BM(id) (offsetof(struct fb_broker_metrics, m) + (id) * sizeof(struct fb_metric *))
static const struct fb_metric_def defs[] = {
	{ C, "fabricbus_events_in_total", "Events accepted from agents and journaled.",
	  NULL, BM(M_IN) },
	{ C, "fabricbus_events_duplicate_total",
	  "Events dropped as already stored (an agent resent after a reconnect).",
	  NULL, BM(M_DUP) },
	/* The reasons of enum fb_quiet, in order (refresh below). */
	{ C, "fabricbus_events_quiet_total", FB_BROKER_QUIET_HELP, "reason=\"symptom\"", BM(M_QUIET_SYMPTOM) },
	{ C, "fabricbus_events_quiet_total", FB_BROKER_QUIET_HELP, "reason=\"duplicate\"", BM(M_QUIET_DUPLICATE) },
	{ C, "fabricbus_events_quiet_total", FB_BROKER_QUIET_HELP, "reason=\"rate_limited\"", BM(M_QUIET_RATE) },
	{ C, "fabricbus_events_quiet_total", FB_BROKER_QUIET_HELP, "reason=\"flap\"", BM(M_QUIET_FLAP) },
	{ C, "fabricbus_events_out_total", FB_BROKER_OUT_HELP, "sink=\"journal\"", BM(M_OUT_JOURNAL) },
	{ C, "fabricbus_events_out_total", FB_BROKER_OUT_HELP, "sink=\"kafka\"", BM(M_OUT_KAFKA) },
	{ C, "fabricbus_ingest_frames_total", "Protocol frames received from agents.",
	  NULL, BM(M_FRAMES) },
	{ C, "fabricbus_ingest_bytes_total", "Bytes received from agents.", NULL, BM(M_BYTES) },
	{ C, "fabricbus_commits_total", "Journal commits (each acks a batch).",
	  NULL, BM(M_COMMITS) },
	{ G, "fabricbus_last_event_id", "Newest EventId assigned.", NULL, BM(M_LAST_ID) },
	{ G, "fabricbus_committed_event_id", "Newest EventId durable and published.",
	  NULL, BM(M_COMMITTED_ID) },
	{ G, "fabricbus_agent_connections", "Agent connections open now.",
	  NULL, BM(M_AGENT_CONNS) },
	{ C, "fabricbus_agent_connections_accepted_total",
	  "Agent connections accepted since start.", NULL, BM(M_AGENT_ACCEPTED) },
	{ C, "fabricbus_agent_connections_rejected_total",
	  "Agent connections closed for protocol errors.", NULL, BM(M_AGENT_REJECTED) },
	{ G, "fabricbus_agents", "Agents known to the journal (connected or not).",
	  NULL, BM(M_AGENTS_KNOWN) },
	{ C, "fabricbus_agent_sequence_gaps_total",
	  "Sequence numbers agents skipped (events they dropped), summed over agents.",
	  NULL, BM(M_AGENT_GAPS) },
	{ G, "fabricbus_http_connections",
	  "HTTP and WebSocket connections open now.", NULL, BM(M_HTTP_CONNS) },
	{ C, "fabricbus_listener_refused_total", FB_BROKER_REFUSED_HELP, "listener=\"agents\"",
	  BM(M_REFUSED_AGENTS) },
	{ C, "fabricbus_listener_refused_total", FB_BROKER_REFUSED_HELP, "listener=\"http\"",
	  BM(M_REFUSED_HTTP) },
	{ C, "fabricbus_listener_accept_errors_total", FB_BROKER_ACCEPT_ERR_HELP, "listener=\"agents\"",
	  BM(M_ACCEPT_ERR_AGENTS) },
	{ C, "fabricbus_listener_accept_errors_total", FB_BROKER_ACCEPT_ERR_HELP, "listener=\"http\"",
	  BM(M_ACCEPT_ERR_HTTP) },
	{ G, "fabricbus_journal_size_bytes", "Size of all journal segments.", NULL, BM(M_J_BYTES) },
	{ G, "fabricbus_journal_segments", "Journal segment files.", NULL, BM(M_J_SEGMENTS) },
	{ C, "fabricbus_journal_fsyncs_total", "fdatasync calls on the journal.",
	  NULL, BM(M_J_SYNCS) },
	{ G, "fabricbus_journal_first_event_id", "Oldest EventId retained (0: empty).",
	  NULL, BM(M_J_FIRST) },
	{ C, "fabricbus_journal_segments_removed_total",
	  "Segments removed by retention.", NULL, BM(M_J_REMOVED) },
	{ G, "fabricbus_journal_stalled", "1 while the journal cannot be written (disk full, "
	  "quota, I/O error): nothing is acked and agents are not read.", NULL, BM(M_J_STALLED) },
	{ C, "fabricbus_journal_stalls_total", "Times a journal write or sync failed and stalled it.",
	  NULL, BM(M_J_STALLS) },
	{ G, "fabricbus_journal_waiting_bytes", "Records held in memory, not yet durable.", NULL,
	  BM(M_J_WAITING) },
	{ G, "fabricbus_kafka_connected", "1 when the Kafka sink is connected.",
	  NULL, BM(M_K_CONNECTED) },
	{ G, "fabricbus_kafka_backlog_events",
	  "Committed events not yet in Kafka (committed EventId minus the Kafka cursor).",
	  NULL, BM(M_K_BACKLOG) },
	{ G, "fabricbus_kafka_cursor_event_id",
	  "Every event up to this EventId is in Kafka.", NULL, BM(M_K_CURSOR) },
	{ G, "fabricbus_kafka_in_flight_messages",
	  "Messages handed to librdkafka and not yet acknowledged.", NULL, BM(M_K_INFLIGHT) },
	{ C, "fabricbus_kafka_produced_total", "Messages handed to librdkafka.",
	  NULL, BM(M_K_PRODUCED) },
	{ C, "fabricbus_kafka_skipped_total",
	  "Messages not resent because Kafka already had them.", NULL, BM(M_K_SKIPPED) },
	{ C, "fabricbus_kafka_errors_total",
	  "Permanent Kafka delivery errors and other failures.", NULL, BM(M_K_ERRORS) },
};
#undef BM
#undef C
#undef G

struct fb_broker_metrics *fb_broker_metrics_new(struct fb_metrics *r)
{
	struct fb_broker_metrics *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	fb_metric_set(fb_metrics_add(r, FB_METRIC_GAUGE, "process_start_time_seconds",
				     "Start time of the process since the Unix epoch.", NULL),
		      (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	if (fb_metrics_build_info(r, "fabricbusd") ||
	    fb_metrics_add_all(r, defs, sizeof(defs) / sizeof(defs[0]), m, NULL))
		goto fail;
	m->fsync = fb_metrics_histogram(r, "fabricbus_journal_fsync_duration_seconds",
					"Time one fdatasync of the journal took.", NULL, fsync_bounds,
					sizeof(fsync_bounds) / sizeof(fsync_bounds[0]));
	if (m->fsync)
		return m;
fail:
	free(m);
	return NULL;
}

void fb_broker_metrics_free(struct fb_broker_metrics *m) { free(m); }

struct fb_metric *fb_broker_metrics_fsync(struct fb_broker_metrics *m)
{
	return m ? m->fsync : NULL;
}

static void sum_gaps(void *arg, struct fb_agent *a) { *(uint64_t *)arg += a->gaps; }

static void update_listeners(struct fb_broker_metrics *m, struct fb_broker *b)
{
	struct fb_listener_stats ls = { 0 };
	if (b->listener)
		fb_listener_get_stats(b->listener, &ls);
	fb_metric_set(m->m[M_REFUSED_AGENTS], (double)ls.refused);
	fb_metric_set(m->m[M_ACCEPT_ERR_AGENTS], (double)ls.accept_errors);
	struct fb_listener_stats hs = { 0 };
	if (b->http_listener)
		fb_listener_get_stats(b->http_listener, &hs);
	fb_metric_set(m->m[M_REFUSED_HTTP], (double)hs.refused);
	fb_metric_set(m->m[M_ACCEPT_ERR_HTTP], (double)hs.accept_errors);
	fb_metric_set(m->m[M_HTTP_CONNS], b->ws ? (double)fb_ws_http_open(b->ws) : 0.0);
}

static void update_kafka(struct fb_broker_metrics *m, struct fb_broker *b)
{
	if (!b->kafka)
		return;
	struct fb_kafka_stats st;
	fb_kafka_get_stats(b->kafka, &st);
	fb_metric_set(m->m[M_K_CONNECTED], st.connected ? 1 : 0);
	uint64_t backlog = b->committed_id > st.cursor ? b->committed_id - st.cursor : 0;
	fb_metric_set(m->m[M_K_BACKLOG], (double)backlog);
	fb_metric_set(m->m[M_K_CURSOR], (double)st.cursor);
	uint64_t done = st.delivered + st.errors;
	fb_metric_set(m->m[M_K_INFLIGHT], st.produced > done ? (double)(st.produced - done) : 0);
	fb_metric_set(m->m[M_K_PRODUCED], (double)st.produced);
	fb_metric_set(m->m[M_K_SKIPPED], (double)st.skipped);
	fb_metric_set(m->m[M_K_ERRORS], (double)st.errors);
	fb_metric_set(m->m[M_OUT_KAFKA], (double)st.delivered);
}

void fb_broker_metrics_update(struct fb_broker_metrics *m, struct fb_broker *b)
{
	if (!m)
		return;
	fb_metric_set(m->m[M_IN], (double)b->st.events);
	fb_metric_set(m->m[M_DUP], (double)b->st.duplicates);
	for (unsigned r = FB_QUIET_SYMPTOM; r <= FB_QUIET_FLAP; r++)
		fb_metric_set(m->m[M_QUIET_SYMPTOM + r - FB_QUIET_SYMPTOM], (double)b->quiets.by_reason[r]);
	fb_metric_set(m->m[M_FRAMES], (double)b->st.frames);
	fb_metric_set(m->m[M_BYTES], (double)b->st.bytes_in);
	fb_metric_set(m->m[M_COMMITS], (double)b->st.commits);
	fb_metric_set(m->m[M_LAST_ID], (double)b->last_event_id);
	fb_metric_set(m->m[M_COMMITTED_ID], (double)b->committed_id);
	fb_metric_set(m->m[M_AGENT_CONNS], (double)b->n_conns);
	fb_metric_set(m->m[M_AGENT_ACCEPTED], (double)b->st.connections);
	fb_metric_set(m->m[M_AGENT_REJECTED], (double)b->st.rejected);
	fb_metric_set(m->m[M_AGENTS_KNOWN], (double)fb_agent_count(b->agents));
	uint64_t gaps = 0;
	fb_agent_foreach(b->agents, sum_gaps, &gaps);
	fb_metric_set(m->m[M_AGENT_GAPS], (double)gaps);
	struct fb_journal_stats js;
	fb_journal_get_stats(b->journal, &js);
	fb_metric_set(m->m[M_J_BYTES], (double)js.bytes);
	fb_metric_set(m->m[M_J_SEGMENTS], (double)js.segments);
	fb_metric_set(m->m[M_J_SYNCS], (double)js.syncs);
	fb_metric_set(m->m[M_OUT_JOURNAL], (double)js.appended);
	fb_metric_set(m->m[M_J_FIRST], (double)js.first_id);
	fb_metric_set(m->m[M_J_REMOVED], (double)js.removed_segments);
	fb_metric_set(m->m[M_J_STALLED], js.stalled ? 1.0 : 0.0);
	fb_metric_set(m->m[M_J_STALLS], (double)js.stalls);
	fb_metric_set(m->m[M_J_WAITING], (double)js.waiting_bytes);
	update_listeners(m, b);
	update_kafka(m, b);
}

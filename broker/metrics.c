/* metrics.c - fabricbusd's loop-side Prometheus series: see metrics.h. */
#include "metrics.h"

#include "journal.h"
#include "kafka_sink.h"
#include "listener.h"
#include "ws_server.h"

#include "fb_metrics.h"

#include <stdlib.h>
#include <time.h>

/* fdatasync on a local disk: tens of microseconds (NVMe) to tens of
 * milliseconds (a busy spinning disk); above 1 s something is wrong. */
static const double fsync_bounds[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
				       0.025,  0.05,    0.1,    0.25,  0.5,    1.0,   2.5 };

enum {
	M_IN, M_DUP, M_FRAMES, M_BYTES, M_COMMITS, M_OUT_JOURNAL, M_OUT_KAFKA,
	M_LAST_ID, M_COMMITTED_ID,
	M_AGENT_CONNS, M_AGENT_ACCEPTED, M_AGENT_REJECTED, M_AGENTS_KNOWN, M_AGENT_GAPS,
	M_HTTP_CONNS, M_REFUSED_AGENTS, M_REFUSED_HTTP, M_ACCEPT_ERR_AGENTS, M_ACCEPT_ERR_HTTP,
	M_J_BYTES, M_J_SEGMENTS, M_J_SYNCS, M_J_FIRST, M_J_REMOVED,
	M_K_CONNECTED, M_K_BACKLOG, M_K_CURSOR, M_K_INFLIGHT, M_K_PRODUCED, M_K_SKIPPED, M_K_ERRORS,
	M_COUNT
};

struct fb_broker_metrics {
	struct fb_metric *m[M_COUNT];
	struct fb_metric *fsync;
};

struct def {
	int id;
	enum fb_metric_type type;
	const char *name, *help, *labels;
};

#define C FB_METRIC_COUNTER
#define G FB_METRIC_GAUGE
static const struct def defs[] = {
	{ M_IN, C, "fabricbus_events_in_total", "Events accepted from agents and journaled.", NULL },
	{ M_DUP, C, "fabricbus_events_duplicate_total",
	  "Events dropped as already stored (an agent resent after a reconnect).", NULL },
	{ M_OUT_JOURNAL, C, "fabricbus_events_out_total",
	  "Events handed on per sink: journal (appended), websocket (messages sent, summed over "
	  "subscribers), kafka (acknowledged by Kafka).",
	  "sink=\"journal\"" },
	{ M_OUT_KAFKA, C, "fabricbus_events_out_total",
	  "Events handed on per sink: journal (appended), websocket (messages sent, summed over "
	  "subscribers), kafka (acknowledged by Kafka).",
	  "sink=\"kafka\"" },
	{ M_FRAMES, C, "fabricbus_ingest_frames_total", "Protocol frames received from agents.", NULL },
	{ M_BYTES, C, "fabricbus_ingest_bytes_total", "Bytes received from agents.", NULL },
	{ M_COMMITS, C, "fabricbus_commits_total", "Journal commits (each acks a batch).", NULL },
	{ M_LAST_ID, G, "fabricbus_last_event_id", "Newest EventId assigned.", NULL },
	{ M_COMMITTED_ID, G, "fabricbus_committed_event_id", "Newest EventId durable and published.",
	  NULL },
	{ M_AGENT_CONNS, G, "fabricbus_agent_connections", "Agent connections open now.", NULL },
	{ M_AGENT_ACCEPTED, C, "fabricbus_agent_connections_accepted_total",
	  "Agent connections accepted since start.", NULL },
	{ M_AGENT_REJECTED, C, "fabricbus_agent_connections_rejected_total",
	  "Agent connections closed for protocol errors.", NULL },
	{ M_AGENTS_KNOWN, G, "fabricbus_agents", "Agents known to the journal (connected or not).",
	  NULL },
	{ M_AGENT_GAPS, C, "fabricbus_agent_sequence_gaps_total",
	  "Sequence numbers agents skipped (events they dropped), summed over agents.", NULL },
	{ M_HTTP_CONNS, G, "fabricbus_http_connections",
	  "HTTP and WebSocket connections open now.", NULL },
	{ M_REFUSED_AGENTS, C, "fabricbus_listener_refused_total",
	  "Connections refused at a configured limit, per listener.", "listener=\"agents\"" },
	{ M_REFUSED_HTTP, C, "fabricbus_listener_refused_total",
	  "Connections refused at a configured limit, per listener.", "listener=\"http\"" },
	{ M_ACCEPT_ERR_AGENTS, C, "fabricbus_listener_accept_errors_total",
	  "Failed accept(2) calls (e.g. out of descriptors), per listener.", "listener=\"agents\"" },
	{ M_ACCEPT_ERR_HTTP, C, "fabricbus_listener_accept_errors_total",
	  "Failed accept(2) calls (e.g. out of descriptors), per listener.", "listener=\"http\"" },
	{ M_J_BYTES, G, "fabricbus_journal_size_bytes", "Size of all journal segments.", NULL },
	{ M_J_SEGMENTS, G, "fabricbus_journal_segments", "Journal segment files.", NULL },
	{ M_J_SYNCS, C, "fabricbus_journal_fsyncs_total", "fdatasync calls on the journal.", NULL },
	{ M_J_FIRST, G, "fabricbus_journal_first_event_id", "Oldest EventId retained (0: empty).",
	  NULL },
	{ M_J_REMOVED, C, "fabricbus_journal_segments_removed_total",
	  "Segments removed by retention.", NULL },
	{ M_K_CONNECTED, G, "fabricbus_kafka_connected", "1 when the Kafka sink is connected.", NULL },
	{ M_K_BACKLOG, G, "fabricbus_kafka_backlog_events",
	  "Committed events not yet in Kafka (committed EventId minus the Kafka cursor).", NULL },
	{ M_K_CURSOR, G, "fabricbus_kafka_cursor_event_id",
	  "Every event up to this EventId is in Kafka.", NULL },
	{ M_K_INFLIGHT, G, "fabricbus_kafka_in_flight_messages",
	  "Messages handed to librdkafka and not yet acknowledged.", NULL },
	{ M_K_PRODUCED, C, "fabricbus_kafka_produced_total", "Messages handed to librdkafka.", NULL },
	{ M_K_SKIPPED, C, "fabricbus_kafka_skipped_total",
	  "Messages not resent because Kafka already had them.", NULL },
	{ M_K_ERRORS, C, "fabricbus_kafka_errors_total",
	  "Permanent Kafka delivery errors and other failures.", NULL },
};
#undef C
#undef G

struct fb_broker_metrics *fb_broker_metrics_new(struct fb_metrics *r)
{
	struct fb_broker_metrics *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	struct fb_metric *info = fb_metrics_add(r, FB_METRIC_GAUGE, "fabricbus_build_info",
						"Always 1; the version is the label.",
						"daemon=\"fabricbusd\",version=\"" FB_VERSION "\"");
	fb_metric_set(info, 1);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	fb_metric_set(fb_metrics_add(r, FB_METRIC_GAUGE, "process_start_time_seconds",
				     "Start time of the process since the Unix epoch.", NULL),
		      (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		m->m[defs[i].id] = fb_metrics_add(r, defs[i].type, defs[i].name, defs[i].help, defs[i].labels);
		if (!m->m[defs[i].id] || !info)
			goto fail;
	}
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

struct fb_metric *fb_broker_metrics_fsync(struct fb_broker_metrics *m) { return m ? m->fsync : NULL; }

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
	fb_metric_set(m->m[M_K_BACKLOG], b->committed_id > st.cursor ? (double)(b->committed_id - st.cursor) : 0);
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
	update_listeners(m, b);
	update_kafka(m, b);
}

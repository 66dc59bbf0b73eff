#include "config.h"

#include "fb_addr.h"
#include "fb_conf.h"
#include "fb_err.h"
#include "fb_event.h"
#include "fb_log.h"
#include "kafka_conf.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const sync_names[] = { "batch", "interval", "none", NULL };
static const char *const target_names[] = { "stderr", "syslog", NULL };
static const char *const tls_names[] = { "off", "optional", "required", NULL };

static int parse_identity(void *cfg, const struct fb_conf_key *k, const char *v, char *why,
			  size_t whysz)
{
	(void)k;
	return fb_ident_rule_parse(&((struct fb_config *)cfg)->agent_identity, v, why, whysz);
}

static int parse_kafka_map(void *cfg, const struct fb_conf_key *k, const char *v, char *why,
			   size_t whysz)
{
	return fb_kafka_topic_map_parse(v, (struct fb_kafka_topic_map *)((char *)cfg + k->off), why,
					whysz);
}

static int parse_kafka_sub(void *cfg, const struct fb_conf_key *k, const char *v, char *why,
			   size_t whysz)
{
	struct fb_config *c = cfg;
	(void)k;
	if (c->n_kafka_subs == FB_KAFKA_SUBS_MAX)
		return fb_err_set(why, whysz, FB_ECONFIG, "at most %d subscriptions", FB_KAFKA_SUBS_MAX);
	int rc = fb_kafka_sub_parse(v, &c->kafka_subs[c->n_kafka_subs], why, whysz);
	if (!rc)
		c->n_kafka_subs++;
	return rc;
}

static int check_kafka_prop(const char *name, const char *val, char *why, size_t whysz)
{
	char w[480];
	if (fb_kafka_prop_check(name, val, w, sizeof(w)))
		return fb_err_set(why, whysz, FB_ECONFIG, ": %s", w);
	return 0;
}

/* A URL the OFMF core or we are reached at: http(s)://host[:port], no path. */
static int base_url_ok(const char *v)
{
	const char *h = strncmp(v, "http://", 7) == 0 ? v + 7 : strncmp(v, "https://", 8) == 0 ? v + 8 : NULL;
	if (!h || !*h || strpbrk(h, "/ ?#\"\\"))
		return 0;
	for (; *v; v++)
		if ((unsigned char)*v <= ' ' || (unsigned char)*v >= 0x7f)
			return 0;
	return 1;
}

static int cm_id_ok(const char *v)
{
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && !strchr("-_.", *v))
			return 0;
	return 1;
}

#define F(f) offsetof(struct fb_config, f)
#define S(f) sizeof(((struct fb_config *)0)->f)
#define PATH_EXPECT "expected a non-empty path of at most %zu bytes"

/* One row per key: the whole configuration surface in one place (fb_conf.h). */
static const struct fb_conf_key keys[] = {
	{ "AgentListen", FB_CONF_HOSTPORT, F(agent_host), F(agent_port), S(agent_host),
	  .help = "address:port for agent connections" },
	{ "HttpListen", FB_CONF_HOSTPORT, F(http_host), F(http_port), S(http_host),
	  .help = "address:port for WebSocket subscribers and /status" },
	{ "JournalDir", FB_CONF_STRING, F(journal_dir), 0, S(journal_dir), .expect = PATH_EXPECT,
	  .help = "journal directory" },
	{ "JournalSync", FB_CONF_ENUM, F(sync_policy), .names = sync_names,
	  .help = "batch, interval or none" },
	{ "JournalSyncInterval", FB_CONF_DURATION_MS, F(sync_interval_ms), .min = 1, .max = 60000,
	  .help = "fdatasync period for JournalSync=interval" },
	{ "JournalSegmentSize", FB_CONF_SIZE, F(segment_bytes), .min = 64 << 10, .max = 1ull << 40,
	  .help = "roll journal segments at this size" },
	{ "JournalRetainSize", FB_CONF_SIZE, F(retain_bytes), .min = 0, .max = UINT64_MAX,
	  .help = "delete oldest segments past this total (0 = keep all)" },
	{ "JournalRetainAge", FB_CONF_DURATION_S, F(retain_age_s), .min = 0, .max = UINT64_MAX,
	  .help = "delete segments older than this (0 = keep all)" },
	{ "JournalCacheSize", FB_CONF_SIZE, F(journal_cache_bytes), .min = 0, .max = UINT64_MAX,
	  .help = "synced journal bytes left in the page cache (0 = leave it to the kernel)" },
	{ "MaxFrameSize", FB_CONF_SIZE, F(max_frame), .min = 4096, .max = 64u << 20,
	  .help = "largest agent frame body" },
	{ "HeartbeatInterval", FB_CONF_DURATION_MS, F(heartbeat_ms), .min = 100, .max = 3600000,
	  .help = "agent heartbeat period; silent agents are dropped after 3x" },
	{ "MaxAgents", FB_CONF_COUNT, F(max_agents), .min = 1, .max = 10000000,
	  .help = "agent connections at once" },
	{ "MaxSeqGap", FB_CONF_COUNT, F(max_seq_gap), .min = 1, .max = 1ull << 32,
	  .help = "an agent's event seq may be at most this above what the broker holds" },
	{ "HelloTimeout", FB_CONF_DURATION_MS, F(hello_timeout_ms), .min = 100, .max = 3600000,
	  .help = "close agent connections that sent no HELLO (and TLS handshake) by then" },
	{ "MaxAgentsPerAddress", FB_CONF_COUNT, F(max_agents_per_addr), .min = 1, .max = 10000000,
	  .help = "agent connections at once from one source address" },
	{ "AgentIdleExpiry", FB_CONF_DURATION_S, F(agent_idle_expiry_s), .min = 0,
	  .max = 365ull * 86400, .help = "forget unconnected agent ids after this (0 = never)" },
	{ "AgentReadBudget", FB_CONF_SIZE, F(agent_read_budget), .min = 4096, .max = 64u << 20,
	  .help = "frame bytes one agent connection is served before the others get a turn" },
	{ "JobsMax", FB_CONF_COUNT, F(jobs_max), .min = 1, .max = 10000000,
	  .help = "jobs registered at once (POST /fabric/jobs); beyond, 429" },
	{ "JobMembersMax", FB_CONF_COUNT, F(job_members_max), .min = 1, .max = 1ull << 28,
	  .help = "(job, node) pairs over all registered jobs; beyond, 429" },
	{ "JobNodesMax", FB_CONF_COUNT, F(job_nodes_max), .min = 1, .max = 65536,
	  .help = "nodes in one job registration; beyond, 413" },
	{ "JobTtl", FB_CONF_DURATION_S, F(job_ttl_s), .min = 0, .max = 365ull * 86400,
	  .help = "forget a job not registered again within this (0 = never)" },
	{ "MapRenderThread", FB_CONF_BOOL, F(map_render_thread),
	  .help = "render GET /fabric/map on a thread of its own (no: on the event loop, which stalls acks)" },
	{ "AgentTls", FB_CONF_ENUM, F(agent_tls), .names = tls_names,
	  .help = "off, optional or required: TLS with client certificates on the agent port" },
	{ "AgentTlsCert", FB_CONF_STRING, F(agent_tls_cert), 0, S(agent_tls_cert),
	  .flags = FB_CONF_EMPTY_OK, .help = "PEM certificate (chain) of the agent port" },
	{ "AgentTlsKey", FB_CONF_STRING, F(agent_tls_key), 0, S(agent_tls_key),
	  .flags = FB_CONF_EMPTY_OK, .help = "PEM private key of AgentTlsCert" },
	{ "AgentTlsCa", FB_CONF_STRING, F(agent_tls_ca), 0, S(agent_tls_ca),
	  .flags = FB_CONF_EMPTY_OK, .help = "PEM CA bundle that agents' client certificates chain to" },
	{ "AgentIdentity", FB_CONF_CUSTOM, F(agent_identity), .flags = FB_CONF_REPEAT,
	  .parse = parse_identity,
	  .help = "CN:<glob> -> <id-glob>... or SAN:<glob> -> ...: ids a certificate may use" },
	{ "MaxHttpConnections", FB_CONF_COUNT, F(max_http_connections), .min = 1, .max = 10000000,
	  .help = "HTTP and WebSocket connections at once" },
	{ "HttpTls", FB_CONF_ENUM, F(http_tls), .names = tls_names,
	  .help = "off, optional or required: HTTPS and wss on HttpListen (docs/security.md)" },
	{ "HttpTlsCert", FB_CONF_STRING, F(http_tls_cert), 0, S(http_tls_cert),
	  .flags = FB_CONF_EMPTY_OK, .help = "PEM certificate (chain) of HttpListen" },
	{ "HttpTlsKey", FB_CONF_STRING, F(http_tls_key), 0, S(http_tls_key),
	  .flags = FB_CONF_EMPTY_OK, .help = "PEM private key of HttpTlsCert (mode 0600)" },
	{ "HttpTlsCa", FB_CONF_STRING, F(http_tls_ca), 0, S(http_tls_ca),
	  .flags = FB_CONF_EMPTY_OK,
	  .help = "PEM CA bundle: HTTPS clients must present a certificate chaining to it (empty = none asked)" },
	{ "HttpAllowPlain", FB_CONF_BOOL, F(http_allow_plain),
	  .help = "let HttpListen take plain HTTP on a non-loopback address (a SECURITY warning)" },
	{ "HttpTokens", FB_CONF_STRING, F(http_tokens), 0, S(http_tokens),
	  .flags = FB_CONF_EMPTY_OK, .expect = PATH_EXPECT,
	  .help = "bearer tokens file (NAME:ROLE:SHA256 lines, mode 0600; empty = none)" },
	{ "HttpAnonymousReads", FB_CONF_BOOL, F(http_anonymous_reads),
	  .help = "with logins configured, let /status, /fabric/map and /ws/events through without one" },
	{ "HttpPublicMetrics", FB_CONF_BOOL, F(http_public_metrics),
	  .help = "with logins configured, let GET /metrics through without one" },
	{ "WsRingEvents", FB_CONF_COUNT, F(ws_ring_events), .min = 1024, .max = 1u << 24,
	  .help = "serialized events kept in memory for subscribers" },
	{ "WsQueueEvents", FB_CONF_COUNT, F(ws_queue_events), .min = 16, .max = 1u << 24,
	  .help = "how far a live subscriber may lag; at the bound a slow reader goes on from the ring "
		  "and the journal, one that stopped reading (2 s) is cut off with a missed notice" },
	{ "WsMaxSubscribers", FB_CONF_COUNT, F(ws_max_subscribers), .min = 1, .max = 1000000,
	  .help = "WebSocket subscribers at once" },
	{ "SseHeartbeatInterval", FB_CONF_DURATION_S, F(sse_heartbeat_s), .min = 1, .max = 3600,
	  .help = "comment line sent on an idle Redfish SSE stream this often" },
	{ "WsPingInterval", FB_CONF_DURATION_S, F(ws_ping_s), .min = 1, .max = 3600,
	  .help = "WebSocket ping period" },
	{ "FabricName", FB_CONF_STRING, F(fabric_name), 0, S(fabric_name),
	  .ok = fb_fabric_name_valid, /* the agents' --fabric rule too */
	  .expect = "expected a non-empty name without '/', ' ', '?', '#', '%%' of at most %zu bytes",
	  .help = "fabric id in Redfish paths when an event names none" },
	{ "StormControl", FB_CONF_BOOL, F(storm_control),
	  .help = "root cause and flap control: the broker's own SwitchFailed/Degraded and FlapDetected "
		  "events (no: neither, symptoms only)" },
	{ "FlapTransitions", FB_CONF_COUNT, F(flap_transitions), .min = 2, .max = 32,
	  .help = "link transitions (downs and ups) on one switch port within FlapWindow that are a flap" },
	{ "FlapWindow", FB_CONF_DURATION_MS, F(flap_window_ms), .min = 100, .max = 86400000,
	  .help = "the window of FlapTransitions" },
	{ "FlapSummaryInterval", FB_CONF_DURATION_MS, F(flap_summary_ms), .min = 100, .max = 86400000,
	  .help = "while a port flaps, one 'suppressed N transitions' event this often" },
	{ "FlapStableFor", FB_CONF_DURATION_MS, F(flap_stable_ms), .min = 100, .max = 86400000,
	  .help = "a flapping port with no transition for this long is stable again" },
	{ "DedupWindow", FB_CONF_DURATION_MS, F(dedup_window_ms), .min = 0, .max = 3600000,
	  .help = "one cable's down (or up) reported again within this, from its other end or another "
		  "source, is a quiet duplicate of the first report (0: off)" },
	{ "RateLimitAgent", FB_CONF_COUNT, F(rate_limit_agent), .min = 0, .max = 1000000000,
	  .help = "events of one agent per RateLimitWindow before the rest are quiet, with a summary "
		  "(0: no limit)" },
	{ "RateLimitSubject", FB_CONF_COUNT, F(rate_limit_subject), .min = 0, .max = 1000000000,
	  .help = "events about one switch port or node per RateLimitWindow before the rest are quiet, "
		  "with a summary (0: no limit)" },
	{ "RateLimitWindow", FB_CONF_DURATION_MS, F(rate_limit_window_ms), .min = 100, .max = 86400000,
	  .help = "the window of RateLimitAgent and RateLimitSubject, and of their summaries" },
	{ "LogTarget", FB_CONF_ENUM, F(log_syslog), .names = target_names,
	  .help = "stderr or syslog" },
	{ "LogLevel", FB_CONF_LOGLEVEL, F(log_level), .help = "error, warn, info or debug" },
	{ "KafkaBrokers", FB_CONF_HOSTPORT_LIST, F(kafka_brokers), 0, S(kafka_brokers),
	  .flags = FB_CONF_EMPTY_OK,
	  .help = "host:port[,host:port] of Kafka bootstrap brokers (empty = Kafka off)" },
	{ "KafkaTopicMap", FB_CONF_CUSTOM, F(kafka_map), .parse = parse_kafka_map,
	  .help = "MessageId registry prefix -> topic, first match wins, *:topic last" },
	{ "KafkaSubscription", FB_CONF_CUSTOM, F(kafka_subs), .flags = FB_CONF_REPEAT,
	  .parse = parse_kafka_sub,
	  .help = "<topic>?<filter>: also produce matching events to topic (repeatable)" },
	{ "KafkaCursorSync", FB_CONF_DURATION_MS, F(kafka_cursor_sync_ms), .min = 10, .max = 60000,
	  .help = "how often the Kafka cursor is persisted" },
	{ "OfmfCore", FB_CONF_STRING, F(ofmf_core), 0, S(ofmf_core), .flags = FB_CONF_EMPTY_OK,
	  .ok = base_url_ok, .expect = "expected http://host:port of an OFMF core (at most %zu bytes)",
	  .help = "register with this OFMF (Sunfish) core (empty = off; docs/ofmf.md)" },
	{ "OfmfBaseUrl", FB_CONF_STRING, F(ofmf_base_url), 0, S(ofmf_base_url),
	  .flags = FB_CONF_EMPTY_OK, .ok = base_url_ok,
	  .expect = "expected http://host:port the core reaches us at (at most %zu bytes)",
	  .help = "our URL as the OFMF core reaches it (empty = http://HttpListen)" },
	{ "OfmfConnectionMethodId", FB_CONF_STRING, F(ofmf_cm_id), 0, S(ofmf_cm_id),
	  .flags = FB_CONF_EMPTY_OK, .ok = cm_id_ok,
	  .expect = "expected letters, digits, '-', '_', '.' (at most %zu bytes)",
	  .help = "our ConnectionMethod id, one per broker (empty = fabricbus-<service UUID>)" },
	{ "OfmfCheckInterval", FB_CONF_DURATION_MS, F(ofmf_check_ms), .min = 100, .max = 86400000,
	  .help = "how often the OFMF registration is checked with the core" },
	{ "RedfishPushCAFile", FB_CONF_STRING, F(push_ca_file), 0, S(push_ca_file),
	  .flags = FB_CONF_EMPTY_OK, .expect = PATH_EXPECT,
	  .help = "PEM CA bundle that HTTPS push destinations are verified against (empty = system CAs)" },
	{ "RedfishDeliveryRetryAttempts", FB_CONF_COUNT, F(push_retry_attempts), .min = 0, .max = 1000,
	  .help = "EventService DeliveryRetryAttempts: retries before TerminateAfterRetries/SuspendRetries act" },
	{ "RedfishDeliveryRetryInterval", FB_CONF_DURATION_MS, F(push_retry_interval_ms), .min = 100,
	  .max = 86400000, .help = "EventService DeliveryRetryIntervalSeconds: wait between delivery tries" },
	{ "RedfishPushMaxBackoff", FB_CONF_DURATION_MS, F(push_max_backoff_ms), .min = 100,
	  .max = 86400000, .help = "longest wait of RetryForeverWithBackoff" },
	{ "RedfishPushTimeout", FB_CONF_DURATION_MS, F(push_timeout_ms), .min = 100, .max = 600000,
	  .help = "time one push delivery may take before it counts as failed" },
	{ "RedfishPushCursorSync", FB_CONF_DURATION_MS, F(push_cursor_sync_ms), .min = 10, .max = 60000,
	  .help = "how often the push cursors are persisted while they move" },
	{ "RedfishHeartbeatUnit", FB_CONF_DURATION_MS, F(push_heartbeat_unit_ms), .min = 100,
	  .max = 3600000, .help = "length of one HeartbeatIntervalMinutes minute (1m; tests shorten it)" },
	{ "RedfishAccounts", FB_CONF_STRING, F(rf_accounts), 0, S(rf_accounts),
	  .flags = FB_CONF_EMPTY_OK, .expect = PATH_EXPECT,
	  .help = "Redfish accounts file (USER:ROLE:HASH, mode 0600; fabricbus passwd); "
		  "empty = no logins, writes unauthenticated" },
	{ "RedfishAnonymousReads", FB_CONF_BOOL, F(rf_anonymous_reads),
	  .help = "let Redfish GETs through without a login (writes still need one)" },
	{ "RedfishSessionTimeout", FB_CONF_DURATION_S, F(rf_session_timeout_s), .min = 30,
	  .max = 86400, .help = "idle time after which a Redfish session ends (PATCHable)" },
	{ "RedfishMaxSessions", FB_CONF_COUNT, F(rf_max_sessions), .min = 1, .max = 65536,
	  .help = "Redfish sessions at once" },
	{ "RedfishLoginFailures", FB_CONF_COUNT, F(rf_login_failures), .min = 1, .max = 1000,
	  .help = "failed logins from one address for one user before it is locked out" },
	{ "RedfishLoginLockout", FB_CONF_DURATION_S, F(rf_login_lockout_s), .min = 1, .max = 86400,
	  .help = "how long such a lockout lasts" },
};

/* kafka.<librdkafka property>=<value>: kept in order for rd_kafka_conf_set. */
static const struct fb_conf_table table = {
	keys, sizeof(keys) / sizeof(keys[0]),
	{ "kafka.", F(kafka_props), F(n_kafka_props), sizeof(struct fb_kafka_prop),
	  offsetof(struct fb_kafka_prop, value), FB_KAFKA_PROP_NAME_MAX, FB_KAFKA_PROP_VALUE_MAX,
	  FB_KAFKA_PROPS_MAX, check_kafka_prop },
	"fabricbusd --help-config", 0,
};

void fb_config_defaults(struct fb_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->agent_host, "127.0.0.1");
	c->agent_port = 7411;
	strcpy(c->http_host, "127.0.0.1");
	c->http_port = 7412;
	strcpy(c->journal_dir, "fabricbus-journal");
	c->sync_policy = FB_SYNC_BATCH;
	c->sync_interval_ms = 10;
	c->segment_bytes = 64ull << 20;
	c->retain_bytes = 10ull << 30;
	c->retain_age_s = 7 * 86400;
	c->journal_cache_bytes = 32ull << 20;
	c->max_frame = 1u << 20;
	c->heartbeat_ms = 5000;
	c->max_agents = 100000;
	c->max_seq_gap = 65536;
	c->hello_timeout_ms = 10000;
	c->max_agents_per_addr = 1024;
	c->agent_idle_expiry_s = 3600;
	c->agent_read_budget = 256u << 10;
	c->jobs_max = 20000;
	c->job_members_max = 1u << 18;
	c->job_nodes_max = 16384;
	c->job_ttl_s = 7 * 86400;
	c->map_render_thread = 1;
	c->agent_tls = FB_AGENT_TLS_OFF;
	c->max_http_connections = 8192;
	c->ws_ring_events = 65536;
	c->ws_queue_events = 16384;
	c->ws_max_subscribers = 4096;
	c->ws_ping_s = 30;
	c->sse_heartbeat_s = 30;
	strcpy(c->fabric_name, "IB");
	c->storm_control = 1;
	c->flap_transitions = 6;
	c->flap_window_ms = 60000;
	c->flap_summary_ms = 10000;
	c->flap_stable_ms = 30000;
	c->dedup_window_ms = 2000;
	c->rate_limit_agent = 0;
	c->rate_limit_subject = 0;
	c->rate_limit_window_ms = 10000;
	c->log_syslog = 0;
	c->log_level = FB_LOG_INFO;
	char why[64];
	if (fb_kafka_topic_map_parse(FB_KAFKA_DEFAULT_MAP, &c->kafka_map, why, sizeof(why)))
		abort(); /* the default is a constant proven by test_kafka_topics */
	c->kafka_cursor_sync_ms = 100;
	c->ofmf_check_ms = 10000;
	c->push_retry_attempts = 3;
	c->push_retry_interval_ms = 60000;
	c->push_max_backoff_ms = 3600000;
	c->push_timeout_ms = 10000;
	c->push_cursor_sync_ms = 200;
	c->push_heartbeat_unit_ms = 60000;
	c->rf_session_timeout_s = 1800;
	c->rf_max_sessions = 256;
	c->rf_login_failures = 5;
	c->rf_login_lockout_s = 60;
}

const char *fb_sync_policy_name(int p)
{
	return p == FB_SYNC_BATCH ? "batch" : p == FB_SYNC_INTERVAL ? "interval" : "none";
}

/* The value syntax is shared with fabricbus-slurm: proto/fb_conf.c. */
int fb_parse_size(const char *s, uint64_t *out) { return fb_conf_parse_size(s, out); }
int fb_parse_duration_ms(const char *s, uint64_t *out) { return fb_conf_parse_duration_ms(s, out); }

int fb_parse_hostport(const char *s, char *host, size_t hostsz, int *port)
{
	return fb_addr_parse(s, NULL, host, hostsz, port) ? FB_ECONFIG : 0;
}

int fb_config_set(struct fb_config *c, const char *keyval, const char *origin, char *err, size_t errsz)
{
	return fb_conf_set_option(&table, c, keyval, origin, err, errsz);
}

int fb_config_load_file(struct fb_config *c, const char *path, char *err, size_t errsz)
{
	return fb_conf_load_file(&table, c, path, err, errsz);
}

int fb_config_is_loopback(const char *host)
{
	return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
	       strcasecmp(host, "localhost") == 0;
}

int fb_config_check(const struct fb_config *c, char *err, size_t errsz)
{
	if (c->agent_port == c->http_port && strcmp(c->agent_host, c->http_host) == 0)
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "AgentListen and HttpListen must differ (both %s:%d)", c->agent_host,
				  c->agent_port);
	if (c->agent_tls != FB_AGENT_TLS_OFF &&
	    (!c->agent_tls_cert[0] || !c->agent_tls_key[0] || !c->agent_tls_ca[0])) {
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "AgentTls=%s needs AgentTlsCert, AgentTlsKey and AgentTlsCa "
				  "(docs/security.md)", tls_names[c->agent_tls]);
	}
	if (c->http_tls != FB_AGENT_TLS_OFF && (!c->http_tls_cert[0] || !c->http_tls_key[0]))
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "HttpTls=%s needs HttpTlsCert and HttpTlsKey (docs/security.md)",
				  tls_names[c->http_tls]);
	if (c->http_tls != FB_AGENT_TLS_REQUIRED && !c->http_allow_plain &&
	    !fb_config_is_loopback(c->http_host)) {
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "HttpListen=%s:%d would take plain HTTP from the network (tokens, "
				  "passwords and events in the clear): set HttpTls=required with HttpTlsCert and "
				  "HttpTlsKey, or HttpAllowPlain=yes to accept that (docs/security.md)",
				  c->http_host, c->http_port);
	}
	if (c->ws_queue_events > c->ws_ring_events)
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "WsQueueEvents (%" PRIu64 ") must not exceed WsRingEvents (%" PRIu64 ")",
				  c->ws_queue_events, c->ws_ring_events);
	if (c->ofmf_core[0] && !c->ofmf_base_url[0] &&
	    (strcmp(c->http_host, "0.0.0.0") == 0 || strcmp(c->http_host, "::") == 0)) {
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "OfmfBaseUrl is needed when HttpListen is a wildcard (%s): the "
				  "OFMF core must be told where to reach us", c->http_host);
	}
	if (c->retain_bytes && c->retain_bytes < 2 * c->segment_bytes)
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "JournalRetainSize must be 0 or at least twice JournalSegmentSize");
	return 0;
}

void fb_config_print(const struct fb_config *c, void *file)
{
	FILE *f = file;
	fprintf(f, "AgentListen=%s:%d\nHttpListen=%s:%d\nJournalDir=%s\nJournalSync=%s\n",
		c->agent_host, c->agent_port, c->http_host, c->http_port, c->journal_dir,
		fb_sync_policy_name(c->sync_policy));
	fprintf(f, "JournalSyncInterval=%" PRIu64 "ms\nJournalSegmentSize=%" PRIu64
		   "\nJournalRetainSize=%" PRIu64 "\nJournalRetainAge=%" PRIu64 "s\nJournalCacheSize=%" PRIu64
		   "\n",
		c->sync_interval_ms, c->segment_bytes, c->retain_bytes, c->retain_age_s,
		c->journal_cache_bytes);
	fprintf(f, "MaxFrameSize=%" PRIu64 "\nHeartbeatInterval=%" PRIu64 "ms\nMaxAgents=%" PRIu64
		   "\nMaxHttpConnections=%" PRIu64 "\n",
		c->max_frame, c->heartbeat_ms, c->max_agents, c->max_http_connections);
	fprintf(f, "MaxSeqGap=%" PRIu64 "\nHelloTimeout=%" PRIu64 "ms\nMaxAgentsPerAddress=%" PRIu64
		   "\nAgentIdleExpiry=%" PRIu64 "s\nAgentReadBudget=%" PRIu64 "\n",
		c->max_seq_gap, c->hello_timeout_ms, c->max_agents_per_addr, c->agent_idle_expiry_s,
		c->agent_read_budget);
	fprintf(f, "JobsMax=%" PRIu64 "\nJobMembersMax=%" PRIu64 "\nJobNodesMax=%" PRIu64
		   "\nJobTtl=%" PRIu64 "s\nMapRenderThread=%s\n",
		c->jobs_max, c->job_members_max, c->job_nodes_max, c->job_ttl_s,
		c->map_render_thread ? "yes" : "no");
	fprintf(f, "AgentTls=%s\nAgentTlsCert=%s\nAgentTlsKey=%s\nAgentTlsCa=%s\n",
		tls_names[c->agent_tls], c->agent_tls_cert, c->agent_tls_key, c->agent_tls_ca);
	for (unsigned i = 0; i < c->agent_identity.n; i++) {
		char rule[FB_IDENT_NAME_MAX + FB_IDENT_IDS_MAX + 16];
		fb_ident_rule_format(&c->agent_identity.r[i], rule, sizeof(rule));
		fprintf(f, "AgentIdentity=%s\n", rule);
	}
	fprintf(f, "HttpTls=%s\nHttpTlsCert=%s\nHttpTlsKey=%s\nHttpTlsCa=%s\nHttpAllowPlain=%s\n"
		   "HttpTokens=%s\nHttpAnonymousReads=%s\nHttpPublicMetrics=%s\n",
		tls_names[c->http_tls], c->http_tls_cert, c->http_tls_key, c->http_tls_ca,
		c->http_allow_plain ? "yes" : "no", c->http_tokens,
		c->http_anonymous_reads ? "yes" : "no", c->http_public_metrics ? "yes" : "no");
	fprintf(f, "WsRingEvents=%" PRIu64 "\nWsQueueEvents=%" PRIu64 "\nWsMaxSubscribers=%" PRIu64
		   "\nWsPingInterval=%" PRIu64 "s\n",
		c->ws_ring_events, c->ws_queue_events, c->ws_max_subscribers, c->ws_ping_s);
	fprintf(f, "SseHeartbeatInterval=%" PRIu64 "s\n", c->sse_heartbeat_s);
	fprintf(f, "StormControl=%s\n", c->storm_control ? "yes" : "no");
	fprintf(f, "FlapTransitions=%" PRIu64 "\nFlapWindow=%" PRIu64 "ms\nFlapSummaryInterval=%" PRIu64
		   "ms\nFlapStableFor=%" PRIu64 "ms\n",
		c->flap_transitions, c->flap_window_ms, c->flap_summary_ms, c->flap_stable_ms);
	fprintf(f, "DedupWindow=%" PRIu64 "ms\n", c->dedup_window_ms);
	fprintf(f, "RateLimitAgent=%" PRIu64 "\nRateLimitSubject=%" PRIu64 "\nRateLimitWindow=%" PRIu64 "ms\n",
		c->rate_limit_agent, c->rate_limit_subject, c->rate_limit_window_ms);
	static const char *const lv[] = { "error", "warn", "info", "debug" };
	fprintf(f, "FabricName=%s\nLogTarget=%s\nLogLevel=%s\n", c->fabric_name,
		c->log_syslog ? "syslog" : "stderr", lv[c->log_level & 3]);
	char map[FB_KAFKA_MAP_MAX * (FB_KAFKA_PREFIX_MAX + FB_KAFKA_TOPIC_MAX + 2)];
	fb_kafka_topic_map_format(&c->kafka_map, map, sizeof(map));
	fprintf(f, "KafkaBrokers=%s\nKafkaTopicMap=%s\nKafkaCursorSync=%" PRIu64 "ms\n",
		c->kafka_brokers, map, c->kafka_cursor_sync_ms);
	for (unsigned i = 0; i < c->n_kafka_subs; i++)
		fprintf(f, "KafkaSubscription=%s%s%s\n", c->kafka_subs[i].topic,
			c->kafka_subs[i].text[0] ? "?" : "", c->kafka_subs[i].text);
	fprintf(f, "OfmfCore=%s\nOfmfBaseUrl=%s\nOfmfConnectionMethodId=%s\nOfmfCheckInterval=%" PRIu64
		   "ms\n",
		c->ofmf_core, c->ofmf_base_url, c->ofmf_cm_id, c->ofmf_check_ms);
	fprintf(f, "RedfishPushCAFile=%s\nRedfishDeliveryRetryAttempts=%" PRIu64
		   "\nRedfishDeliveryRetryInterval=%" PRIu64 "ms\nRedfishPushMaxBackoff=%" PRIu64
		   "ms\nRedfishPushTimeout=%" PRIu64 "ms\nRedfishPushCursorSync=%" PRIu64
		   "ms\nRedfishHeartbeatUnit=%" PRIu64 "ms\n",
		c->push_ca_file, c->push_retry_attempts, c->push_retry_interval_ms,
		c->push_max_backoff_ms, c->push_timeout_ms, c->push_cursor_sync_ms,
		c->push_heartbeat_unit_ms);
	fprintf(f, "RedfishAccounts=%s\nRedfishAnonymousReads=%s\nRedfishSessionTimeout=%" PRIu64
		   "s\nRedfishMaxSessions=%" PRIu64 "\nRedfishLoginFailures=%" PRIu64
		   "\nRedfishLoginLockout=%" PRIu64 "s\n",
		c->rf_accounts, c->rf_anonymous_reads ? "yes" : "no", c->rf_session_timeout_s,
		c->rf_max_sessions, c->rf_login_failures, c->rf_login_lockout_s);
	fb_conf_print_props(&table, c, f);
}

void fb_config_help(void *file)
{
	FILE *f = file;
	fb_conf_help(&table, f);
	fprintf(f, "  %-20s %s\n", "kafka.<property>",
		"a librdkafka property, e.g. kafka.security.protocol=SASL_SSL (docs/kafka.md)");
}

/* config.h - fabricbusd configuration: embedded defaults, then a
 * slurm.conf-style file (Key=Value lines, '#' comments, keys case-insensitive),
 * then -o Key=Value overrides from the command line.
 *
 * Unknown keys, duplicate keys and bad values are refused with a message that
 * names the file and line. The loaded config is one of the two pieces of
 * process-wide state (the other is the logger); it is read-only after start.
 */
#ifndef FB_CONFIG_H
#define FB_CONFIG_H

#include "agent_identity.h"
#include "kafka_topics.h"

#include <stddef.h>
#include <stdint.h>

#define FB_KAFKA_PROPS_MAX 64
#define FB_KAFKA_PROP_NAME_MAX 128
#define FB_KAFKA_PROP_VALUE_MAX 1024

/* A kafka.<property>=<value> line, handed to rd_kafka_conf_set in order. */
struct fb_kafka_prop {
	char name[FB_KAFKA_PROP_NAME_MAX]; /* without the "kafka." */
	char value[FB_KAFKA_PROP_VALUE_MAX];
};

enum fb_sync_policy {
	FB_SYNC_BATCH = 0,    /* fdatasync before every ack (group commit) */
	FB_SYNC_INTERVAL = 1, /* fdatasync every JournalSyncInterval; acks wait for it */
	FB_SYNC_NONE = 2,     /* ack after write(2); survives a broker crash, not power loss */
};

enum fb_agent_tls_mode {
	FB_AGENT_TLS_OFF = 0,      /* plain TCP only */
	FB_AGENT_TLS_OPTIONAL = 1, /* TLS with a client certificate, or plain TCP */
	FB_AGENT_TLS_REQUIRED = 2, /* TLS with a client certificate only */
};

struct fb_config {
	char agent_host[256];
	int agent_port;
	char http_host[256];
	int http_port;
	char journal_dir[4096];
	int sync_policy;            /* enum fb_sync_policy */
	uint64_t sync_interval_ms;
	uint64_t segment_bytes;
	uint64_t retain_bytes;
	uint64_t retain_age_s;
	uint64_t journal_cache_bytes;
	uint64_t max_frame;
	uint64_t heartbeat_ms;
	uint64_t max_agents;
	/* The agent port's guards (ingest.c, docs/security.md). */
	uint64_t max_seq_gap;         /* an event seq may be at most this above the stored one */
	uint64_t hello_timeout_ms;    /* a connection without HELLO by then is closed */
	uint64_t max_agents_per_addr; /* connections at once from one source address */
	uint64_t agent_idle_expiry_s; /* unconnected agent ids leave memory after this (0 never) */
	uint64_t agent_read_budget;   /* bytes of frames one connection may have handled per turn */
	uint64_t jobs_max;            /* jobs registered at once (POST /fabric/jobs) */
	uint64_t job_members_max;     /* (job, node) pairs over all jobs */
	uint64_t job_nodes_max;       /* nodes of one job */
	uint64_t job_ttl_s;           /* a registration not made again within this expires (0 never) */
	int map_render_thread;        /* render /fabric/map off the loop (fabric_map.h) */
	int agent_tls;                /* enum fb_agent_tls_mode */
	char agent_tls_cert[4096];
	char agent_tls_key[4096];
	char agent_tls_ca[4096];
	struct fb_ident_rules agent_identity;
	uint64_t max_http_connections; /* HTTP + WebSocket connections at once */
	/* TLS and auth on HttpListen (broker/http/ws_tls.h, docs/security.md). */
	int http_tls;                 /* enum fb_agent_tls_mode: off, optional, required */
	char http_tls_cert[4096];
	char http_tls_key[4096];
	char http_tls_ca[4096];       /* "" = no client certificates asked for */
	int http_allow_plain;         /* plain HTTP on a non-loopback HttpListen */
	char http_tokens[4096];       /* bearer tokens file (rf_token.h); "" = none */
	int http_anonymous_reads;     /* /status, /fabric/map, /ws/events without a login */
	int http_public_metrics;      /* GET /metrics without a login */
	uint64_t ws_ring_events;
	uint64_t ws_queue_events;
	uint64_t ws_max_subscribers;
	uint64_t ws_ping_s;
	uint64_t sse_heartbeat_s;
	char fabric_name[32];
	int storm_control;          /* StormControl: root cause and flap control outputs */
	/* Flap control (broker/fabric/flap.h, docs/topology.md). */
	uint64_t flap_transitions;  /* link transitions on a port... */
	uint64_t flap_window_ms;    /* ...within this are a flap */
	uint64_t flap_summary_ms;   /* "suppressed N" summary period while it flaps */
	uint64_t flap_stable_ms;    /* quiet time that ends it */
	uint64_t dedup_window_ms;   /* DedupWindow: duplicates of a link-state report (dedupctl.h); 0 off */
	/* Rate limits (broker/fabric/ratelimit.h, docs/topology.md); 0: off. */
	uint64_t rate_limit_agent;     /* events of one agent per window */
	uint64_t rate_limit_subject;   /* events about one switch port or node per window */
	uint64_t rate_limit_window_ms;
	int log_syslog;
	int log_level;              /* enum fb_log_level */

	/* Kafka (kafka_sink.c, docs/kafka.md); off while kafka_brokers is "". */
	char kafka_brokers[1024];
	struct fb_kafka_topic_map kafka_map;
	unsigned n_kafka_subs;
	struct fb_kafka_sub kafka_subs[FB_KAFKA_SUBS_MAX];
	uint64_t kafka_cursor_sync_ms;
	unsigned n_kafka_props;
	struct fb_kafka_prop kafka_props[FB_KAFKA_PROPS_MAX];

	/* OFMF registration (broker/ofmf, docs/ofmf.md); off while ofmf_core is "". */
	char ofmf_core[512];       /* the core's base URL, "http://127.0.0.1:5000" */
	char ofmf_base_url[512];   /* ours as the core reaches it; "" = http://HttpListen */
	char ofmf_cm_id[64];       /* our ConnectionMethod id; "" = from the service UUID */
	uint64_t ofmf_check_ms;    /* how often the registration is checked */
	/* Redfish push delivery (broker/push/, docs/redfish-push.md). */
	char push_ca_file[4096];      /* "" = the system CAs */
	uint64_t push_retry_attempts; /* EventService DeliveryRetryAttempts */
	uint64_t push_retry_interval_ms; /* DeliveryRetryIntervalSeconds */
	uint64_t push_max_backoff_ms; /* RetryForeverWithBackoff's longest wait */
	uint64_t push_timeout_ms;     /* one delivery */
	uint64_t push_cursor_sync_ms; /* how often push.cursors is written */
	uint64_t push_heartbeat_unit_ms; /* one HeartbeatIntervalMinutes "minute" */
	/* Redfish accounts and sessions (broker/redfish/rf_auth*, docs/redfish.md).
	 * No accounts file: Redfish reads are open and /fabric/jobs writes are
	 * unauthenticated (a warning at start), as before accounts existed. */
	char rf_accounts[4096];
	int rf_anonymous_reads;
	uint64_t rf_session_timeout_s;
	uint64_t rf_max_sessions;
	uint64_t rf_login_failures;
	uint64_t rf_login_lockout_s;
};

/* Fill c with the embedded defaults (a demo in the current directory). */
void fb_config_defaults(struct fb_config *c);
/* Apply a file. Returns 0 or FB_ECONFIG after writing "path:line: why" into
 * err. A missing file is an error (the caller chose to name it). */
int fb_config_load_file(struct fb_config *c, const char *path, char *err, size_t errsz);
/* Apply one "Key=Value" (origin names where it came from, e.g. "-o"). */
int fb_config_set(struct fb_config *c, const char *keyval, const char *origin, char *err,
		  size_t errsz);
/* Cross-field checks after everything is applied. */
int fb_config_check(const struct fb_config *c, char *err, size_t errsz);
/* Write the effective configuration as Key=Value lines (for --show-config). */
void fb_config_print(const struct fb_config *c, void *file /* FILE* */);
const char *fb_sync_policy_name(int policy);
/* Every key with a one-line meaning (for --help-config). */
void fb_config_help(void *file /* FILE* */);

/* 1 when host is a loopback address or "localhost" (plain TCP/HTTP on it
 * stays on this machine). */
int fb_config_is_loopback(const char *host);

/* Value parsers, exposed for tests: sizes take K/M/G/T (binary) suffixes,
 * durations ms/s/m/h/d (a bare number is seconds). 0 or FB_ECONFIG. */
int fb_parse_size(const char *s, uint64_t *out);
int fb_parse_duration_ms(const char *s, uint64_t *out);
int fb_parse_hostport(const char *s, char *host, size_t hostsz, int *port);

#endif

#include "config.h"

#include "fb_addr.h"
#include "fb_conf.h"
#include "fb_err.h"
#include "fb_log.h"
#include "kafka_conf.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum val_type { V_HOSTPORT, V_PATH, V_SYNC, V_SIZE, V_DURATION_MS, V_DURATION_S, V_COUNT, V_NAME,
		V_LOGTARGET, V_LOGLEVEL, V_KBROKERS, V_KMAP, V_KSUB };

/* One row per key: the whole configuration surface in one place. */
struct key_def {
	const char *key;
	enum val_type type;
	size_t off;       /* offset of the first field in struct fb_config */
	size_t off2;      /* second field (port of a host:port) */
	size_t size;      /* buffer size for strings */
	uint64_t min, max;/* bounds for numbers */
	const char *help;
};

#define F(f) offsetof(struct fb_config, f)
#define S(f) sizeof(((struct fb_config *)0)->f)

static const struct key_def keys[] = {
	{ "AgentListen", V_HOSTPORT, F(agent_host), F(agent_port), S(agent_host), 0, 0,
	  "address:port for agent connections" },
	{ "HttpListen", V_HOSTPORT, F(http_host), F(http_port), S(http_host), 0, 0,
	  "address:port for WebSocket subscribers and /status" },
	{ "JournalDir", V_PATH, F(journal_dir), 0, S(journal_dir), 0, 0, "journal directory" },
	{ "JournalSync", V_SYNC, F(sync_policy), 0, 0, 0, 0, "batch, interval or none" },
	{ "JournalSyncInterval", V_DURATION_MS, F(sync_interval_ms), 0, 0, 1, 60000,
	  "fdatasync period for JournalSync=interval" },
	{ "JournalSegmentSize", V_SIZE, F(segment_bytes), 0, 0, 64 << 10, 1ull << 40,
	  "roll journal segments at this size" },
	{ "JournalRetainSize", V_SIZE, F(retain_bytes), 0, 0, 0, UINT64_MAX,
	  "delete oldest segments past this total (0 = keep all)" },
	{ "JournalRetainAge", V_DURATION_S, F(retain_age_s), 0, 0, 0, UINT64_MAX,
	  "delete segments older than this (0 = keep all)" },
	{ "MaxFrameSize", V_SIZE, F(max_frame), 0, 0, 4096, 64u << 20, "largest agent frame body" },
	{ "HeartbeatInterval", V_DURATION_MS, F(heartbeat_ms), 0, 0, 100, 3600000,
	  "agent heartbeat period; silent agents are dropped after 3x" },
	{ "MaxAgents", V_COUNT, F(max_agents), 0, 0, 1, 10000000, "agent connections at once" },
	{ "MaxHttpConnections", V_COUNT, F(max_http_connections), 0, 0, 1, 10000000,
	  "HTTP and WebSocket connections at once" },
	{ "WsRingEvents", V_COUNT, F(ws_ring_events), 0, 0, 1024, 1u << 24,
	  "serialized events kept in memory for subscribers" },
	{ "WsQueueEvents", V_COUNT, F(ws_queue_events), 0, 0, 16, 1u << 24,
	  "how far a subscriber may lag before it is dropped" },
	{ "WsMaxSubscribers", V_COUNT, F(ws_max_subscribers), 0, 0, 1, 1000000,
	  "WebSocket subscribers at once" },
	{ "WsPingInterval", V_DURATION_S, F(ws_ping_s), 0, 0, 1, 3600, "WebSocket ping period" },
	{ "FabricName", V_NAME, F(fabric_name), 0, S(fabric_name), 0, 0,
	  "fabric id in Redfish paths when an event names none" },
	{ "LogTarget", V_LOGTARGET, F(log_syslog), 0, 0, 0, 0, "stderr or syslog" },
	{ "LogLevel", V_LOGLEVEL, F(log_level), 0, 0, 0, 0, "error, warn, info or debug" },
	{ "KafkaBrokers", V_KBROKERS, F(kafka_brokers), 0, S(kafka_brokers), 0, 0,
	  "host:port[,host:port] of Kafka bootstrap brokers (empty = Kafka off)" },
	{ "KafkaTopicMap", V_KMAP, F(kafka_map), 0, 0, 0, 0,
	  "MessageId registry prefix -> topic, first match wins, *:topic last" },
	{ "KafkaSubscription", V_KSUB, F(kafka_subs), 0, 0, 0, 0,
	  "<topic>?<filter>: also produce matching events to topic (repeatable)" },
	{ "KafkaCursorSync", V_DURATION_MS, F(kafka_cursor_sync_ms), 0, 0, 10, 60000,
	  "how often the Kafka cursor is persisted" },
};
/* kafka.<librdkafka property>=<value> lines are handled apart (set_kafka_prop). */
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

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
	c->max_frame = 1u << 20;
	c->heartbeat_ms = 5000;
	c->max_agents = 100000;
	c->max_http_connections = 8192;
	c->ws_ring_events = 65536;
	c->ws_queue_events = 16384;
	c->ws_max_subscribers = 4096;
	c->ws_ping_s = 30;
	strcpy(c->fabric_name, "IB");
	c->log_syslog = 0;
	c->log_level = FB_LOG_INFO;
	char why[64];
	if (fb_kafka_topic_map_parse(FB_KAFKA_DEFAULT_MAP, &c->kafka_map, why, sizeof(why)))
		abort(); /* the default is a constant proven by test_kafka_topics */
	c->kafka_cursor_sync_ms = 100;
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

static int set_string(char *dst, size_t dstsz, const char *v)
{
	size_t n = strlen(v);
	if (n == 0 || n >= dstsz)
		return FB_ECONFIG;
	memcpy(dst, v, n + 1);
	return 0;
}


/* Parse v for key k into c; on failure write what was expected into why. */
static int apply(struct fb_config *c, const struct key_def *k, const char *v, char *why, size_t whysz)
{
	char *base = (char *)c;
	uint64_t num = 0;
	int rc = 0;
	switch (k->type) {
	case V_HOSTPORT:
		rc = fb_parse_hostport(v, base + k->off, k->size, (int *)(base + k->off2));
		if (rc)
			snprintf(why, whysz, "expected HOST:PORT with a port 1..65535");
		return rc;
	case V_PATH:
	case V_NAME:
		rc = set_string(base + k->off, k->size, v);
		if (!rc && k->type == V_NAME && strpbrk(v, "/ ?#%"))
			rc = FB_ECONFIG;
		if (rc)
			snprintf(why, whysz, "expected a non-empty %s of at most %zu bytes",
				 k->type == V_NAME ? "name without '/', ' ', '?', '#', '%'" : "path",
				 k->size - 1);
		return rc;
	case V_SYNC:
		if (strcasecmp(v, "batch") == 0) *(int *)(base + k->off) = FB_SYNC_BATCH;
		else if (strcasecmp(v, "interval") == 0) *(int *)(base + k->off) = FB_SYNC_INTERVAL;
		else if (strcasecmp(v, "none") == 0) *(int *)(base + k->off) = FB_SYNC_NONE;
		else {
			snprintf(why, whysz, "expected batch, interval or none");
			return FB_ECONFIG;
		}
		return 0;
	case V_LOGTARGET:
		if (strcasecmp(v, "stderr") == 0) *(int *)(base + k->off) = 0;
		else if (strcasecmp(v, "syslog") == 0) *(int *)(base + k->off) = 1;
		else {
			snprintf(why, whysz, "expected stderr or syslog");
			return FB_ECONFIG;
		}
		return 0;
	case V_LOGLEVEL: {
		int l = fb_log_level_parse(v);
		if (l < 0) {
			snprintf(why, whysz, "expected error, warn, info or debug");
			return FB_ECONFIG;
		}
		*(int *)(base + k->off) = l;
		return 0;
	}
	case V_KBROKERS:
		return fb_conf_set_hostport_list(base + k->off, k->size, v, why, whysz);
	case V_KMAP:
		return fb_kafka_topic_map_parse(v, (struct fb_kafka_topic_map *)(base + k->off), why,
						whysz);
	case V_KSUB:
		if (c->n_kafka_subs == FB_KAFKA_SUBS_MAX) {
			snprintf(why, whysz, "at most %d subscriptions", FB_KAFKA_SUBS_MAX);
			return FB_ECONFIG;
		}
		rc = fb_kafka_sub_parse(v, &c->kafka_subs[c->n_kafka_subs], why, whysz);
		if (!rc)
			c->n_kafka_subs++;
		return rc;
	case V_SIZE:
		rc = fb_parse_size(v, &num);
		break;
	case V_DURATION_MS:
		rc = fb_parse_duration_ms(v, &num);
		break;
	case V_DURATION_S:
		rc = fb_parse_duration_ms(v, &num);
		num /= 1000;
		break;
	case V_COUNT: {
		char *end;
		errno = 0;
		num = strtoull(v, &end, 10);
		rc = (errno || *end || end == v || v[0] == '-') ? FB_ECONFIG : 0;
		break;
	}
	}
	if (!rc && (num < k->min || num > k->max))
		rc = FB_ECONFIG;
	if (rc) {
		const char *what = k->type == V_SIZE ? "a size such as 64M"
				   : k->type == V_COUNT ? "a whole number"
							: "a duration such as 500ms, 30s, 7d";
		snprintf(why, whysz, "expected %s between %" PRIu64 " and %" PRIu64, what, k->min, k->max);
		return rc;
	}
	*(uint64_t *)(base + k->off) = num;
	return 0;
}

static const struct key_def *find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcasecmp(keys[i].key, name) == 0)
			return &keys[i];
	return NULL;
}

/* kafka.<name>=<value>: kept in order for rd_kafka_conf_set. A file may set
 * a property once; -o replaces it. librdkafka judges the value now, so a
 * typo is reported with its file:line rather than at connect time. */
static int set_kafka_prop(struct fb_config *c, const char *name, const char *val,
			  const char *origin, int from_file, char *err, size_t errsz)
{
	char why[512];
	if (!*name || strlen(name) >= FB_KAFKA_PROP_NAME_MAX || strlen(val) >= FB_KAFKA_PROP_VALUE_MAX) {
		snprintf(err, errsz, "%s: kafka.%.64s: name or value too long", origin, name);
		return FB_ECONFIG;
	}
	if (fb_kafka_prop_check(name, val, why, sizeof(why))) {
		snprintf(err, errsz, "%s: kafka.%s: %s", origin, name, why);
		return FB_ECONFIG;
	}
	struct fb_kafka_prop *p = NULL;
	for (unsigned i = 0; i < c->n_kafka_props; i++)
		if (strcmp(c->kafka_props[i].name, name) == 0)
			p = &c->kafka_props[i];
	if (p && from_file) {
		snprintf(err, errsz, "%s: kafka.%s is set twice", origin, name);
		return FB_ECONFIG;
	}
	if (!p) {
		if (c->n_kafka_props == FB_KAFKA_PROPS_MAX) {
			snprintf(err, errsz, "%s: too many kafka.* properties (at most %d)", origin,
				 FB_KAFKA_PROPS_MAX);
			return FB_ECONFIG;
		}
		p = &c->kafka_props[c->n_kafka_props++];
		strcpy(p->name, name);
	}
	strcpy(p->value, val);
	return 0;
}

/* Apply one Key=Value; origin is "file:line" or "-o". seen (file loads
 * only) records the line each key was set on, to refuse a second setting. */
static int set_kv(struct fb_config *c, const char *key, const char *val, const char *origin,
		  int *seen, int lineno, char *err, size_t errsz)
{
	if (strncasecmp(key, "kafka.", 6) == 0)
		return set_kafka_prop(c, key + 6, val, origin, seen != NULL, err, errsz);
	const struct key_def *k = find_key(key);
	if (!k) {
		snprintf(err, errsz, "%s: unknown key '%.64s' (see fabricbusd --help-config)", origin, key);
		return FB_ECONFIG;
	}
	if (seen && k->type != V_KSUB) {
		int *s = &seen[k - keys];
		if (*s) {
			snprintf(err, errsz, "%s: %s is set twice (first at line %d)", origin, k->key, *s);
			return FB_ECONFIG;
		}
	}
	char why[160];
	if (apply(c, k, val, why, sizeof(why))) {
		snprintf(err, errsz, "%s: %s: bad value '%.80s': %s", origin, k->key, val, why);
		return FB_ECONFIG;
	}
	if (seen)
		seen[k - keys] = lineno;
	return 0;
}

int fb_config_set(struct fb_config *c, const char *keyval, const char *origin, char *err, size_t errsz)
{
	char line[4200];
	if (strlen(keyval) >= sizeof(line)) {
		snprintf(err, errsz, "%s: option too long", origin);
		return FB_ECONFIG;
	}
	strcpy(line, keyval);
	char *key, *val;
	int rc = fb_conf_split(line, &key, &val, origin, err, errsz);
	return rc ? rc : set_kv(c, key, val, origin, NULL, 0, err, errsz);
}

struct load_ctx {
	struct fb_config *c;
	int *seen;
};

static int load_line(void *arg, const char *key, const char *val, const char *origin, int lineno,
		     char *err, size_t errsz)
{
	struct load_ctx *x = arg;
	return set_kv(x->c, key, val, origin, x->seen, lineno, err, errsz);
}

int fb_config_load_file(struct fb_config *c, const char *path, char *err, size_t errsz)
{
	int seen[NKEYS] = { 0 };
	struct load_ctx x = { c, seen };
	return fb_conf_read_file(path, load_line, &x, err, errsz);
}

int fb_config_check(const struct fb_config *c, char *err, size_t errsz)
{
	if (c->agent_port == c->http_port && strcmp(c->agent_host, c->http_host) == 0) {
		snprintf(err, errsz, "AgentListen and HttpListen must differ (both %s:%d)", c->agent_host,
			 c->agent_port);
		return FB_ECONFIG;
	}
	if (c->ws_queue_events > c->ws_ring_events) {
		snprintf(err, errsz,
			 "WsQueueEvents (%" PRIu64 ") must not exceed WsRingEvents (%" PRIu64 ")",
			 c->ws_queue_events, c->ws_ring_events);
		return FB_ECONFIG;
	}
	if (c->retain_bytes && c->retain_bytes < 2 * c->segment_bytes) {
		snprintf(err, errsz, "JournalRetainSize must be 0 or at least twice JournalSegmentSize");
		return FB_ECONFIG;
	}
	return 0;
}

void fb_config_print(const struct fb_config *c, void *file)
{
	FILE *f = file;
	fprintf(f, "AgentListen=%s:%d\nHttpListen=%s:%d\nJournalDir=%s\nJournalSync=%s\n",
		c->agent_host, c->agent_port, c->http_host, c->http_port, c->journal_dir,
		fb_sync_policy_name(c->sync_policy));
	fprintf(f, "JournalSyncInterval=%" PRIu64 "ms\nJournalSegmentSize=%" PRIu64
		   "\nJournalRetainSize=%" PRIu64 "\nJournalRetainAge=%" PRIu64 "s\n",
		c->sync_interval_ms, c->segment_bytes, c->retain_bytes, c->retain_age_s);
	fprintf(f, "MaxFrameSize=%" PRIu64 "\nHeartbeatInterval=%" PRIu64 "ms\nMaxAgents=%" PRIu64
		   "\nMaxHttpConnections=%" PRIu64 "\n",
		c->max_frame, c->heartbeat_ms, c->max_agents, c->max_http_connections);
	fprintf(f, "WsRingEvents=%" PRIu64 "\nWsQueueEvents=%" PRIu64 "\nWsMaxSubscribers=%" PRIu64
		   "\nWsPingInterval=%" PRIu64 "s\n",
		c->ws_ring_events, c->ws_queue_events, c->ws_max_subscribers, c->ws_ping_s);
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
	for (unsigned i = 0; i < c->n_kafka_props; i++) {
		const char *n = c->kafka_props[i].name;
		int secret = strstr(n, "password") || strstr(n, "secret");
		fprintf(f, "kafka.%s=%s\n", n, secret ? "(hidden)" : c->kafka_props[i].value);
	}
}

void fb_config_help(void *file)
{
	FILE *f = file;
	for (size_t i = 0; i < NKEYS; i++)
		fprintf(f, "  %-20s %s\n", keys[i].key, keys[i].help);
	fprintf(f, "  %-20s %s\n", "kafka.<property>",
		"a librdkafka property, e.g. kafka.security.protocol=SASL_SSL (docs/kafka.md)");
}

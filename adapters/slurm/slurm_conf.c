/* slurm_conf.c - fabricbus-slurm's keys: one table with type, bounds, default, meaning. */
#include "slurm_conf.h"

#include "fb_addr.h"
#include "fb_conf.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_text.h"
#include "fb_wire.h"
#include "slurm_cond.h"

#include <errno.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum val_type { V_HOSTPORT, V_AGENTID, V_PATH, V_OPTPATH, V_PREFIX, V_PARTITION, V_DRAINON,
		V_DURATION, V_COUNT, V_BOOL, V_LOGLEVEL, V_LOGTARGET, V_SOURCE, V_KBROKERS,
		V_KGROUP, V_KTOPICS };

struct key_def {
	const char *key;
	enum val_type type;
	size_t off, off2;    /* field, and the port of a host:port */
	size_t size;         /* string buffer size */
	uint64_t min, max;   /* bounds for numbers and durations (ms) */
	const char *def;     /* the default, as it would be written in the file */
	const char *help;
};

#define F(f) offsetof(struct fbs_config, f)
#define S(f) sizeof(((struct fbs_config *)0)->f)

/* The whole configuration surface. Defaults are applied by parsing def, so
 * --help cannot disagree with what the program does. */
static const struct key_def keys[] = {
	{ "Broker", V_HOSTPORT, F(broker_host), F(broker_port), S(broker_host), 0, 0,
	  "127.0.0.1:7412",
	  "fabricbusd HttpListen: events from ws://HOST:PORT/ws/events, GET /fabric/map" },
	{ "BrokerAgent", V_HOSTPORT, F(agent_host), F(agent_port), S(agent_host), 0, 0,
	  "127.0.0.1:7411", "fabricbusd AgentListen: where the adapter publishes its actions" },
	{ "AgentId", V_AGENTID, F(agent_id), 0, S(agent_id), 0, 0, "",
	  "agent id of its action events (empty: slurm@<hostname>)" },
	{ "StateFile", V_PATH, F(state_file), 0, S(state_file), 0, 0,
	  "/var/lib/fabricbus/slurm-adapter.json",
	  "crash-safe state: LastEventId, drains held, conditions, pending actions" },
	{ "ReasonPrefix", V_PREFIX, F(reason_prefix), 0, S(reason_prefix), 0, 0, "fabric:",
	  "Slurm reasons starting with this are the adapter's; others are never touched" },
	{ "DrainOn", V_DRAINON, F(drain_on), 0, 0, 0, 0,
	  "link_down,flap,counter_threshold,switch_unreachable",
	  "conditions that drain: link_down, flap, counter_threshold, congestion, "
	  "switch_unreachable, link_degraded (empty: none)" },
	{ "HoldDown", V_DURATION, F(hold_ms), 0, 0, 0, 86400000, "2s",
	  "a condition drains once it lasted this long (0: at once)" },
	{ "StableFor", V_DURATION, F(stable_ms), 0, 0, 0, 30ull * 86400000, "60s",
	  "undrain once a node had no condition for this long" },
	{ "CongestionPpm", V_COUNT, F(congestion_ppm), 0, 0, 1, 1000000, "100000",
	  "congestion drains only at or above this PortXmitWait ppm..." },
	{ "CongestionFor", V_DURATION, F(congestion_for_ms), 0, 0, 0, 86400000, "60s",
	  "...lasting this long (and at least HoldDown)" },
	{ "MaxDrainNodes", V_COUNT, F(max_drain_nodes), 0, 0, 0, 10000000, "16",
	  "never hold more nodes drained (0: no node cap)" },
	{ "MaxDrainPercent", V_COUNT, F(max_drain_percent), 0, 0, 0, 100, "10",
	  "nor more than this % (rounded up) of CapPartition's nodes (0: no % cap)" },
	{ "CapPartition", V_PARTITION, F(cap_partition), 0, S(cap_partition), 0, 0, "",
	  "partition whose node count MaxDrainPercent is of (empty: all nodes)" },
	{ "DryRun", V_BOOL, F(dry_run), 0, 0, 0, 0, "no",
	  "yes: decide, log and publish 'dry-run' events, but never update Slurm" },
	{ "MapFile", V_OPTPATH, F(map_file), 0, S(map_file), 0, 0, "",
	  "optional '<port GUID | node GUID | MAC> <nodename>' lines" },
	{ "RetryInterval", V_DURATION, F(retry_ms), 0, 0, 100, 3600000, "2s",
	  "retry period of a Slurm call that failed, and of the broker's map" },
	{ "LogLevel", V_LOGLEVEL, F(log_level), 0, 0, 0, 0, "info", "error, warn, info or debug" },
	{ "LogTarget", V_LOGTARGET, F(log_syslog), 0, 0, 0, 0, "stderr", "stderr or syslog" },
	{ "Source", V_SOURCE, F(source), 0, 0, 0, 0, "websocket",
	  "websocket: ws://Broker/ws/events, resuming after LastEventId; kafka: a member of "
	  "KafkaGroup reading KafkaTopics (Broker still serves /fabric/map)" },
	{ "KafkaBrokers", V_KBROKERS, F(kafka_brokers), 0, S(kafka_brokers), 0, 0, "",
	  "Kafka bootstrap host:port[,host:port] (required with Source=kafka)" },
	{ "KafkaGroup", V_KGROUP, F(kafka_group), 0, S(kafka_group), 0, 0, "fabricbus-slurm",
	  "Kafka consumer group: its committed offsets are where a restart, or a standby, "
	  "resumes; run one adapter per group at a time" },
	{ "KafkaTopics", V_KTOPICS, F(kafka_topics), 0, S(kafka_topics), 0, 0,
	  "fabric.events,fabric.netdev,fabric.resource,fabric.other",
	  "topics carrying link, flap, counter, congestion and switch events (fabricbusd's "
	  "default KafkaTopicMap; flaps of ports of unknown role go to the catch-all)" },
};
/* kafka.<librdkafka property>=<value> lines are handled apart (set_kafka_prop). */
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

void fbs_duration_format(uint64_t ms, char *out, size_t outsz)
{
	if (ms % 1000 == 0)
		snprintf(out, outsz, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(out, outsz, "%" PRIu64 "ms", ms);
}

static int set_str(char *dst, size_t dstsz, const char *v, int may_be_empty)
{
	size_t n = strlen(v);
	if ((!may_be_empty && n == 0) || n >= dstsz)
		return FB_ECONFIG;
	memcpy(dst, v, n + 1);
	return 0;
}

static int printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static int partition_ok(const char *v)
{
	return !*v || fb_text_is_name(v, strlen(v));
}


static int topic_ok(const char *t, size_t n)
{
	return n <= 249 && !(n == 1 && t[0] == '.') && !(n == 2 && !strncmp(t, "..", 2)) &&
	       fb_text_is_name(t, n);
}

size_t fbs_kafka_topics_split(const char *list, char *buf, size_t bufsz, const char **topics,
			      size_t max)
{
	size_t n = 0;
	char *save = NULL;
	snprintf(buf, bufsz, "%s", list);
	for (char *e = strtok_r(buf, ", ", &save); e && n < max; e = strtok_r(NULL, ", ", &save))
		topics[n++] = e;
	return n;
}

/* A comma-separated list of 1..FBS_KAFKA_TOPICS_MAX distinct topic names,
 * stored without the spaces. */
static int set_topics(char *dst, size_t dstsz, const char *v, char *why, size_t whysz)
{
	char buf[2048], out[2048] = "";
	const char *t[FBS_KAFKA_TOPICS_MAX + 1];
	if (strlen(v) >= sizeof(buf) || strlen(v) >= dstsz) {
		snprintf(why, whysz, "longer than %zu bytes", dstsz - 1);
		return FB_ECONFIG;
	}
	size_t n = fbs_kafka_topics_split(v, buf, sizeof(buf), t, FBS_KAFKA_TOPICS_MAX + 1);
	if (n == 0 || n > FBS_KAFKA_TOPICS_MAX) {
		snprintf(why, whysz, "expected 1 to %d topics, separated by commas",
			 FBS_KAFKA_TOPICS_MAX);
		return FB_ECONFIG;
	}
	for (size_t i = 0; i < n; i++) {
		if (!topic_ok(t[i], strlen(t[i]))) {
			snprintf(why, whysz, "topic '%.80s': a topic name is 1..249 of [A-Za-z0-9._-]",
				 t[i]);
			return FB_ECONFIG;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(t[i], t[j]) == 0) {
				snprintf(why, whysz, "topic '%.80s' is listed twice", t[i]);
				return FB_ECONFIG;
			}
		size_t off = strlen(out);
		snprintf(out + off, sizeof(out) - off, "%s%s", i ? "," : "", t[i]);
	}
	strcpy(dst, out);
	return 0;
}

static int apply_str(struct fbs_config *c, const struct key_def *k, const char *v, char *why,
		     size_t whysz)
{
	char *dst = (char *)c + k->off;
	switch (k->type) {
	case V_AGENTID:
		if (*v && !fb_agent_id_valid(v)) {
			snprintf(why, whysz, "expected 1..%d of [A-Za-z0-9._:@-], or empty",
				 FB_AGENT_ID_MAX - 1);
			return FB_ECONFIG;
		}
		return set_str(dst, k->size, v, 1);
	case V_PATH:
	case V_OPTPATH:
		if (set_str(dst, k->size, v, k->type == V_OPTPATH)) {
			snprintf(why, whysz, "expected a %spath of at most %zu bytes",
				 k->type == V_PATH ? "non-empty " : "", k->size - 1);
			return FB_ECONFIG;
		}
		return 0;
	case V_PREFIX:
		if (!*v || *v == ' ' || !printable(v) || set_str(dst, k->size, v, 0)) {
			snprintf(why, whysz, "expected 1..%zu printable characters, not starting with "
				 "a space (an empty prefix would claim every admin's drain)",
				 k->size - 1);
			return FB_ECONFIG;
		}
		return 0;
	default: /* V_PARTITION */
		if (!partition_ok(v) || set_str(dst, k->size, v, 1)) {
			snprintf(why, whysz, "expected a partition name (A-Z a-z 0-9 . _ -, at most "
				 "%zu bytes), or empty for all nodes", k->size - 1);
			return FB_ECONFIG;
		}
		return 0;
	}
}

static int apply_num(struct fbs_config *c, const struct key_def *k, const char *v, char *why,
		     size_t whysz)
{
	uint64_t num = 0;
	int rc;
	if (k->type == V_DURATION) {
		rc = fb_conf_parse_duration_ms(v, &num);
	} else {
		char *end;
		errno = 0;
		num = strtoull(v, &end, 10);
		rc = (errno || *end || end == v || v[0] == '-' || v[0] == '+') ? FB_ECONFIG : 0;
	}
	if (rc || num < k->min || num > k->max) {
		if (k->type == V_DURATION) {
			char lo[32], hi[32];
			fbs_duration_format(k->min, lo, sizeof(lo));
			fbs_duration_format(k->max, hi, sizeof(hi));
			snprintf(why, whysz, "expected a duration such as 500ms, 2s, 1m between %s "
				 "and %s", lo, hi);
		} else {
			snprintf(why, whysz, "expected a whole number between %" PRIu64 " and %" PRIu64,
				 k->min, k->max);
		}
		return FB_ECONFIG;
	}
	*(uint64_t *)((char *)c + k->off) = num;
	return 0;
}

/* Parse v for key k into c; on failure write what was expected into why. */
static int apply(struct fbs_config *c, const struct key_def *k, const char *v, char *why,
		 size_t whysz)
{
	char *base = (char *)c;
	int *ip = (int *)(base + k->off);
	switch (k->type) {
	case V_HOSTPORT:
		if (fb_addr_parse(v, NULL, base + k->off, k->size, (int *)(base + k->off2))) {
			snprintf(why, whysz, "expected HOST:PORT with a port 1..65535");
			return FB_ECONFIG;
		}
		return 0;
	case V_AGENTID:
	case V_PATH:
	case V_OPTPATH:
	case V_PREFIX:
	case V_PARTITION:
		return apply_str(c, k, v, why, whysz);
	case V_DRAINON:
		return fbs_drain_on_parse(v, (unsigned *)(base + k->off), why, whysz);
	case V_DURATION:
	case V_COUNT:
		return apply_num(c, k, v, why, whysz);
	case V_BOOL:
		if (fb_conf_parse_bool(v, ip)) {
			snprintf(why, whysz, "expected yes or no");
			return FB_ECONFIG;
		}
		return 0;
	case V_LOGLEVEL:
		if ((*ip = fb_log_level_parse(v)) < 0) {
			*ip = FB_LOG_INFO;
			snprintf(why, whysz, "expected error, warn, info or debug");
			return FB_ECONFIG;
		}
		return 0;
	case V_LOGTARGET:
		if (strcasecmp(v, "stderr") && strcasecmp(v, "syslog")) {
			snprintf(why, whysz, "expected stderr or syslog");
			return FB_ECONFIG;
		}
		*ip = strcasecmp(v, "syslog") == 0;
		return 0;
	case V_SOURCE:
		if (strcasecmp(v, "websocket") && strcasecmp(v, "kafka")) {
			snprintf(why, whysz, "expected websocket or kafka");
			return FB_ECONFIG;
		}
		*ip = strcasecmp(v, "kafka") == 0 ? FBS_SRC_KAFKA : FBS_SRC_WEBSOCKET;
		return 0;
	case V_KBROKERS:
		return fb_conf_set_hostport_list(base + k->off, k->size, v, why, whysz);
	case V_KGROUP:
		if (!*v || strchr(v, ' ') || !printable(v) || set_str(base + k->off, k->size, v, 0)) {
			snprintf(why, whysz, "expected 1..%zu printable characters without spaces",
				 k->size - 1);
			return FB_ECONFIG;
		}
		return 0;
	case V_KTOPICS:
		return set_topics(base + k->off, k->size, v, why, whysz);
	}
	return FB_ECONFIG;
}

void fbs_config_defaults(struct fbs_config *c)
{
	char why[256];
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < NKEYS; i++)
		if (apply(c, &keys[i], keys[i].def, why, sizeof(why)))
			abort(); /* a bad default is a bug that test_slurm_policy catches */
}

static const struct key_def *find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcasecmp(keys[i].key, name) == 0)
			return &keys[i];
	return NULL;
}

/* What at-least-once and the skip rules rest on is not an operator knob. */
static const char *const kafka_owned[][2] = {
	{ "bootstrap.servers", "use KafkaBrokers" },
	{ "metadata.broker.list", "use KafkaBrokers" },
	{ "group.id", "use KafkaGroup" },
	{ "enable.auto.commit", "offsets are committed only once the events they cover are in "
				"the state file" },
	{ "enable.auto.offset.store", "offsets are committed only once the events they cover are "
				      "in the state file" },
	{ "auto.offset.reset", "the adapter reads from the oldest offset where its group has "
			       "none, and skips what its state file (or the map) already covers" },
};

/* kafka.<name>=<value>, kept in order. A file may set a property once, -o
 * replaces it. librdkafka judges the value now, so a typo is reported with
 * its file:line rather than when the consumer starts. */
static int set_kafka_prop(struct fbs_config *c, const char *name, const char *val,
			  const char *origin, int from_file, char *err, size_t errsz)
{
	char why[512];
	struct fbs_kafka_prop *p = NULL;
	const char *sep = strcmp(origin, "-o") ? ": " : " "; /* "f:3: kafka.x", "-o kafka.x" */
	if (!*name || strlen(name) >= sizeof(p->name) || strlen(val) >= sizeof(p->value)) {
		snprintf(err, errsz, "%s%skafka.%.64s: name or value too long (at most %zu and %zu "
			 "bytes)", origin, sep, name, sizeof(p->name) - 1, sizeof(p->value) - 1);
		return FB_ECONFIG;
	}
	for (size_t i = 0; i < sizeof(kafka_owned) / sizeof(kafka_owned[0]); i++)
		if (strcasecmp(name, kafka_owned[i][0]) == 0) {
			snprintf(err, errsz, "%s%skafka.%s is set by fabricbus-slurm: %s", origin,
				 sep, name, kafka_owned[i][1]);
			return FB_ECONFIG;
		}
	rd_kafka_conf_t *rc = rd_kafka_conf_new();
	int bad = !rc || rd_kafka_conf_set(rc, name, val, why, sizeof(why)) != RD_KAFKA_CONF_OK;
	if (!rc)
		snprintf(why, sizeof(why), "out of memory");
	if (rc)
		rd_kafka_conf_destroy(rc);
	if (bad) {
		snprintf(err, errsz, "%s%skafka.%s: %s", origin, sep, name, why);
		return FB_ECONFIG;
	}
	for (unsigned i = 0; i < c->n_kafka_props; i++)
		if (strcmp(c->kafka_props[i].name, name) == 0)
			p = &c->kafka_props[i];
	if (p && from_file) {
		snprintf(err, errsz, "%s%skafka.%s is set twice", origin, sep, name);
		return FB_ECONFIG;
	}
	if (!p) {
		if (c->n_kafka_props == FBS_KAFKA_PROPS_MAX) {
			snprintf(err, errsz, "%s%stoo many kafka.* properties (at most %d)", origin,
				 sep, FBS_KAFKA_PROPS_MAX);
			return FB_ECONFIG;
		}
		p = &c->kafka_props[c->n_kafka_props++];
		strcpy(p->name, name);
	}
	strcpy(p->value, val);
	return 0;
}

static int set_kv(struct fbs_config *c, const char *key, const char *val, const char *origin,
		  int *seen, int lineno, char *err, size_t errsz)
{
	if (strncasecmp(key, "kafka.", 6) == 0)
		return set_kafka_prop(c, key + 6, val, origin, seen != NULL, err, errsz);
	const struct key_def *k = find_key(key);
	if (!k) {
		snprintf(err, errsz, "%s: unknown key '%.64s' (see fabricbus-slurm --help)", origin,
			 key);
		return FB_ECONFIG;
	}
	if (seen && seen[k - keys]) {
		snprintf(err, errsz, "%s: %s is set twice (first at line %d)", origin, k->key,
			 seen[k - keys]);
		return FB_ECONFIG;
	}
	char why[200];
	if (apply(c, k, val, why, sizeof(why))) {
		snprintf(err, errsz, "%s: %s: bad value '%.80s': %s", origin, k->key, val, why);
		return FB_ECONFIG;
	}
	if (seen)
		seen[k - keys] = lineno;
	return 0;
}

struct file_ctx {
	struct fbs_config *c;
	int seen[NKEYS];
};

static int file_line(void *arg, const char *key, const char *val, const char *origin, int lineno,
		     char *err, size_t errsz)
{
	struct file_ctx *x = arg;
	return set_kv(x->c, key, val, origin, x->seen, lineno, err, errsz);
}

int fbs_config_load_file(struct fbs_config *c, const char *path, char *err, size_t errsz)
{
	struct file_ctx x;
	memset(&x, 0, sizeof(x));
	x.c = c;
	return fb_conf_read_file(path, file_line, &x, err, errsz);
}

int fbs_config_set(struct fbs_config *c, const char *keyval, char *err, size_t errsz)
{
	char line[FB_CONF_LINE_MAX], *key, *val;
	if (strlen(keyval) >= sizeof(line)) {
		snprintf(err, errsz, "-o: option too long");
		return FB_ECONFIG;
	}
	strcpy(line, keyval);
	if (fb_conf_split(line, &key, &val, "-o", err, errsz))
		return FB_ECONFIG;
	if (strncasecmp(key, "kafka.", 6) == 0)
		return set_kafka_prop(c, key + 6, val, "-o", 0, err, errsz);
	const struct key_def *k = find_key(key);
	char why[200];
	if (!k) {
		snprintf(err, errsz, "-o %.64s: unknown key (see fabricbus-slurm --help)", key);
		return FB_ECONFIG;
	}
	if (apply(c, k, val, why, sizeof(why))) {
		snprintf(err, errsz, "-o %s: bad value '%.80s': %s", k->key, val, why);
		return FB_ECONFIG;
	}
	return 0;
}

int fbs_config_check(struct fbs_config *c, char *err, size_t errsz)
{
	if (c->agent_port == c->broker_port && strcmp(c->agent_host, c->broker_host) == 0) {
		snprintf(err, errsz, "Broker and BrokerAgent must differ (both %s:%d): the first is "
			 "fabricbusd's HttpListen, the second its AgentListen", c->broker_host,
			 c->broker_port);
		return FB_ECONFIG;
	}
	if (c->source == FBS_SRC_KAFKA && !c->kafka_brokers[0]) {
		snprintf(err, errsz, "Source=kafka needs KafkaBrokers, the Kafka bootstrap servers "
			 "(host:port[,host:port]) that fabricbusd's KafkaBrokers names too");
		return FB_ECONFIG;
	}
	return 0;
}

void fbs_config_print(const struct fbs_config *c, void *file)
{
	FILE *f = file;
	char drain_on[160], hold[32], stable[32], cfor[32], retry[32];
	static const char *const lv[] = { "error", "warn", "info", "debug" };
	fbs_drain_on_format(c->drain_on, drain_on, sizeof(drain_on));
	fbs_duration_format(c->hold_ms, hold, sizeof(hold));
	fbs_duration_format(c->stable_ms, stable, sizeof(stable));
	fbs_duration_format(c->congestion_for_ms, cfor, sizeof(cfor));
	fbs_duration_format(c->retry_ms, retry, sizeof(retry));
	fprintf(f, "Broker=%s:%d\nBrokerAgent=%s:%d\nAgentId=%s\nStateFile=%s\nReasonPrefix=%s\n",
		c->broker_host, c->broker_port, c->agent_host, c->agent_port, c->agent_id,
		c->state_file, c->reason_prefix);
	fprintf(f, "DrainOn=%s\nHoldDown=%s\nStableFor=%s\nCongestionPpm=%" PRIu64
		   "\nCongestionFor=%s\n", drain_on, hold, stable, c->congestion_ppm, cfor);
	fprintf(f, "MaxDrainNodes=%" PRIu64 "\nMaxDrainPercent=%" PRIu64 "\nCapPartition=%s\n",
		c->max_drain_nodes, c->max_drain_percent, c->cap_partition);
	fprintf(f, "DryRun=%s\nMapFile=%s\nRetryInterval=%s\nLogLevel=%s\nLogTarget=%s\n",
		c->dry_run ? "yes" : "no", c->map_file, retry, lv[c->log_level & 3],
		c->log_syslog ? "syslog" : "stderr");
	fprintf(f, "Source=%s\nKafkaBrokers=%s\nKafkaGroup=%s\nKafkaTopics=%s\n",
		c->source == FBS_SRC_KAFKA ? "kafka" : "websocket", c->kafka_brokers, c->kafka_group,
		c->kafka_topics);
	for (unsigned i = 0; i < c->n_kafka_props; i++) {
		const char *n = c->kafka_props[i].name;
		int secret = strstr(n, "password") || strstr(n, "secret");
		fprintf(f, "kafka.%s=%s\n", n, secret ? "(hidden)" : c->kafka_props[i].value);
	}
}

void fbs_config_help(void *file)
{
	FILE *f = file;
	for (size_t i = 0; i < NKEYS; i++) {
		fprintf(f, "    %s=%s\n", keys[i].key, keys[i].def);
		fprintf(f, "        %s\n", keys[i].help);
	}
	fprintf(f, "    kafka.<property>=<value>\n"
		   "        a librdkafka consumer property, e.g. kafka.security.protocol=SASL_SSL "
		   "(docs/kafka.md)\n");
}

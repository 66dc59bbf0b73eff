/* slurm_conf.c - fabricbus-slurm's keys: one table with type, bounds, default, meaning,
 * read by the engine in proto/util/fb_conf.c. */
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

void fbs_duration_format(uint64_t ms, char *out, size_t outsz)
{
	fb_conf_format_duration_ms(ms, out, outsz);
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

static int agent_id_ok(const char *v)
{
	return !*v || fb_agent_id_valid(v);
}

static int prefix_ok(const char *v)
{
	return *v != ' ' && printable(v);
}

static int group_ok(const char *v)
{
	return !strchr(v, ' ') && printable(v);
}

static int parse_drain_on(void *cfg, const struct fb_conf_key *k, const char *v, char *why,
			  size_t whysz)
{
	return fbs_drain_on_parse(v, (unsigned *)((char *)cfg + k->off), why, whysz);
}

static int parse_topics(void *cfg, const struct fb_conf_key *k, const char *v, char *why,
			size_t whysz)
{
	return set_topics((char *)cfg + k->off, k->size, v, why, whysz);
}

static const char *const source_names[] = { "websocket", "kafka", NULL }; /* fbs_source_kind */
static const char *const target_names[] = { "stderr", "syslog", NULL };

#define F(f) offsetof(struct fbs_config, f)
#define S(f) sizeof(((struct fbs_config *)0)->f)

/* The whole configuration surface (fb_conf.h). Defaults are applied by
 * parsing def, so --help cannot disagree with what the program does. */
static const struct fb_conf_key keys[] = {
	{ "Broker", FB_CONF_HOSTPORT, F(broker_host), F(broker_port), S(broker_host),
	  .def = "127.0.0.1:7412",
	  .help = "fabricbusd HttpListen: events from ws://HOST:PORT/ws/events, GET /fabric/map" },
	FB_CONF_BROKER_AUTH_KEYS(struct fbs_config, broker_token_file, broker_tls_ca),
	{ "BrokerAgent", FB_CONF_HOSTPORT, F(agent_host), F(agent_port), S(agent_host),
	  .def = "127.0.0.1:7411",
	  .help = "fabricbusd AgentListen: where the adapter publishes its actions" },
	{ "AgentId", FB_CONF_STRING, F(agent_id), 0, S(agent_id), .flags = FB_CONF_EMPTY_OK,
	  .ok = agent_id_ok, .expect = "expected 1..%zu of [A-Za-z0-9._:@-], or empty", .def = "",
	  .help = "agent id of its action events (empty: slurm@<hostname>)" },
	{ "StateFile", FB_CONF_STRING, F(state_file), 0, S(state_file),
	  .expect = "expected a non-empty path of at most %zu bytes",
	  .def = "/var/lib/fabricbus/slurm-adapter.json",
	  .help = "crash-safe state: LastEventId, drains held, conditions, pending actions" },
	{ "ReasonPrefix", FB_CONF_STRING, F(reason_prefix), 0, S(reason_prefix), .ok = prefix_ok,
	  .expect = "expected 1..%zu printable characters, not starting with a space (an empty "
		    "prefix would claim every admin's drain)",
	  .def = "fabric:",
	  .help = "Slurm reasons starting with this are the adapter's; others are never touched" },
	{ "DrainOn", FB_CONF_CUSTOM, F(drain_on), .parse = parse_drain_on,
	  .def = "link_down,flap,counter_threshold,switch_unreachable,root_cause",
	  .help = "conditions that drain: link_down, flap, counter_threshold, congestion, "
		  "switch_unreachable, link_degraded, root_cause (empty: none)" },
	{ "DrainDegraded", FB_CONF_BOOL, F(drain_degraded), .def = "no",
	  .help = "yes: a root cause drains its degraded hosts too, not only those without a path" },
	{ "HoldDown", FB_CONF_DURATION_MS, F(hold_ms), .min = 0, .max = 86400000, .def = "2s",
	  .help = "a condition drains once it lasted this long (0: at once)" },
	{ "StableFor", FB_CONF_DURATION_MS, F(stable_ms), .min = 0, .max = 30ull * 86400000,
	  .def = "60s", .help = "undrain once a node had no condition for this long" },
	{ "CongestionPpm", FB_CONF_COUNT, F(congestion_ppm), .min = 1, .max = 1000000,
	  .def = "100000", .help = "congestion drains only at or above this PortXmitWait ppm..." },
	{ "CongestionFor", FB_CONF_DURATION_MS, F(congestion_for_ms), .min = 0, .max = 86400000,
	  .def = "60s", .help = "...lasting this long (and at least HoldDown)" },
	{ "MaxDrainNodes", FB_CONF_COUNT, F(max_drain_nodes), .min = 0, .max = 10000000,
	  .def = "16", .help = "never hold more nodes drained (0: no node cap)" },
	{ "MaxDrainPercent", FB_CONF_COUNT, F(max_drain_percent), .min = 0, .max = 100, .def = "10",
	  .help = "nor more than this % (rounded up) of CapPartition's nodes (0: no % cap)" },
	{ "CapPartition", FB_CONF_STRING, F(cap_partition), 0, S(cap_partition),
	  .flags = FB_CONF_EMPTY_OK, .ok = partition_ok,
	  .expect = "expected a partition name (A-Z a-z 0-9 . _ -, at most %zu bytes), or empty "
		    "for all nodes",
	  .def = "", .help = "partition whose node count MaxDrainPercent is of (empty: all nodes)" },
	{ "DryRun", FB_CONF_BOOL, F(dry_run), .def = "no",
	  .help = "yes: decide, log and publish 'dry-run' events, but never update Slurm" },
	{ "MapFile", FB_CONF_STRING, F(map_file), 0, S(map_file), .flags = FB_CONF_EMPTY_OK,
	  .expect = "expected a path of at most %zu bytes", .def = "",
	  .help = "optional '<port GUID | node GUID | MAC> <nodename>' lines" },
	{ "RetryInterval", FB_CONF_DURATION_MS, F(retry_ms), .min = 100, .max = 3600000,
	  .def = "2s", .help = "retry period of a Slurm call that failed, and of the broker's map" },
	{ "JobReconcileInterval", FB_CONF_DURATION_MS, F(job_reconcile_ms), .min = 0,
	  .max = 86400000, .def = "5min",
	  .help = "how often the broker's job registrations are checked with slurmctld and those "
		  "of ended jobs deleted (0 = never)" },
	{ "LogLevel", FB_CONF_LOGLEVEL, F(log_level), .def = "info",
	  .help = "error, warn, info or debug" },
	{ "LogTarget", FB_CONF_ENUM, F(log_syslog), .names = target_names, .def = "stderr",
	  .help = "stderr or syslog" },
	{ "Source", FB_CONF_ENUM, F(source), .names = source_names, .def = "websocket",
	  .help = "websocket: ws://Broker/ws/events, resuming after LastEventId; kafka: a member "
		  "of KafkaGroup reading KafkaTopics (Broker still serves /fabric/map)" },
	{ "KafkaBrokers", FB_CONF_HOSTPORT_LIST, F(kafka_brokers), 0, S(kafka_brokers),
	  .flags = FB_CONF_EMPTY_OK, .def = "",
	  .help = "Kafka bootstrap host:port[,host:port] (required with Source=kafka)" },
	{ "KafkaGroup", FB_CONF_STRING, F(kafka_group), 0, S(kafka_group), .ok = group_ok,
	  .expect = "expected 1..%zu printable characters without spaces", .def = "fabricbus-slurm",
	  .help = "Kafka consumer group: its committed offsets are where a restart, or a standby, "
		  "resumes; run one adapter per group at a time" },
	{ "KafkaTopics", FB_CONF_CUSTOM, F(kafka_topics), 0, S(kafka_topics), .parse = parse_topics,
	  .def = "fabric.events,fabric.netdev,fabric.resource,fabric.other",
	  .help = "topics carrying link, flap, counter, congestion and switch events (fabricbusd's "
		  "default KafkaTopicMap; flaps of ports of unknown role go to the catch-all)" },
};

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

/* kafka.<name>: librdkafka judges the value now, so a typo is reported with
 * its file:line rather than when the consumer starts. */
static int check_kafka_prop(const char *name, const char *val, char *why, size_t whysz)
{
	char w[480];
	for (size_t i = 0; i < sizeof(kafka_owned) / sizeof(kafka_owned[0]); i++)
		if (strcasecmp(name, kafka_owned[i][0]) == 0)
			return fb_err_set(why, whysz, FB_ECONFIG, " is set by fabricbus-slurm: %s",
					  kafka_owned[i][1]);
	rd_kafka_conf_t *rc = rd_kafka_conf_new();
	if (!rc)
		return fb_err_set(why, whysz, FB_ECONFIG, ": out of memory");
	int bad = rd_kafka_conf_set(rc, name, val, w, sizeof(w)) != RD_KAFKA_CONF_OK;
	rd_kafka_conf_destroy(rc);
	return bad ? fb_err_set(why, whysz, FB_ECONFIG, ": %s", w) : 0;
}

static const struct fb_conf_table table = {
	keys, sizeof(keys) / sizeof(keys[0]),
	{ "kafka.", F(kafka_props), F(n_kafka_props), sizeof(struct fbs_kafka_prop),
	  offsetof(struct fbs_kafka_prop, value), S(kafka_props[0].name), S(kafka_props[0].value),
	  FBS_KAFKA_PROPS_MAX, check_kafka_prop },
	"fabricbus-slurm --help", 1,
};

void fbs_config_defaults(struct fbs_config *c)
{
	char err[256];
	memset(c, 0, sizeof(*c));
	if (fb_conf_apply_defaults(&table, c, err, sizeof(err)))
		abort(); /* a bad default is a bug that test_slurm_policy catches */
}

int fbs_config_load_file(struct fbs_config *c, const char *path, char *err, size_t errsz)
{
	return fb_conf_load_file(&table, c, path, err, errsz);
}

int fbs_config_set(struct fbs_config *c, const char *keyval, char *err, size_t errsz)
{
	return fb_conf_set_option(&table, c, keyval, "-o", err, errsz);
}

int fbs_config_check(struct fbs_config *c, char *err, size_t errsz)
{
	if (c->agent_port == c->broker_port && strcmp(c->agent_host, c->broker_host) == 0)
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "Broker and BrokerAgent must differ (both %s:%d): the first is "
				  "fabricbusd's HttpListen, the second its AgentListen", c->broker_host,
				  c->broker_port);
	if (c->source == FBS_SRC_KAFKA && !c->kafka_brokers[0])
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "Source=kafka needs KafkaBrokers, the Kafka bootstrap servers "
				  "(host:port[,host:port]) that fabricbusd's KafkaBrokers names too");
	return 0;
}

void fbs_config_print(const struct fbs_config *c, void *file)
{
	FILE *f = file;
	char drain_on[160], hold[32], stable[32], cfor[32], retry[32], jobrec[32];
	static const char *const lv[] = { "error", "warn", "info", "debug" };
	fbs_drain_on_format(c->drain_on, drain_on, sizeof(drain_on));
	fbs_duration_format(c->hold_ms, hold, sizeof(hold));
	fbs_duration_format(c->stable_ms, stable, sizeof(stable));
	fbs_duration_format(c->congestion_for_ms, cfor, sizeof(cfor));
	fbs_duration_format(c->retry_ms, retry, sizeof(retry));
	fbs_duration_format(c->job_reconcile_ms, jobrec, sizeof(jobrec));
	fprintf(f, "Broker=%s:%d\nBrokerAgent=%s:%d\nAgentId=%s\nStateFile=%s\nReasonPrefix=%s\n",
		c->broker_host, c->broker_port, c->agent_host, c->agent_port, c->agent_id,
		c->state_file, c->reason_prefix);
	fprintf(f, "BrokerTokenFile=%s\nBrokerTlsCa=%s\n", c->broker_token_file, c->broker_tls_ca);
	fprintf(f, "DrainOn=%s\nHoldDown=%s\nStableFor=%s\nCongestionPpm=%" PRIu64
		   "\nCongestionFor=%s\n", drain_on, hold, stable, c->congestion_ppm, cfor);
	fprintf(f, "MaxDrainNodes=%" PRIu64 "\nMaxDrainPercent=%" PRIu64 "\nCapPartition=%s\n",
		c->max_drain_nodes, c->max_drain_percent, c->cap_partition);
	fprintf(f, "DrainDegraded=%s\n", c->drain_degraded ? "yes" : "no");
	fprintf(f, "DryRun=%s\nMapFile=%s\nRetryInterval=%s\nLogLevel=%s\nLogTarget=%s\n",
		c->dry_run ? "yes" : "no", c->map_file, retry, lv[c->log_level & 3],
		c->log_syslog ? "syslog" : "stderr");
	fprintf(f, "JobReconcileInterval=%s\n", jobrec);
	fprintf(f, "Source=%s\nKafkaBrokers=%s\nKafkaGroup=%s\nKafkaTopics=%s\n",
		c->source == FBS_SRC_KAFKA ? "kafka" : "websocket", c->kafka_brokers, c->kafka_group,
		c->kafka_topics);
	fb_conf_print_props(&table, c, f);
}

void fbs_config_help(void *file)
{
	FILE *f = file;
	fb_conf_help(&table, f);
	fprintf(f, "    kafka.<property>=<value>\n"
		   "        a librdkafka consumer property, e.g. kafka.security.protocol=SASL_SSL "
		   "(docs/kafka.md)\n");
}

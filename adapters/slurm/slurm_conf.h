/* slurm_conf.h - fabricbus-slurm configuration: embedded defaults, then a
 * Key=Value file (-f), then -o Key=Value overrides, in that order.
 *
 * Same syntax and messages as fabricbusd's config (proto/fb_conf.h): '#'
 * comments, keys case-insensitive, unknown and duplicate keys refused, every
 * error names "file:line" or "-o Key". Read-only once loaded.
 */
#ifndef FBS_CONF_H
#define FBS_CONF_H

#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

#define FBS_DEFAULT_CONF "/etc/fabricbus/slurm.conf"

/* Source=: where events come from (slurm_source.h). */
enum fbs_source_kind { FBS_SRC_WEBSOCKET = 0, FBS_SRC_KAFKA = 1 };

#define FBS_KAFKA_TOPICS_MAX 16
#define FBS_KAFKA_PROPS_MAX 32

/* kafka.<name>=<value>: handed to librdkafka in file order. */
struct fbs_kafka_prop {
	char name[128];             /* without the "kafka." */
	char value[512];
};

struct fbs_config {
	char broker_host[256];      /* Broker: fabricbusd HttpListen */
	int broker_port;
	char broker_token_file[4096]; /* BrokerTokenFile: bearer token for Broker; "" = none */
	char broker_tls_ca[4096];   /* BrokerTlsCa: https/wss to Broker, verified; "" = plain */
	char agent_host[256];       /* BrokerAgent: fabricbusd AgentListen */
	int agent_port;
	char agent_id[FB_AGENT_ID_MAX]; /* AgentId; "" = slurm@<hostname> */
	char state_file[4096];
	char reason_prefix[64];
	unsigned drain_on;          /* FBS_C_BIT mask */
	uint64_t hold_ms, stable_ms;
	uint64_t congestion_ppm, congestion_for_ms;
	uint64_t max_drain_nodes, max_drain_percent;
	char cap_partition[128];
	int dry_run;
	int drain_degraded;         /* DrainDegraded */
	char map_file[4096];
	uint64_t retry_ms;
	uint64_t job_reconcile_ms;  /* JobReconcileInterval; 0 = off (slurm_reconcile.h) */
	int log_level;              /* enum fb_log_level */
	int log_syslog;
	int source;                 /* Source: enum fbs_source_kind */
	char kafka_brokers[1024];   /* KafkaBrokers: bootstrap host:port[,host:port]; "" = none */
	char kafka_group[256];      /* KafkaGroup: the consumer group */
	char kafka_topics[2048];    /* KafkaTopics: comma-separated, each checked */
	unsigned n_kafka_props;
	struct fbs_kafka_prop kafka_props[FBS_KAFKA_PROPS_MAX];
};

void fbs_config_defaults(struct fbs_config *c);
/* 0 or FB_ECONFIG with "path:line: why" in err. */
int fbs_config_load_file(struct fbs_config *c, const char *path, char *err, size_t errsz);
/* One "Key=Value" from the command line: errors read "-o Key: why". */
int fbs_config_set(struct fbs_config *c, const char *keyval, char *err, size_t errsz);
/* Cross-field checks. An empty AgentId is left for the caller to fill. */
int fbs_config_check(struct fbs_config *c, char *err, size_t errsz);
/* Effective configuration as Key=Value lines (FILE *). */
void fbs_config_print(const struct fbs_config *c, void *file);
/* Every key, its default and meaning, for --help (FILE *). */
void fbs_config_help(void *file);
/* Split a checked KafkaTopics value into topics[] (pointers into buf, which
 * is at least as large as the value). Returns the number of topics. */
size_t fbs_kafka_topics_split(const char *list, char *buf, size_t bufsz, const char **topics,
			      size_t max);
/* A duration the way the config takes it back: "1500ms", "60s". */
void fbs_duration_format(uint64_t ms, char *out, size_t outsz);

#endif

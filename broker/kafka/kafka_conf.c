/* kafka_conf.c - librdkafka configuration from fabricbus.conf. */
#include "kafka_conf.h"

#include "fb_err.h"
#include "fb_log.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* What makes "never lose, never duplicate" true is not an operator knob. */
static const char *const owned[] = {
	"enable.idempotence", "acks", "request.required.acks", "dr_cb", "dr_msg_cb",
	"delivery.report.only.error", "message.timeout.ms", "delivery.timeout.ms",
	"bootstrap.servers", "metadata.broker.list", "enable.gapless.guarantee",
	"partitioner", "partitioner_cb", "opaque", "error_cb", "log_cb", "background_event_cb",
};

int fb_kafka_conf_set(rd_kafka_conf_t *conf, const char *name, const char *value, char *why,
		      size_t whysz)
{
	char errstr[512];
	if (rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
		snprintf(why, whysz, "%s", errstr);
		return FB_ECONFIG;
	}
	return 0;
}

int fb_kafka_prop_check(const char *name, const char *value, char *why, size_t whysz)
{
	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
		if (strcasecmp(name, owned[i]) == 0) {
			snprintf(why, whysz,
				 "set by fabricbus and not configurable (it carries the exactly-once "
				 "delivery; brokers go in KafkaBrokers)");
			return FB_ECONFIG;
		}
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	if (!c) {
		snprintf(why, whysz, "out of memory");
		return FB_ECONFIG;
	}
	int rc = fb_kafka_conf_set(c, name, value, why, whysz);
	rd_kafka_conf_destroy(c);
	return rc;
}

/* librdkafka levels are syslog levels. Its errors are things it retries
 * (connection refused, ...), so they are warnings here; connection failures
 * are summed up by the sink's own "unreachable" line, so they are debug. */
static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	int l = level <= 3 ? FB_LOG_WARN : level <= 6 ? FB_LOG_INFO : FB_LOG_DEBUG;
	if (strcmp(fac, "FAIL") == 0)
		l = FB_LOG_DEBUG;
	if (l == FB_LOG_DEBUG && fb_log_level() < FB_LOG_DEBUG)
		return;
	fb_log(l, "kafka: librdkafka %s %s: %s", rd_kafka_name(rk), fac, buf);
}

rd_kafka_t *fb_kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, char *why, size_t whysz)
{
	rd_kafka_t *rk = rd_kafka_new(type, conf, why, whysz);
	if (!rk)
		rd_kafka_conf_destroy(conf);
	return rk;
}

rd_kafka_conf_t *fb_kafka_conf_new(const struct fb_config *cfg, char *why, size_t whysz)
{
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	if (!c) {
		snprintf(why, whysz, "out of memory");
		return NULL;
	}
	char w[512];
	if (fb_kafka_conf_set(c, "bootstrap.servers", cfg->kafka_brokers, w, sizeof(w))) {
		snprintf(why, whysz, "KafkaBrokers: %s", w);
		rd_kafka_conf_destroy(c);
		return NULL;
	}
	for (unsigned i = 0; i < cfg->n_kafka_props; i++) {
		const struct fb_kafka_prop *p = &cfg->kafka_props[i];
		if (fb_kafka_conf_set(c, p->name, p->value, w, sizeof(w))) {
			snprintf(why, whysz, "kafka.%s: %s", p->name, w);
			rd_kafka_conf_destroy(c);
			return NULL;
		}
	}
	rd_kafka_conf_set_log_cb(c, log_cb);
	return c;
}

int fb_kafka_check_config(const struct fb_config *cfg, char *why, size_t whysz)
{
	if (!cfg->kafka_brokers[0])
		return 0;
	rd_kafka_conf_t *c = fb_kafka_conf_new(cfg, why, whysz);
	if (!c)
		return FB_ECONFIG;
	/* Properties that only conflict together (e.g. sasl.mechanisms without
	 * security.protocol) show up when a client is made from them; making
	 * one does not connect. */
	char errstr[512];
	rd_kafka_t *rk = fb_kafka_new(RD_KAFKA_PRODUCER, c, errstr, sizeof(errstr));
	if (!rk) {
		snprintf(why, whysz, "Kafka configuration: %s", errstr);
		return FB_ECONFIG;
	}
	rd_kafka_destroy(rk);
	return 0;
}

/* kafka_conf.h - librdkafka configuration from fabricbus.conf.
 *
 * KafkaBrokers becomes bootstrap.servers; kafka.<property>=<value> lines are
 * applied in order with rd_kafka_conf_set; librdkafka's own log lines go to
 * fb_log. The properties that carry fabricbus's delivery guarantee belong
 * to fabricbus and are refused (enable.idempotence, acks, the delivery
 * report and message timeout settings, the broker list).
 */
#ifndef FB_KAFKA_CONF_H
#define FB_KAFKA_CONF_H

#include "config.h"

#include <librdkafka/rdkafka.h>
#include <stddef.h>

/* Check one property as librdkafka will see it. 0 or FB_ECONFIG with why. */
int fb_kafka_prop_check(const char *name, const char *value, char *why, size_t whysz);

/* Check the whole Kafka configuration without connecting. 0 or FB_ECONFIG. */
int fb_kafka_check_config(const struct fb_config *cfg, char *why, size_t whysz);

/* A new conf with the brokers, the user's properties and the log callback
 * (caller owns it: rd_kafka_new takes it, or rd_kafka_conf_destroy).
 * NULL with why on failure. */
rd_kafka_conf_t *fb_kafka_conf_new(const struct fb_config *cfg, char *why, size_t whysz);

/* rd_kafka_new that always takes conf: the client owns it, or it is
 * destroyed here, with librdkafka's reason in why. Makes no connection. */
rd_kafka_t *fb_kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, char *why, size_t whysz);

/* Set one property fabricbus requires; FB_ECONFIG with why. */
int fb_kafka_conf_set(rd_kafka_conf_t *conf, const char *name, const char *value, char *why,
		      size_t whysz);

#endif

/* slurm_source.c - Source=: fb_source (proto/client) set up from the
 * adapter's configuration and state (see slurm_source.h). */
#include "slurm_source.h"
#include "slurm_adapter.h"

#include "fb_log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int ready(void *arg)
{
	struct fbs_adapter *a = arg;
	return a->phase == FBS_P_RUNNING;
}

static int sync_state(void *arg)
{
	return fbs_adapter_sync(arg);
}

/* The state file's KafkaOffsets entry of topic[partition]. */
static int kafka_pos(void *arg, const char *topic, int32_t partition, struct fb_source_kpos *pos)
{
	struct fbs_adapter *a = arg;
	struct fbs_koff *o = fbs_state_koff(&a->st, topic, partition, 1);
	if (!o)
		return -ENOMEM;
	pos->offset = &o->offset;
	pos->event_id = &o->event_id;
	pos->broker = o->broker;
	pos->broker_size = sizeof(o->broker);
	return 0;
}

static size_t props_of(const struct fbs_config *c, struct fb_kc_prop *props)
{
	for (unsigned i = 0; i < c->n_kafka_props; i++) {
		props[i].name = c->kafka_props[i].name;
		props[i].value = c->kafka_props[i].value;
	}
	return c->n_kafka_props;
}

struct fb_source *fbs_source_start(struct fbs_adapter *a)
{
	const struct fbs_config *c = a->cfg;
	char topic_buf[sizeof(c->kafka_topics)];
	const char *topics[FBS_KAFKA_TOPICS_MAX];
	struct fb_kc_prop props[FBS_KAFKA_PROPS_MAX];
	struct fb_source_opts o;
	memset(&o, 0, sizeof(o));
	o.base = a->base;
	o.since = a->seen_id;
	o.on_event = fbs_adapter_on_message;
	o.arg = a;
	if (c->source == FBS_SRC_KAFKA) {
		o.kind = FB_SOURCE_KAFKA;
		o.brokers = c->kafka_brokers;
		o.group = c->kafka_group;
		o.client_id = "fabricbus-slurm";
		o.n_topics = fbs_kafka_topics_split(c->kafka_topics, topic_buf, sizeof(topic_buf),
						    topics, FBS_KAFKA_TOPICS_MAX);
		o.topics = topics;
		o.n_props = props_of(c, props);
		o.props = props;
		o.retry_ms = c->retry_ms;
		o.ready = ready;
		o.sync = sync_state;
		o.kafka_pos = kafka_pos;
	} else {
		o.kind = FB_SOURCE_WEBSOCKET;
		o.host = c->broker_host;
		o.port = (uint16_t)c->broker_port;
		o.auth = &a->http;
		/* Quiet events too (proto/PROTOCOL.md): a host's link_down over a rate
		 * limit, or the last transition of a flapping port, is still what a
		 * drain or a resume hangs on; the policy decides (DrainOn). */
		o.query = "quiet=1";
	}
	char err[768];
	struct fb_source *s = fb_source_start(&o, err, sizeof(err));
	if (!s)
		fb_log_err("%s", err);
	return s;
}

int fbs_source_kafka_check(const struct fbs_config *c, char *err, size_t errsz)
{
	struct fb_kc_prop props[FBS_KAFKA_PROPS_MAX];
	size_t n = props_of(c, props);
	return fb_source_kafka_check(c->kafka_group, props, n, err, errsz);
}

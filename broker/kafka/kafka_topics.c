/* kafka_topics.c - the topic map, KafkaSubscription values, murmur2. */
#include "kafka_topics.h"

#include "fb_err.h"
#include "fb_text.h"

#include <stdio.h>
#include <string.h>

int fb_kafka_topic_valid(const char *name)
{
	size_t n = strlen(name);
	return n < FB_KAFKA_TOPIC_MAX && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
	       fb_text_is_name(name, n);
}

/* A registry prefix is what comes before the first '.' of a MessageId. */
static int prefix_valid(const char *p)
{
	if (strcmp(p, "*") == 0)
		return 1;
	if (!*p || strlen(p) >= FB_KAFKA_PREFIX_MAX)
		return 0;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

static int fail(char *why, size_t whysz, const char *fmt, const char *what)
{
	snprintf(why, whysz, fmt, what);
	return FB_ECONFIG;
}

int fb_kafka_topic_map_parse(const char *s, struct fb_kafka_topic_map *out, char *why, size_t whysz)
{
	struct fb_kafka_topic_map m = { 0 };
	char buf[FB_KAFKA_MAP_MAX * (FB_KAFKA_PREFIX_MAX + FB_KAFKA_TOPIC_MAX + 2)];
	if (strlen(s) >= sizeof(buf))
		return fail(why, whysz, "%s", "the map is too long");
	strcpy(buf, s);
	int catch_all = 0;
	char *save = NULL;
	for (char *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		while (*e == ' ')
			e++;
		char *colon = strchr(e, ':');
		if (!colon)
			return fail(why, whysz, "'%.80s': expected Prefix:topic", e);
		*colon = '\0';
		const char *prefix = e, *topic = colon + 1;
		if (catch_all)
			return fail(why, whysz, "'%.80s': comes after the catch-all '*', which must be last",
				    prefix);
		if (!prefix_valid(prefix))
			return fail(why, whysz,
				    "'%.80s': a prefix is a MessageId registry prefix such as Fabric "
				    "(letters and digits) or '*'",
				    prefix);
		if (!fb_kafka_topic_valid(topic))
			return fail(why, whysz, "topic '%.80s': a topic name is 1..249 of [A-Za-z0-9._-]",
				    topic);
		if (m.n == FB_KAFKA_MAP_MAX)
			return fail(why, whysz, "%s", "too many entries (at most 16)");
		strcpy(m.route[m.n].prefix, prefix);
		strcpy(m.route[m.n].topic, topic);
		m.n++;
		catch_all = strcmp(prefix, "*") == 0;
	}
	if (!catch_all)
		return fail(why, whysz, "%s",
			    "no catch-all: end the map with *:<topic> so that every event has a topic");
	*out = m;
	return 0;
}

unsigned fb_kafka_topic_map_route(const struct fb_kafka_topic_map *m, const char *message_id)
{
	const char *dot = strchr(message_id, '.');
	size_t n = dot ? (size_t)(dot - message_id) : strlen(message_id);
	for (unsigned i = 0; i < m->n; i++) {
		const char *p = m->route[i].prefix;
		if (p[0] == '*' || (strlen(p) == n && memcmp(p, message_id, n) == 0))
			return i;
	}
	return m->n ? m->n - 1 : 0; /* unreachable for a parsed map: it ends with '*' */
}

int fb_kafka_topic_map_format(const struct fb_kafka_topic_map *m, char *out, size_t outsz)
{
	size_t off = 0;
	out[0] = '\0';
	for (unsigned i = 0; i < m->n; i++) {
		int w = snprintf(out + off, outsz - off, "%s%s:%s", i ? "," : "", m->route[i].prefix,
				 m->route[i].topic);
		if (w < 0 || (size_t)w >= outsz - off)
			return FB_ETOOBIG;
		off += (size_t)w;
	}
	return 0;
}

int fb_kafka_sub_parse(const char *s, struct fb_kafka_sub *out, char *why, size_t whysz)
{
	struct fb_kafka_sub sub;
	memset(&sub, 0, sizeof(sub));
	fb_filter_init(&sub.filter);
	const char *q = strchr(s, '?');
	size_t tlen = q ? (size_t)(q - s) : strlen(s);
	if (tlen >= sizeof(sub.topic))
		return fail(why, whysz, "%s", "the topic name is longer than 249 characters");
	memcpy(sub.topic, s, tlen);
	sub.topic[tlen] = '\0';
	if (!fb_kafka_topic_valid(sub.topic))
		return fail(why, whysz, "'%.260s': expected <topic>?<filter> with a topic of 1..249 of [A-Za-z0-9._-]",
			    sub.topic);
	const char *filter = q ? q + 1 : "";
	if (strlen(filter) >= sizeof(sub.text))
		return fail(why, whysz, "%s", "the filter is too long");
	strcpy(sub.text, filter);
	char buf[FB_FILTER_ARG_MAX];
	strcpy(buf, filter);
	char *save = NULL;
	for (char *a = strtok_r(buf, "&", &save); a; a = strtok_r(NULL, "&", &save)) {
		const char *ferr = NULL;
		if (strncmp(a, "since=", 6) == 0 || strcmp(a, "since") == 0)
			return fail(why, whysz, "%s", "since: not for Kafka (the broker's cursor decides)");
		const char *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a) : strlen(a);
		/* The WebSocket side ignores unknown names for forward compatibility;
		 * a config file should not silently carry a typo. */
		if (!((nl == 6 && memcmp(a, "prefix", 6) == 0) || (nl == 8 && memcmp(a, "severity", 8) == 0) ||
		      (nl == 6 && memcmp(a, "origin", 6) == 0)))
			return fail(why, whysz, "'%.80s': expected prefix=, severity= or origin=", a);
		if (fb_filter_arg(&sub.filter, a, &ferr))
			return fail(why, whysz, "%s", ferr ? ferr : "bad filter");
	}
	*out = sub;
	return 0;
}

int32_t fb_kafka_murmur2(const void *key, size_t len)
{
	const uint8_t *d = key;
	const uint32_t m = 0x5bd1e995;
	uint32_t h = 0x9747b28c ^ (uint32_t)len;
	size_t n4 = len / 4;
	for (size_t i = 0; i < n4; i++) {
		const uint8_t *p = d + 4 * i;
		uint32_t k = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			     (uint32_t)p[3] << 24;
		k *= m;
		k ^= k >> 24;
		k *= m;
		h *= m;
		h ^= k;
	}
	const uint8_t *t = d + (len & ~(size_t)3);
	switch (len & 3) {
	case 3: h ^= (uint32_t)t[2] << 16; /* fall through */
	case 2: h ^= (uint32_t)t[1] << 8;  /* fall through */
	case 1: h ^= t[0]; h *= m;
	}
	h ^= h >> 13;
	h *= m;
	h ^= h >> 15;
	return (int32_t)h;
}

int32_t fb_kafka_partition(const void *key, size_t len, int32_t partitions)
{
	uint32_t pos = (uint32_t)fb_kafka_murmur2(key, len) & 0x7fffffff;
	return (int32_t)(pos % (uint32_t)partitions);
}

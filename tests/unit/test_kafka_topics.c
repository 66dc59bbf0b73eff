/* test_kafka_topics.c - where an event goes in Kafka: the topic map, the
 * KafkaSubscription values, Kafka's murmur2 partitioner, the cursor file,
 * and the Kafka keys of fabricbus.conf. No Kafka broker is needed. */
#include "fb_test.h"

#include "config.h"
#include "fb_err.h"
#include "fb_event.h"
#include "kafka_cursor.h"
#include "kafka_topics.h"

#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>


static int map_fails(const char *s, const char *needle)
{
	struct fb_kafka_topic_map m;
	char why[256] = "";
	if (fb_kafka_topic_map_parse(s, &m, why, sizeof(why)) != FB_ECONFIG) {
		fprintf(stderr, "  accepted: '%s'\n", s);
		return 0;
	}
	if (!strstr(why, needle)) {
		fprintf(stderr, "  '%s': why '%s' lacks '%s'\n", s, why, needle);
		return 0;
	}
	return 1;
}

/* An input that must be refused with an error naming needle. */
struct refusal {
	const char *text, *needle;
};

/* The index of the first case not refused as it should be (fails(text,
 * needle) says why), or -1 when every one is. */
static long first_wrong_case(int (*fails)(const char *, const char *), const struct refusal *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!fails(cases[i].text, cases[i].needle))
			return (long)i;
	return -1;
}

static void default_map_routes_each_registry(void)
{
	struct fb_kafka_topic_map m;
	char why[256];
	CHECK_EQ(fb_kafka_topic_map_parse(FB_KAFKA_DEFAULT_MAP, &m, why, sizeof(why)), 0);
	CHECK_EQ(m.n, 4);
	CHECK_STR(m.route[fb_kafka_topic_map_route(&m, "Fabric.1.0.PortFailed")].topic, "fabric.events");
	CHECK_STR(m.route[fb_kafka_topic_map_route(&m, "NetworkDevice.1.1.ConnectionDropped")].topic,
		  "fabric.netdev");
	CHECK_STR(m.route[fb_kafka_topic_map_route(&m, "ResourceEvent.1.4.ResourceChanged")].topic,
		  "fabric.resource");
	CHECK_STR(m.route[fb_kafka_topic_map_route(&m, "Fabricbus.1.0.SubscriberEventsMissed")].topic,
		  "fabric.other");
	/* the registry prefix is matched whole: "Fabric" is not a prefix of "FabricX." */
	CHECK_STR(m.route[fb_kafka_topic_map_route(&m, "FabricX.1.0.Thing")].topic, "fabric.other");
	CHECK_STR(m.route[fb_kafka_topic_map_route(&m, "HeartbeatEvent.1.0.RedfishServiceFunctional")].topic,
		  "fabric.other");
	char out[1024];
	CHECK_EQ(fb_kafka_topic_map_format(&m, out, sizeof(out)), 0);
	CHECK_STR(out, FB_KAFKA_DEFAULT_MAP);
}

static void first_matching_route_wins(void)
{
	struct fb_kafka_topic_map m;
	char why[256];
	CHECK_EQ(fb_kafka_topic_map_parse("Fabric:a,Fabric:b,*:c", &m, why, sizeof(why)), 0);
	CHECK_STR(m.route[fb_kafka_topic_map_route(&m, "Fabric.1.0.PortOK")].topic, "a");
	CHECK_EQ(fb_kafka_topic_map_parse("*:everything", &m, why, sizeof(why)), 0);
	CHECK_STR(m.route[fb_kafka_topic_map_route(&m, "Fabric.1.0.PortOK")].topic, "everything");
}

static void map_requires_a_catch_all_last(void)
{
	CHECK(map_fails("Fabric:a", "no catch-all"));
	CHECK(map_fails("", "no catch-all"));
	CHECK(map_fails("*:a,Fabric:b", "after the catch-all"));
}

static void map_refuses_bad_names_and_says_which(void)
{
	static const struct refusal cases[] = {
		{ "Fabric:bad topic,*:x", "'bad topic'" },
		{ "Fabric:a/b,*:x", "topic name" },
		{ "Fabric:,*:x", "topic name" },
		{ "Fabric:..,*:x", "topic name" },
		{ "Fab.ric:a,*:x", "'Fab.ric'" },
		{ "Fabric,*:x", "expected Prefix:topic" },
	};
	CHECK_EQ(first_wrong_case(map_fails, cases, sizeof(cases) / sizeof(cases[0])), -1);
	char big[400] = "Fabric:";
	memset(big + 7, 'a', 250);
	strcpy(big + 257, ",*:x");
	CHECK(map_fails(big, "topic name"));
	CHECK(fb_kafka_topic_valid("fabric.events_1-x"));
	char t249[250];
	memset(t249, 'z', 249);
	t249[249] = '\0';
	CHECK(fb_kafka_topic_valid(t249));
}

static void subscription_parses_topic_and_ws_filter(void)
{
	struct fb_kafka_sub s;
	char why[256];
	CHECK_EQ(fb_kafka_sub_parse("ops.critical?severity=Critical&prefix=Fabric.", &s, why, sizeof(why)), 0);
	CHECK_STR(s.topic, "ops.critical");
	CHECK(fb_filter_match(&s.filter, "Fabric.1.0.PortFailed", FB_SEV_CRITICAL, NULL));
	CHECK(!fb_filter_match(&s.filter, "Fabric.1.0.PortOK", FB_SEV_OK, NULL));
	CHECK(!fb_filter_match(&s.filter, "NetworkDevice.1.1.CableRemoved", FB_SEV_CRITICAL, NULL));
	CHECK_EQ(fb_kafka_sub_parse("all", &s, why, sizeof(why)), 0);
	CHECK(fb_filter_match(&s.filter, "Fabric.1.0.PortOK", FB_SEV_OK, NULL));
	CHECK_EQ(fb_kafka_sub_parse("sw1?origin=/redfish/v1/Fabrics/IB/Switches/sw1", &s, why, sizeof(why)), 0);
	CHECK(fb_filter_match(&s.filter, "Fabric.1.0.PortOK", FB_SEV_OK,
				 "/redfish/v1/Fabrics/IB/Switches/sw1/Ports/3"));
	CHECK(!fb_filter_match(&s.filter, "Fabric.1.0.PortOK", FB_SEV_OK,
				  "/redfish/v1/Fabrics/IB/Switches/sw10/Ports/3"));
}

static void subscription_refuses_bad_values_and_names_them(void)
{
	struct fb_kafka_sub s;
	char why[256];
	CHECK_EQ(fb_kafka_sub_parse("bad topic?severity=OK", &s, why, sizeof(why)), FB_ECONFIG);
	CHECK(strstr(why, "bad topic"));
	CHECK_EQ(fb_kafka_sub_parse("t?severity=Fatal", &s, why, sizeof(why)), FB_ECONFIG);
	CHECK(strstr(why, "severity:"));
	CHECK_EQ(fb_kafka_sub_parse("t?since=5", &s, why, sizeof(why)), FB_ECONFIG);
	CHECK(strstr(why, "since"));
	CHECK_EQ(fb_kafka_sub_parse("t?sevrity=OK", &s, why, sizeof(why)), FB_ECONFIG);
	CHECK(strstr(why, "sevrity"));
	CHECK_EQ(fb_kafka_sub_parse("?prefix=Fabric.", &s, why, sizeof(why)), FB_ECONFIG);
}

/* Values from Kafka's own UtilsTest.testMurmur2 (Java, signed ints). */
static void murmur2_matches_kafka_java(void)
{
	static const struct { const char *key; int32_t h; } cases[] = {
		{ "21", -973932308 },
		{ "foobar", -790332482 },
		{ "a-little-bit-long-string", -985981536 },
		{ "a-little-bit-longer-string", -1486304829 },
		{ "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971 },
		{ "abc", 479470107 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQ(fb_kafka_murmur2(cases[i].key, strlen(cases[i].key)), cases[i].h);
	/* the empty key (an event without an origin) */
	CHECK_EQ((uint32_t)fb_kafka_murmur2("", 0), 0x106e08d9u);
}

/* librdkafka's murmur2 partitioner is the same function, written apart. */
static void partition_matches_librdkafka_murmur2_partitioner(void)
{
	char key[128];
	for (int i = 0; i < 2000; i++) {
		int n = snprintf(key, sizeof(key), "/redfish/v1/Fabrics/IB/Switches/0x%016x/Ports/%d",
				 (unsigned)(i * 2654435761u), i % 97);
		size_t len = (size_t)n - (size_t)(i % 7); /* every tail length */
		for (int32_t parts = 1; parts <= 13; parts += 4)
			CHECK_EQ(fb_kafka_partition(key, len, parts),
				 rd_kafka_msg_partitioner_murmur2(NULL, key, len, parts, NULL, NULL));
	}
	CHECK_EQ(fb_kafka_partition("21", 2, 4), (-973932308 & 0x7fffffff) % 4);
}

static void cursor_file_round_trips(void)
{
	uint64_t c = 99;
	const char *why;
	CHECK_EQ(fb_kafka_cursor_read(fbt_dir(), 0x1234, &c, &why), -ENOENT);
	CHECK_EQ(fb_kafka_cursor_write(fbt_dir(), 0x1234, 0), 0);
	CHECK_EQ(fb_kafka_cursor_read(fbt_dir(), 0x1234, &c, &why), 0);
	CHECK_EQ(c, 0);
	CHECK_EQ(fb_kafka_cursor_write(fbt_dir(), 0x1234, UINT64_MAX), 0);
	CHECK_EQ(fb_kafka_cursor_read(fbt_dir(), 0x1234, &c, &why), 0);
	CHECK(c == UINT64_MAX);
	CHECK_EQ(fb_kafka_cursor_write(fbt_dir(), 0xfeedfacecafebeefull, 123456789), 0);
	CHECK_EQ(fb_kafka_cursor_read(fbt_dir(), 0xfeedfacecafebeefull, &c, &why), 0);
	CHECK_EQ(c, 123456789);
	char tmp[128];
	snprintf(tmp, sizeof(tmp), "%s/kafka.cursor.tmp", fbt_dir());
	CHECK(access(tmp, F_OK) != 0); /* renamed, not left behind */
}

static void write_raw(const char *text)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/kafka.cursor", fbt_dir());
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void cursor_file_refuses_corruption_and_other_epochs(void)
{
	uint64_t c = 7;
	const char *why = NULL;
	CHECK_EQ(fb_kafka_cursor_write(fbt_dir(), 0xabc, 4242), 0);
	CHECK_EQ(fb_kafka_cursor_read(fbt_dir(), 0xabd, &c, &why), FB_ECORRUPT);
	CHECK(why && strstr(why, "epoch"));
	char path[128], line[160];
	snprintf(path, sizeof(path), "%s/kafka.cursor", fbt_dir());
	FILE *f = fopen(path, "r");
	CHECK(f && fgets(line, sizeof(line), f));
	fclose(f);
	char *digit = strstr(line, " 4242 ");
	CHECK(digit);
	digit[1] = '5'; /* 5242: a flipped digit fails the checksum */
	write_raw(line);
	CHECK_EQ(fb_kafka_cursor_read(fbt_dir(), 0xabc, &c, &why), FB_ECORRUPT);
	CHECK(strstr(why, "checksum"));
	write_raw("");
	CHECK_EQ(fb_kafka_cursor_read(fbt_dir(), 0xabc, &c, &why), FB_ECORRUPT);
	write_raw("fabricbus-kafka-cursor 1 0000000000000abc 42");
	CHECK_EQ(fb_kafka_cursor_read(fbt_dir(), 0xabc, &c, &why), FB_ECORRUPT);
	write_raw("garbage\n");
	CHECK_EQ(fb_kafka_cursor_read(fbt_dir(), 0xabc, &c, &why), FB_ECORRUPT);
	CHECK_EQ(c, 7); /* untouched on failure */
}

static const char *write_conf(const char *text)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/k.conf", fbt_dir());
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static int conf_fails(const char *text, const char *needle)
{
	static struct fb_config c;
	char err[768] = "";
	fb_config_defaults(&c);
	if (fb_config_load_file(&c, write_conf(text), err, sizeof(err)) != FB_ECONFIG) {
		fprintf(stderr, "  accepted: %s", text);
		return 0;
	}
	if (!strstr(err, needle)) {
		fprintf(stderr, "  error '%s' lacks '%s'\n", err, needle);
		return 0;
	}
	return 1;
}

static void config_kafka_keys_apply(void)
{
	static struct fb_config c;
	char err[768];
	fb_config_defaults(&c);
	CHECK_STR(c.kafka_brokers, "");
	CHECK_EQ(c.kafka_cursor_sync_ms, 100);
	CHECK_EQ(c.kafka_map.n, 4);
	int rc = fb_config_load_file(&c, write_conf("KafkaBrokers=127.0.0.1:9092,kafka2:9093\n"
						    "KafkaTopicMap=Fabric:f,*:o\n"
						    "KafkaSubscription=crit?severity=Critical\n"
						    "KafkaSubscription=all\n"
						    "KafkaCursorSync=250ms\n"
						    "kafka.linger.ms=20\n"
						    "kafka.client.id=fb-test\n"),
				     err, sizeof(err));
	if (rc)
		fprintf(stderr, "  %s\n", err);
	CHECK_EQ(rc, 0);
	CHECK_STR(c.kafka_brokers, "127.0.0.1:9092,kafka2:9093");
	CHECK_EQ(c.kafka_map.n, 2);
	CHECK_EQ(c.n_kafka_subs, 2);
	CHECK_STR(c.kafka_subs[1].topic, "all");
	CHECK_EQ(c.kafka_cursor_sync_ms, 250);
	CHECK_EQ(c.n_kafka_props, 2);
	CHECK_STR(c.kafka_props[0].name, "linger.ms");
	CHECK_STR(c.kafka_props[1].value, "fb-test");
	CHECK_EQ(fb_config_set(&c, "kafka.linger.ms=1", "-o", err, sizeof(err)), 0);
	CHECK_STR(c.kafka_props[0].value, "1");
}

static void config_kafka_errors_name_file_line_and_key(void)
{
	static const struct refusal cases[] = {
		{ "LogLevel=info\nKafkaTopicMap=Fabric:a\n", "k.conf:2: KafkaTopicMap" },
		{ "KafkaTopicMap=Fabric:a\n", "no catch-all" },
		{ "KafkaTopicMap=*:a\nKafkaTopicMap=*:b\n", "set twice" },
		{ "kafka.enable.idempotence=false\n", "k.conf:1: kafka.enable.idempotence" },
		{ "kafka.acks=1\n", "not configurable" },
		{ "kafka.message.timeout.ms=1000\n", "not configurable" },
		{ "kafka.no.such.property=1\n", "kafka.no.such.property" },
		{ "kafka.linger.ms=banana\n", "kafka.linger.ms" },
		{ "kafka.linger.ms=5\nkafka.linger.ms=6\n", "set twice" },
		{ "KafkaBrokers=nohost\n", "KafkaBrokers" },
		{ "KafkaSubscription=t?severity=Bad\n", "k.conf:1: KafkaSubscription" },
	};
	CHECK_EQ(first_wrong_case(conf_fails, cases, sizeof(cases) / sizeof(cases[0])), -1);
	char many[40 * 40] = "";
	for (int i = 0; i < 33; i++)
		strcat(many, "KafkaSubscription=t\n");
	CHECK(conf_fails(many, "at most 32"));
}

int main(void)
{
	RUN(default_map_routes_each_registry);
	RUN(first_matching_route_wins);
	RUN(map_requires_a_catch_all_last);
	RUN(map_refuses_bad_names_and_says_which);
	RUN(subscription_parses_topic_and_ws_filter);
	RUN(subscription_refuses_bad_values_and_names_them);
	RUN(murmur2_matches_kafka_java);
	RUN(partition_matches_librdkafka_murmur2_partitioner);
	RUN(cursor_file_round_trips);
	RUN(cursor_file_refuses_corruption_and_other_epochs);
	RUN(config_kafka_keys_apply);
	RUN(config_kafka_errors_name_file_line_and_key);
	return TEST_DONE();
}

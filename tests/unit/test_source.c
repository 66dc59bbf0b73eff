/* test_source.c - fb_source's pure parts (proto/client/fb_source.h): which
 * Kafka message is handed over, skipped as a redelivery or as older than
 * the resume point, or read as new because its topic was made again; the
 * consumer properties; and the configuration check. No Kafka broker is
 * needed: the check makes a consumer without connecting. */
#include "fb_test.h"

#include "fb_err.h"
#include "fb_source.h"

#include <stdio.h>
#include <string.h>

struct rec {
	int64_t offset;
	uint64_t event_id;
	char broker[24];
	struct fb_source_kpos pos;
};

static void rec_init(struct rec *r, int64_t offset, uint64_t event_id, const char *broker)
{
	r->offset = offset;
	r->event_id = event_id;
	snprintf(r->broker, sizeof(r->broker), "%s", broker);
	r->pos.offset = &r->offset;
	r->pos.event_id = &r->event_id;
	r->pos.broker = r->broker;
	r->pos.broker_size = sizeof(r->broker);
}

static struct fb_kc_msg msg(int64_t offset, uint64_t event_id, const char *broker)
{
	struct fb_kc_msg m;
	memset(&m, 0, sizeof(m));
	m.topic = "fabric.events";
	m.offset = offset;
	m.event_id = event_id;
	m.broker = broker;
	m.value = "{}";
	m.value_len = 2;
	return m;
}

static void new_partition_hands_over_and_records(void)
{
	struct rec r;
	rec_init(&r, -1, 0, "");
	struct fb_kc_msg m = msg(0, 11, "b1");
	int recreated = -1;
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 10, &recreated), FB_SOURCE_HANDLE);
	CHECK_EQ(recreated, 0);
	CHECK_EQ(r.offset, 0);
	CHECK_EQ(r.event_id, 11);
	CHECK_STR(r.broker, "b1");
}

static void offset_at_or_below_record_is_a_redelivery(void)
{
	struct rec r;
	rec_init(&r, 5, 15, "b1");
	int recreated;
	struct fb_kc_msg m = msg(5, 15, "b1");
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 0, &recreated), FB_SOURCE_REDELIVERED);
	m = msg(3, 13, "b1");
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 0, &recreated), FB_SOURCE_REDELIVERED);
	CHECK_EQ(recreated, 0);
	CHECK_EQ(r.offset, 5); /* a redelivery leaves the record alone */
	CHECK_EQ(r.event_id, 15);
}

static void newer_event_of_same_broker_at_old_offset_is_a_recreated_topic(void)
{
	struct rec r;
	rec_init(&r, 5, 15, "b1");
	int recreated;
	struct fb_kc_msg m = msg(0, 20, "b1");
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 0, &recreated), FB_SOURCE_HANDLE);
	CHECK_EQ(recreated, 1);
	CHECK_EQ(r.offset, 0);
	CHECK_EQ(r.event_id, 20);
	/* Another broker's (or no broker's) newer EventId proves nothing. */
	rec_init(&r, 5, 15, "b1");
	m = msg(0, 20, "b2");
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 0, &recreated), FB_SOURCE_REDELIVERED);
	m = msg(0, 20, "");
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 0, &recreated), FB_SOURCE_REDELIVERED);
	CHECK_EQ(recreated, 0);
}

static void event_at_or_below_since_is_old_but_recorded(void)
{
	struct rec r;
	rec_init(&r, -1, 0, "");
	int recreated;
	struct fb_kc_msg m = msg(7, 10, "b1");
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 10, &recreated), FB_SOURCE_OLD);
	CHECK_EQ(r.offset, 7); /* so that it is not counted again after a crash */
	m = msg(8, 11, "b1");
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 10, &recreated), FB_SOURCE_HANDLE);
	/* No EventId header: not judged by EventId. */
	m = msg(9, 0, "b1");
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 10, &recreated), FB_SOURCE_HANDLE);
}

static void tombstone_is_skipped_and_recorded(void)
{
	struct rec r;
	rec_init(&r, -1, 0, "");
	int recreated;
	struct fb_kc_msg m = msg(4, 12, "b1");
	m.value = NULL;
	m.value_len = 0;
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 10, &recreated), FB_SOURCE_EMPTY);
	CHECK_EQ(r.offset, 4);
}

static void long_broker_epoch_is_cut_to_the_record(void)
{
	struct rec r;
	rec_init(&r, -1, 0, "");
	int recreated;
	struct fb_kc_msg m = msg(1, 1, "0123456789012345678901234567890123456789");
	CHECK_EQ(fb_source_kafka_judge(&r.pos, &m, 0, &recreated), FB_SOURCE_HANDLE);
	CHECK_EQ(strlen(r.broker), sizeof(r.broker) - 1);
}

static void user_properties_follow_the_defaults_so_they_win(void)
{
	struct fb_kc_prop user[] = { { "fetch.wait.max.ms", "20" }, { "client.rack", "r1" } };
	struct fb_kc_prop out[8];
	size_t n = fb_source_kafka_props(user, 2, out, 8);
	CHECK_EQ(n, 3);
	CHECK_STR(out[0].name, "fetch.wait.max.ms");
	CHECK_STR(out[0].value, "100");
	CHECK_STR(out[1].value, "20");
	CHECK_STR(out[2].name, "client.rack");
	CHECK_EQ(fb_source_kafka_props(user, 2, out, 2), 2); /* bounded by outn */
}

static void kafka_check_names_the_bad_setting(void)
{
	char err[512] = "";
	struct fb_kc_prop ok[] = { { "session.timeout.ms", "12000" } };
	CHECK_EQ(fb_source_kafka_check("g1", ok, 1, err, sizeof(err)), 0);
	struct fb_kc_prop bad[] = { { "session.timeout.ms", "12000" }, { "no.such.property", "1" } };
	CHECK_EQ(fb_source_kafka_check("g1", bad, 2, err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "kafka.no.such.property: ") != NULL);
	/* Each value is valid alone; together librdkafka refuses them. */
	struct fb_kc_prop clash[] = { { "message.max.bytes", "2000000" },
				      { "fetch.max.bytes", "1500000" } };
	CHECK_EQ(fb_source_kafka_check("g1", clash, 2, err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "does not hold together") != NULL);
}

int main(void)
{
	RUN(new_partition_hands_over_and_records);
	RUN(offset_at_or_below_record_is_a_redelivery);
	RUN(newer_event_of_same_broker_at_old_offset_is_a_recreated_topic);
	RUN(event_at_or_below_since_is_old_but_recorded);
	RUN(tombstone_is_skipped_and_recorded);
	RUN(long_broker_epoch_is_cut_to_the_record);
	RUN(user_properties_follow_the_defaults_so_they_win);
	RUN(kafka_check_names_the_bad_setting);
	return TEST_DONE();
}

/* test_proto.c - the wire codec: round trips and every reject path. */
#include "fb_test.h"
#include "fb_test_event.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_wire.h"

#include <stdlib.h>

/* The fixture without jobs: the tests below find the counter count in the
 * last byte of an encoded event. */
static void sample_event(struct fb_event *ev, uint64_t seq)
{
	fbt_event_full(ev);
	ev->seq = seq;
	ev->jobs[0] = '\0';
}

/* Decode the first n bytes of b from a block of exactly that size, so that
 * ASan sees any read past them. */
static int decode_prefix(const struct fb_buf *b, size_t n, struct fb_event *out)
{
	uint8_t *copy = malloc(n ? n : 1);
	memcpy(copy, b->data, n);
	int rc = fb_event_decode(copy, n, out);
	free(copy);
	return rc;
}

/* The sample encoded twice: into plain without jobs, into b with jobs. */
static int encode_without_and_with_jobs(struct fb_event *in, const char *jobs, struct fb_buf *plain,
					struct fb_buf *b)
{
	sample_event(in, 7);
	int rc = fb_event_encode(plain, in);
	strcpy(in->jobs, jobs);
	return rc ? rc : fb_event_encode(b, in);
}

static int events_equal(const struct fb_event *a, const struct fb_event *b)
{
	/* Compare field by field: padding bytes are not part of the value. */
	return a->seq == b->seq && a->ts_ns == b->ts_ns && a->kind == b->kind &&
	       a->severity == b->severity && a->link_class == b->link_class && a->tech == b->tech &&
	       a->port_state == b->port_state && a->phys_state == b->phys_state &&
	       !strcmp(a->subj.fabric, b->subj.fabric) && !strcmp(a->subj.switch_name, b->subj.switch_name) &&
	       a->subj.switch_guid == b->subj.switch_guid && a->subj.port == b->subj.port &&
	       a->subj.port_guid == b->subj.port_guid && a->subj.lid == b->subj.lid &&
	       !strcmp(a->subj.node, b->subj.node) && !strcmp(a->subj.device, b->subj.device) &&
	       !strcmp(a->subj.addr, b->subj.addr) && a->subj.ifindex == b->subj.ifindex &&
	       a->subj.peer_guid == b->subj.peer_guid && a->subj.peer_port == b->subj.peer_port &&
	       !strcmp(a->subj.peer_name, b->subj.peer_name) && !strcmp(a->text, b->text) &&
	       !strcmp(a->jobs, b->jobs) &&
	       a->n_counters == b->n_counters &&
	       (a->n_counters == 0 ||
		(a->counters[0].id == b->counters[0].id && a->counters[0].value == b->counters[0].value &&
		 a->counters[a->n_counters - 1].value == b->counters[b->n_counters - 1].value));
}

static void event_roundtrip_keeps_every_field(void)
{
	struct fb_event in, out;
	struct fb_buf b = FB_BUF_INIT;
	sample_event(&in, 7);
	CHECK_EQ(fb_event_encode(&b, &in), 0);
	memset(&out, 0xAA, sizeof(out));
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), 0);
	CHECK(events_equal(&in, &out));
	fb_buf_free(&b);
}

static void event_with_jobs_roundtrips(void)
{
	struct fb_event in, out;
	struct fb_buf plain = FB_BUF_INIT, b = FB_BUF_INIT;
	CHECK_EQ(encode_without_and_with_jobs(&in, "123,124,4294967295", &plain, &b), 0);
	/* the same bytes, then one str8 */
	CHECK_EQ(b.len, plain.len + 1 + strlen(in.jobs));
	CHECK(memcmp(b.data, plain.data, plain.len) == 0);
	CHECK_EQ(b.data[plain.len], strlen(in.jobs));
	memset(&out, 0xAA, sizeof(out));
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), 0);
	CHECK(events_equal(&in, &out));

	memset(in.jobs, '1', FB_JOBS_MAX - 1); /* the longest list: 95 bytes */
	in.jobs[FB_JOBS_MAX - 1] = '\0';
	fb_buf_reset(&b);
	CHECK_EQ(fb_event_encode(&b, &in), 0);
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), 0);
	CHECK(events_equal(&in, &out));
	fb_buf_free(&plain);
	fb_buf_free(&b);
}

static void event_without_jobs_ends_after_counters(void)
{
	struct fb_event in, out;
	struct fb_buf b = FB_BUF_INIT;
	sample_event(&in, 7);
	CHECK_EQ(fb_event_encode(&b, &in), 0);
	size_t want = 56 + 1 + 1;
	const char *strs[] = { in.subj.fabric, in.subj.switch_name, in.subj.node, in.subj.device,
			       in.subj.addr, in.subj.peer_name, in.text };
	for (size_t i = 0; i < 7; i++)
		want += 1 + strlen(strs[i]);
	want += in.n_counters * 10u - 1;
	CHECK_EQ(b.len, want); /* no trailing byte at all */
	strcpy(out.jobs, "stale");
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), 0);
	CHECK_STR(out.jobs, ""); /* a reused event does not keep old jobs */
	fb_buf_free(&b);
}

/* The seed corpus was written before jobs existed: each of its events must
 * decode and encode back to the very same bytes. */
static void old_encodings_reencode_byte_identical(void)
{
	char path[1200];
	const char *src = getenv("FB_SRC");
	if (src && *src) {
		snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/fuzz_wire/hello_events_heartbeat", src);
	} else {
		const char *f = __FILE__, *cut = strstr(f, "tests/unit/test_proto.c");
		snprintf(path, sizeof(path), "%.*stests/fuzz/corpus/fuzz_wire/hello_events_heartbeat",
			 cut ? (int)(cut - f) : 0, f);
	}
	FILE *fp = fopen(path, "rb");
	CHECK(fp);
	uint8_t data[4096];
	size_t len = fread(data, 1, sizeof(data), fp);
	fclose(fp);
	size_t off = 0;
	unsigned events = 0;
	while (off < len) {
		struct fb_frame_hdr h;
		CHECK_EQ(fb_frame_peek(data + off, len - off, FB_FRAME_MAX_DEFAULT, &h), 0);
		if (h.type == FB_FRAME_EVENTS) {
			struct fb_events_reader r;
			struct fb_event ev;
			const uint8_t *raw;
			size_t raw_len;
			int rc;
			CHECK_EQ(fb_events_open(&r, data + off + FB_FRAME_HDR_LEN, h.body_len), 0);
			while ((rc = fb_events_next(&r, &ev, &raw, &raw_len)) == 1) {
				struct fb_buf b = FB_BUF_INIT;
				int same = fb_event_encode(&b, &ev) == 0 && b.len == raw_len &&
					   memcmp(b.data, raw, raw_len) == 0;
				fb_buf_free(&b);
				CHECK(same);
				events++;
			}
			CHECK_EQ(rc, 0);
		}
		off += FB_FRAME_HDR_LEN + h.body_len;
	}
	CHECK_EQ(events, 3);
}

static void events_frame_roundtrip(void)
{
	struct fb_buf b = FB_BUF_INIT;
	struct fb_events_writer w;
	struct fb_event ev;
	CHECK_EQ(fb_events_begin(&w, &b), 0);
	for (uint64_t i = 1; i <= 100; i++) {
		sample_event(&ev, i);
		CHECK_EQ(fb_events_add(&w, &ev), 0);
	}
	CHECK_EQ(fb_events_end(&w), 0);
	struct fb_frame_hdr h;
	CHECK_EQ(fb_frame_peek(b.data, b.len, FB_FRAME_MAX_DEFAULT, &h), 0);
	CHECK_EQ(h.type, FB_FRAME_EVENTS);
	CHECK_EQ(h.body_len + FB_FRAME_HDR_LEN, b.len);
	struct fb_events_reader r;
	CHECK_EQ(fb_events_open(&r, b.data + FB_FRAME_HDR_LEN, h.body_len), 0);
	CHECK_EQ(r.count, 100);
	uint64_t want = 1;
	int rc;
	const uint8_t *raw;
	size_t raw_len;
	while ((rc = fb_events_next(&r, &ev, &raw, &raw_len)) == 1) {
		CHECK_EQ(ev.seq, want);
		CHECK(raw_len > 0 && raw > b.data);
		want++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(want, 101);
	fb_buf_free(&b);
}

static void control_frames_roundtrip(void)
{
	struct fb_buf b = FB_BUF_INIT;
	struct fb_hello h = { FB_PROTO_VERSION, "ib-agent-1", 99 }, h2;
	CHECK_EQ(fb_wire_put_hello(&b, &h), 0);
	struct fb_frame_hdr fh;
	CHECK_EQ(fb_frame_peek(b.data, b.len, 1024, &fh), 0);
	CHECK_EQ(fh.type, FB_FRAME_HELLO);
	CHECK_EQ(fb_wire_parse_hello(b.data + 8, fh.body_len, &h2), 0);
	CHECK_STR(h2.agent_id, "ib-agent-1");
	CHECK_EQ(h2.last_acked, 99);

	fb_buf_reset(&b);
	struct fb_hello_ack a = { 123, 1 << 20, 5000, 0xdeadbeefull }, a2;
	CHECK_EQ(fb_wire_put_hello_ack(&b, &a), 0);
	CHECK_EQ(fb_wire_parse_hello_ack(b.data + 8, b.len - 8, &a2), 0);
	CHECK_EQ(a2.last_seq, 123);
	CHECK_EQ(a2.heartbeat_ms, 5000);
	CHECK_EQ(a2.broker_epoch, 0xdeadbeefull);

	fb_buf_reset(&b);
	uint64_t seq = 0;
	CHECK_EQ(fb_wire_put_ack(&b, 1ull << 50), 0);
	CHECK_EQ(fb_wire_parse_ack(b.data + 8, b.len - 8, &seq), 0);
	CHECK_EQ(seq, 1ull << 50);

	fb_buf_reset(&b);
	char longtext[400];
	memset(longtext, 'x', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	struct fb_error_msg e;
	CHECK_EQ(fb_wire_put_error(&b, FB_WERR_VERSION, longtext), 0);
	CHECK_EQ(fb_wire_parse_error(b.data + 8, b.len - 8, &e), 0);
	CHECK_EQ(e.code, FB_WERR_VERSION);
	CHECK_EQ(strlen(e.text), 255);
	fb_buf_free(&b);
}

static void peek_rejects_bad_magic_version_and_size(void)
{
	uint8_t hdr[8] = { 'F', 'B', FB_PROTO_VERSION, FB_FRAME_ACK, 0, 0, 0, 8 };
	struct fb_frame_hdr h;
	CHECK_EQ(fb_frame_peek(hdr, 8, 1024, &h), FB_EAGAIN); /* body missing */
	CHECK_EQ(fb_frame_peek(hdr, 5, 1024, &h), FB_EAGAIN);
	uint8_t bad[8] = { 'G', 'E', 'T', ' ', '/', ' ', 'H', 'T' };
	CHECK_EQ(fb_frame_peek(bad, 8, 1024, &h), FB_EMALFORMED);
	CHECK_EQ(fb_frame_peek(bad, 1, 1024, &h), FB_EMALFORMED);
	hdr[2] = 9;
	CHECK_EQ(fb_frame_peek(hdr, 8, 1024, &h), FB_EVERSION);
	CHECK_EQ(h.version, 9);
	hdr[2] = FB_PROTO_VERSION;
	fb_store_be32(hdr + 4, 2000);
	CHECK_EQ(fb_frame_peek(hdr, 8, 1024, &h), FB_ETOOBIG);
	fb_store_be32(hdr + 4, 0xFFFFFFFFu);
	CHECK_EQ(fb_frame_peek(hdr, 8, FB_FRAME_MAX_LIMIT, &h), FB_ETOOBIG);
}

static void decode_rejects_every_truncation(void)
{
	struct fb_event in, out;
	struct fb_buf b = FB_BUF_INIT;
	sample_event(&in, 3);
	CHECK_EQ(fb_event_encode(&b, &in), 0);
	/* Every strict prefix of a valid event must fail, never read past it. */
	for (size_t n = 0; n < b.len; n++)
		CHECK(decode_prefix(&b, n, &out) < 0);
	fb_buf_free(&b);
}

static void decode_rejects_bad_fields(void)
{
	struct fb_event in, out;
	struct fb_buf b = FB_BUF_INIT;
	sample_event(&in, 3);
	CHECK_EQ(fb_event_encode(&b, &in), 0);
	/* kind byte is at offset 16 */
	b.data[16] = 200;
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), FB_EMALFORMED);
	b.data[16] = FB_KIND_LINK_DOWN;
	b.data[17] = 3; /* severity */
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), FB_EMALFORMED);
	b.data[17] = FB_SEV_OK;
	/* seq 0 is not a sequence number */
	memset(b.data, 0, 8);
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), FB_EMALFORMED);
	fb_buf_free(&b);
}

static void decode_rejects_invalid_utf8_and_nul(void)
{
	struct fb_event in, out;
	struct fb_buf b = FB_BUF_INIT;
	sample_event(&in, 3);
	strcpy(in.subj.fabric, "AB");
	CHECK_EQ(fb_event_encode(&b, &in), 0);
	/* fabric is the first string, right after the 56 fixed bytes */
	CHECK_EQ(b.data[56], 2);
	b.data[57] = 0xC0; /* overlong lead byte */
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), FB_EMALFORMED);
	b.data[57] = 0;
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), FB_EMALFORMED);
	b.data[57] = 'A';
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), 0);
	fb_buf_free(&b);
}

static void decode_rejects_oversize_string_and_counters(void)
{
	struct fb_buf b = FB_BUF_INIT;
	struct fb_event in, out;
	sample_event(&in, 3);
	in.subj.fabric[0] = '\0';
	CHECK_EQ(fb_event_encode(&b, &in), 0);
	/* Grow the fabric string to 40 bytes (the field holds 31). */
	struct fb_buf big = FB_BUF_INIT;
	fb_buf_put(&big, b.data, 56);
	fb_buf_put_u8(&big, 40);
	for (int i = 0; i < 40; i++)
		fb_buf_put_u8(&big, 'x');
	fb_buf_put(&big, b.data + 57, b.len - 57);
	CHECK_EQ(fb_event_decode(big.data, big.len, &out), FB_ETOOBIG);
	/* Counter count over FB_COUNTERS_MAX */
	in.n_counters = 0;
	fb_buf_reset(&b);
	CHECK_EQ(fb_event_encode(&b, &in), 0);
	b.data[b.len - 1] = FB_COUNTERS_MAX + 1;
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), FB_ETOOBIG);
	fb_buf_free(&b);
	fb_buf_free(&big);
}

static void decode_refuses_bad_jobs_with_a_reason(void)
{
	static const struct {
		const char *jobs;
		const char *why;
	} bad[] = {
		{ "", "present but empty" },
		{ ",123", "leading or trailing comma" },
		{ "123,", "leading or trailing comma" },
		{ ",", "leading or trailing comma" },
		{ "123,,124", "empty job id" },
		{ "12a", "only decimal job ids" },
		{ "123 124", "only decimal job ids" },
		{ "-1", "only decimal job ids" },
		{ "+1", "only decimal job ids" },
		{ "1;2", "only decimal job ids" },
		{ "\xc3\xa9", "only decimal job ids" },
	};
	struct fb_event in, out;
	struct fb_buf plain = FB_BUF_INIT, b = FB_BUF_INIT;
	sample_event(&in, 3);
	CHECK_EQ(fb_event_encode(&plain, &in), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *why = NULL;
		fb_buf_reset(&b);
		fb_buf_put(&b, plain.data, plain.len);
		fb_buf_put_u8(&b, (uint8_t)strlen(bad[i].jobs));
		fb_buf_put(&b, bad[i].jobs, strlen(bad[i].jobs));
		CHECK_EQ(fb_event_decode(b.data, b.len, &out), FB_EMALFORMED);
		CHECK_EQ(fb_event_decode_why(b.data, b.len, &out, &why), FB_EMALFORMED);
		if (!why || !strstr(why, bad[i].why))
			fprintf(stderr, "  jobs \"%s\": why \"%s\"\n", bad[i].jobs, why ? why : "(null)");
		CHECK(why && strstr(why, bad[i].why));
	}

	/* 96 digits: one more than the field holds, MALFORMED like the rest */
	const char *why = NULL;
	fb_buf_reset(&b);
	fb_buf_put(&b, plain.data, plain.len);
	fb_buf_put_u8(&b, FB_JOBS_MAX);
	for (int i = 0; i < FB_JOBS_MAX; i++)
		fb_buf_put_u8(&b, '7');
	CHECK_EQ(fb_event_decode_why(b.data, b.len, &out, &why), FB_EMALFORMED);
	CHECK(why && strstr(why, "longer than 95"));

	/* exactly one trailing field: nothing may follow the jobs */
	fb_buf_reset(&b);
	fb_buf_put(&b, plain.data, plain.len);
	fb_buf_put_str8(&b, "123");
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), 0);
	fb_buf_put_u8(&b, 0);
	CHECK_EQ(fb_event_decode_why(b.data, b.len, &out, &why), FB_EMALFORMED);
	CHECK(why && strstr(why, "bytes after the jobs field"));

	/* a jobs length pointing past the body is a truncation */
	fb_buf_reset(&b);
	fb_buf_put(&b, plain.data, plain.len);
	fb_buf_put_u8(&b, 10);
	fb_buf_put(&b, "123", 3);
	CHECK_EQ(fb_event_decode(b.data, b.len, &out), FB_ETRUNC);
	fb_buf_free(&plain);
	fb_buf_free(&b);
}

static void decode_with_jobs_fails_every_truncation_but_the_jobless_one(void)
{
	struct fb_event in, out;
	struct fb_buf plain = FB_BUF_INIT, b = FB_BUF_INIT;
	CHECK_EQ(encode_without_and_with_jobs(&in, "5,6", &plain, &b), 0);
	for (size_t n = 0; n < b.len; n++) {
		int rc = decode_prefix(&b, n, &out);
		if (n == plain.len) { /* ends after the counters: an event without jobs */
			CHECK_EQ(rc, 0);
			CHECK_STR(out.jobs, "");
		} else {
			CHECK(rc < 0);
		}
	}
	fb_buf_free(&plain);
	fb_buf_free(&b);
}

static void encode_refuses_jobs_a_receiver_would_refuse(void)
{
	struct fb_event in;
	struct fb_buf b = FB_BUF_INIT;
	sample_event(&in, 3);
	strcpy(in.jobs, "1,,2");
	CHECK_EQ(fb_event_encode(&b, &in), FB_EMALFORMED);
	memset(in.jobs, '1', sizeof(in.jobs)); /* no NUL in the field */
	CHECK_EQ(fb_event_encode(&b, &in), FB_EMALFORMED);
	fb_buf_free(&b);
}

static void check_validates_jobs(void)
{
	struct fb_event ev;
	const char *why = NULL;
	sample_event(&ev, 3);
	CHECK_EQ(fb_event_check(&ev, &why), 0);
	CHECK(why == NULL);
	strcpy(ev.jobs, "123,124");
	CHECK_EQ(fb_event_check(&ev, &why), 0);
	strcpy(ev.jobs, "123,");
	CHECK_EQ(fb_event_check(&ev, &why), FB_EMALFORMED);
	CHECK(why && !strncmp(why, "jobs: ", 6));
	strcpy(ev.jobs, "12 3");
	CHECK_EQ(fb_event_check(&ev, &why), FB_EMALFORMED);
	memset(ev.jobs, '1', sizeof(ev.jobs));
	CHECK_EQ(fb_event_check(&ev, &why), FB_EMALFORMED);
	CHECK(why && strstr(why, "longer than 95"));
	CHECK_EQ(fb_event_jobs_check("1,2", 3, NULL), 0);
	CHECK_EQ(fb_event_jobs_check("1,2", 2, NULL), FB_EMALFORMED); /* "1," */
	CHECK_EQ(fb_event_jobs_check("", 0, NULL), 0);
}

static void events_open_rejects_impossible_count(void)
{
	uint8_t body[8];
	fb_store_be32(body, 1000000); /* claims a million events in 4 bytes */
	struct fb_events_reader r;
	CHECK_EQ(fb_events_open(&r, body, 8), FB_ETRUNC);
	CHECK_EQ(fb_events_open(&r, body, 3), FB_ETRUNC);
	fb_store_be32(body, 0);
	CHECK_EQ(fb_events_open(&r, body, 4), 0);
	struct fb_event ev;
	CHECK_EQ(fb_events_next(&r, &ev, NULL, NULL), 0);
	/* trailing garbage after the last event is refused */
	CHECK_EQ(fb_events_open(&r, body, 8), 0);
	CHECK_EQ(fb_events_next(&r, &ev, NULL, NULL), FB_EMALFORMED);
}

static void hello_rejects_bad_agent_id(void)
{
	struct fb_buf b = FB_BUF_INIT;
	struct fb_hello h = { FB_PROTO_VERSION, "bad id with spaces", 0 }, out;
	CHECK_EQ(fb_wire_put_hello(&b, &h), 0);
	CHECK_EQ(fb_wire_parse_hello(b.data + 8, b.len - 8, &out), FB_EMALFORMED);
	fb_buf_reset(&b);
	struct fb_hello empty = { FB_PROTO_VERSION, "", 0 };
	CHECK_EQ(fb_wire_put_hello(&b, &empty), 0);
	CHECK_EQ(fb_wire_parse_hello(b.data + 8, b.len - 8, &out), FB_EMALFORMED);
	CHECK(fb_agent_id_valid("node001.ib@rack-3:a_b"));
	CHECK(!fb_agent_id_valid("a/b"));
	fb_buf_free(&b);
}

/* The rule of fabricbusd's FabricName and the agents' --fabric: a name
 * that would change a Redfish path (a '/', '?', '#', '%' or ' ') is refused,
 * and so are "" and more than 31 bytes. */
static void fabric_name_rule_refuses_path_characters(void)
{
	CHECK(fb_fabric_name_valid("IB"));
	CHECK(fb_fabric_name_valid("eth-0.a_b:c@d"));
	CHECK(fb_fabric_name_valid("0123456789012345678901234567890")); /* 31 */
	CHECK(!fb_fabric_name_valid("01234567890123456789012345678901")); /* 32 */
	CHECK(!fb_fabric_name_valid(""));
	CHECK(!fb_fabric_name_valid("/tmp/x/snmp.conf"));
	CHECK(!fb_fabric_name_valid("a/b"));
	CHECK(!fb_fabric_name_valid("a b"));
	CHECK(!fb_fabric_name_valid("a?b"));
	CHECK(!fb_fabric_name_valid("a#b"));
	CHECK(!fb_fabric_name_valid("a%2Fb"));
}

static void utf8_validator_cases(void)
{
	CHECK(fb_utf8_valid((const uint8_t *)"plain", 5));
	CHECK(fb_utf8_valid((const uint8_t *)"\xe2\x82\xac", 3));        /* euro sign */
	CHECK(fb_utf8_valid((const uint8_t *)"\xf0\x9f\x98\x80", 4));    /* emoji */
	CHECK(!fb_utf8_valid((const uint8_t *)"\xed\xa0\x80", 3));       /* surrogate */
	CHECK(!fb_utf8_valid((const uint8_t *)"\xe2\x82", 2));           /* cut */
	CHECK(!fb_utf8_valid((const uint8_t *)"\xf4\x90\x80\x80", 4));   /* > U+10FFFF */
	CHECK(!fb_utf8_valid((const uint8_t *)"\x80", 1));
	/* Every length and position of the word-at-a-time paths (the tail
	 * word included): a NUL or a stray byte anywhere is refused, a valid
	 * two-byte character anywhere is taken. */
	uint8_t b[24];
	for (size_t n = 1; n <= sizeof(b); n++) {
		memset(b, 'a', sizeof(b));
		CHECK(fb_utf8_valid(b, n));
		for (size_t pos = 0; pos < n; pos++) {
			b[pos] = 0;
			CHECK(!fb_utf8_valid(b, n));
			b[pos] = 0x80;
			CHECK(!fb_utf8_valid(b, n));
			b[pos] = 'a';
			if (pos + 1 < n) {
				b[pos] = 0xC3;
				b[pos + 1] = 0xA9;
				CHECK(fb_utf8_valid(b, n));
				b[pos] = b[pos + 1] = 'a';
			}
		}
	}
}

static void quiet_flag_smaller_reason_wins_and_full_counters_stay_loud(void)
{
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	CHECK_EQ(fb_event_quiet(&ev), 0);
	fb_event_add_counter(&ev, FB_CTR_SYMBOL_ERROR, 7);
	CHECK_EQ(fb_event_set_quiet(&ev, FB_QUIET_FLAP), 0);
	CHECK_EQ(fb_event_quiet(&ev), FB_QUIET_FLAP);
	CHECK_EQ(fb_event_set_quiet(&ev, FB_QUIET_RATE_LIMITED), 0);
	CHECK_EQ(fb_event_set_quiet(&ev, FB_QUIET_FLAP), 0); /* the smaller stays */
	CHECK_EQ(fb_event_quiet(&ev), FB_QUIET_RATE_LIMITED);
	CHECK_EQ(ev.n_counters, 2);
	CHECK(fb_event_set_quiet(&ev, 0) != 0 && fb_event_set_quiet(&ev, FB_QUIET__END) != 0);
	CHECK_STR(fb_quiet_name(FB_QUIET_RATE_LIMITED), "rate_limited");
	CHECK(fb_quiet_name(0) == NULL && fb_quiet_name(FB_QUIET__END) == NULL);
	CHECK_EQ(fb_event_clear_quiet(&ev), 1);
	CHECK_EQ(fb_event_quiet(&ev), 0);
	CHECK_EQ(ev.n_counters, 1);
	CHECK(ev.counters[0].id == FB_CTR_SYMBOL_ERROR && ev.counters[0].value == 7);
	CHECK_EQ(fb_event_clear_quiet(&ev), 0);
	/* every counter taken: the flag cannot be set, nothing of the agent's is lost */
	while (ev.n_counters < FB_COUNTERS_MAX)
		fb_event_add_counter(&ev, FB_CTR_RCV_ERRORS, ev.n_counters);
	CHECK_EQ(fb_event_set_quiet(&ev, FB_QUIET_SYMPTOM), FB_EFULL);
	CHECK_EQ(fb_event_quiet(&ev), 0);
	CHECK_EQ(ev.n_counters, FB_COUNTERS_MAX);
}

static void names_parse_back(void)
{
	for (unsigned k = 1; k < FB_KIND__END; k++)
		if (k != 21) /* reserved for de-duplication (fb_event.h) */
			CHECK_EQ(fb_kind_parse(fb_kind_name(k)), (int)k);
	for (unsigned c = 1; c < FB_CTR__END; c++)
		CHECK_EQ(fb_counter_parse(fb_counter_name(c)), (int)c);
	CHECK_EQ(fb_severity_parse("critical"), FB_SEV_CRITICAL);
	CHECK_EQ(fb_kind_parse("nonsense"), -1);
	CHECK(fb_kind_name(0) == NULL);
	CHECK(fb_kind_name(250) == NULL);
	CHECK_EQ(fb_counter_parse("cause_event_id"), 28);
	CHECK_EQ(fb_counter_parse("node_count"), 29);
	CHECK_EQ(fb_counter_parse("node_limit"), 30);
	CHECK_EQ(fb_counter_parse("resync"), 33);
}

static void error_text_has_no_control_bytes(void)
{
	char err[64];
	/* a peer's bytes quoted into a refusal: ESC, BEL, CR/LF, DEL */
	CHECK_EQ(fb_err_set(err, sizeof(err), FB_EMALFORMED, "bad status line \"%s\"",
			    "\x1b]2;x\x07\r\nA\x7f\xc3\xa9"), FB_EMALFORMED);
	CHECK(strcmp(err, "bad status line \"?]2;x???A?\xc3\xa9\"") == 0);
	CHECK_EQ(fb_err_set(NULL, 0, FB_ETOOBIG, "x"), FB_ETOOBIG);
}

int main(void)
{
	RUN(event_roundtrip_keeps_every_field);
	RUN(event_with_jobs_roundtrips);
	RUN(event_without_jobs_ends_after_counters);
	RUN(old_encodings_reencode_byte_identical);
	RUN(events_frame_roundtrip);
	RUN(control_frames_roundtrip);
	RUN(peek_rejects_bad_magic_version_and_size);
	RUN(decode_rejects_every_truncation);
	RUN(decode_rejects_bad_fields);
	RUN(decode_rejects_invalid_utf8_and_nul);
	RUN(decode_rejects_oversize_string_and_counters);
	RUN(decode_refuses_bad_jobs_with_a_reason);
	RUN(decode_with_jobs_fails_every_truncation_but_the_jobless_one);
	RUN(encode_refuses_jobs_a_receiver_would_refuse);
	RUN(check_validates_jobs);
	RUN(events_open_rejects_impossible_count);
	RUN(hello_rejects_bad_agent_id);
	RUN(fabric_name_rule_refuses_path_characters);
	RUN(utf8_validator_cases);
	RUN(names_parse_back);
	RUN(quiet_flag_smaller_reason_wins_and_full_counters_stay_loud);
	RUN(error_text_has_no_control_bytes);
	return TEST_DONE();
}

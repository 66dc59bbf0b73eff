/* test_event_json.c - the CLI's JSON form of an event: defaults, round
 * trips through fb_event_to_json, timestamps, and every reject path with a
 * message that names the field. */
#include "fb_test.h"
#include "fb_test_event.h"

#include "fb_err.h"
#include "fb_event_json.h"

#include <stdlib.h>
#include <time.h>

static char err[256];

/* Parse text; return the fb_event_from_json result (-1 if not JSON). */
static int parse(const char *text, struct fb_event *ev)
{
	json_error_t je;
	json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (!j) {
		fprintf(stderr, "  test JSON does not parse: %s: %s\n", je.text, text);
		return -1;
	}
	int rc = fb_event_from_json(j, ev, err, sizeof(err));
	json_decref(j);
	return rc;
}

/* Refused with FB_EMALFORMED and a message containing every needle. */
static int refused(const char *text, const char *needle1, const char *needle2)
{
	struct fb_event ev;
	err[0] = '\0';
	int rc = parse(text, &ev);
	if (rc != FB_EMALFORMED || !strstr(err, needle1) || (needle2 && !strstr(err, needle2))) {
		fprintf(stderr, "  %s -> rc %d, \"%s\" (wanted \"%s\"%s%s)\n", text, rc, err, needle1,
			needle2 ? " and " : "", needle2 ? needle2 : "");
		return 0;
	}
	return 1;
}

/* ---- round trips ---------------------------------------------------------- */

static void round_trip_keeps_every_field(void)
{
	struct fb_event a, b;
	fbt_event_full(&a);
	json_t *j = fb_event_to_json(&a);
	CHECK(j);
	char *text = json_dumps(j, JSON_COMPACT);
	int rc = fb_event_from_json(j, &b, err, sizeof(err));
	json_decref(j);
	if (rc)
		fprintf(stderr, "  %s: %s\n", err, text);
	free(text);
	CHECK_EQ(rc, 0);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
}

static void to_json_uses_documented_forms(void)
{
	struct fb_event a;
	fbt_event_full(&a);
	json_t *j = fb_event_to_json(&a);
	CHECK(j);
	json_t *c = json_object_get(j, "counters");
	int ok = !strcmp(json_string_value(json_object_get(j, "kind")), "flap") &&
		 !strcmp(json_string_value(json_object_get(j, "severity")), "Critical") &&
		 !strcmp(json_string_value(json_object_get(j, "link_class")), "host") &&
		 !strcmp(json_string_value(json_object_get(j, "tech")), "infiniband") &&
		 !strcmp(json_string_value(json_object_get(j, "switch")), "MF0;leaf3") &&
		 !strcmp(json_string_value(json_object_get(j, "switch_guid")), "0xf452140300411a08") &&
		 !strcmp(json_string_value(json_object_get(j, "peer_guid")), "0x0000000000000001") &&
		 json_integer_value(json_object_get(j, "ts_ns")) == 1795341141123456789ll &&
		 json_integer_value(json_object_get(j, "ifindex")) == UINT32_MAX &&
		 json_integer_value(json_object_get(c, "flap_count")) == 6 &&
		 !strcmp(json_string_value(json_object_get(c, "xmit_data")), "18446744073709551615") &&
		 json_integer_value(json_object_get(c, "counter_999")) == 5 && !json_object_get(j, "timestamp");
	json_t *jobs = json_object_get(j, "jobs");
	ok = ok && json_integer_value(json_object_get(c, "cause_event_id")) == 4242 && json_array_size(jobs) == 2 &&
	     !strcmp(json_string_value(json_array_get(jobs, 0)), "123") &&
	     !strcmp(json_string_value(json_array_get(jobs, 1)), "124");
	json_decref(j);
	CHECK(ok);
}

static void jobs_array_becomes_comma_list(void)
{
	struct fb_event ev;
	CHECK_EQ(parse("{\"kind\":\"action\",\"jobs\":[\"123\",\"124\",\"7\"]}", &ev), 0);
	CHECK_STR(ev.jobs, "123,124,7");
	CHECK_EQ(parse("{\"kind\":\"action\",\"jobs\":[]}", &ev), 0);
	CHECK_STR(ev.jobs, "");
	/* the longest list: 95 bytes once joined */
	char text[256] = "{\"kind\":\"test\",\"jobs\":[\"";
	memset(text + strlen(text), '9', 93);
	strcat(text, "\",\"1\"]}");
	CHECK_EQ(parse(text, &ev), 0);
	CHECK_EQ(strlen(ev.jobs), 95);
}

static void bad_jobs_are_refused(void)
{
	static const struct { const char *json, *why; } cases[] = {
		{ "{\"kind\":\"test\",\"jobs\":\"123,124\"}", "jobs: must be an array" },
		{ "{\"kind\":\"test\",\"jobs\":[123]}", "jobs[0]: must be" },
		{ "{\"kind\":\"test\",\"jobs\":[\"1\",\"\"]}", "jobs[1]: must be" },
		{ "{\"kind\":\"test\",\"jobs\":[\"1,2\"]}", "jobs[0]: must be" },
		{ "{\"kind\":\"test\",\"jobs\":[\"-1\"]}", "jobs[0]: must be" },
		{ "{\"kind\":\"test\",\"jobs\":[\" 1\"]}", "jobs[0]: must be" },
		{ "{\"kind\":\"test\",\"jobs\":[\"1\\u00002\"]}", "jobs[0]: must be" },
		{ "{\"kind\":\"test\",\"jobs\":[null]}", "jobs[0]: must be" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(refused(cases[i].json, cases[i].why, NULL));
	char text[256] = "{\"kind\":\"test\",\"jobs\":[\"";
	memset(text + strlen(text), '9', 94);
	strcat(text, "\",\"1\"]}"); /* 96 bytes joined */
	CHECK(refused(text, "jobs: longer than 95 bytes", NULL));
}

static void to_json_omits_empty_fields(void)
{
	struct fb_event a;
	memset(&a, 0, sizeof(a));
	a.kind = FB_KIND_TEST;
	json_t *j = fb_event_to_json(&a);
	CHECK(j);
	size_t n = json_object_size(j);
	int ok = json_object_get(j, "kind") && json_object_get(j, "severity");
	json_decref(j);
	CHECK(ok);
	CHECK_EQ(n, 2);
}

/* ---- defaults --------------------------------------------------------------- */

static void minimal_event_gets_defaults(void)
{
	struct fb_event ev;
	uint64_t before = fb_now_ns();
	CHECK_EQ(parse("{\"kind\":\"link_down\",\"link_class\":\"host\"}", &ev), 0);
	uint64_t after = fb_now_ns();
	CHECK_EQ(ev.kind, FB_KIND_LINK_DOWN);
	CHECK_EQ(ev.severity, FB_SEV_WARNING); /* DownstreamLinkDropped */
	CHECK(ev.ts_ns >= before && ev.ts_ns <= after);
	CHECK_EQ(ev.seq, 0);
	CHECK_EQ(ev.n_counters, 0);
	CHECK_EQ(ev.agent_id[0], '\0');
}

static void default_severity_follows_the_mapping(void)
{
	static const struct { const char *json; uint8_t sev; } cases[] = {
		{ "{\"kind\":\"link_down\"}", FB_SEV_CRITICAL }, /* PortFailed */
		{ "{\"kind\":\"link_down\",\"link_class\":\"isl\"}", FB_SEV_WARNING },
		{ "{\"kind\":\"link_down\",\"link_class\":\"node\"}", FB_SEV_WARNING }, /* fabricbus floor */
		{ "{\"kind\":\"link_up\",\"link_class\":\"host\"}", FB_SEV_OK },
		{ "{\"kind\":\"counter_threshold\"}", FB_SEV_CRITICAL },
		{ "{\"kind\":\"congestion\"}", FB_SEV_WARNING },
		{ "{\"kind\":\"switch_unreachable\"}", FB_SEV_CRITICAL },
		{ "{\"kind\":\"test\"}", FB_SEV_OK },
		{ "{\"kind\":\"link_down\",\"link_class\":\"isl\",\"severity\":\"ok\"}", FB_SEV_OK },
		{ "{\"kind\":\"LINK_UP\",\"severity\":\"critical\"}", FB_SEV_CRITICAL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fb_event ev;
		CHECK_EQ(parse(cases[i].json, &ev), 0);
		CHECK_EQ(ev.severity, cases[i].sev);
	}
}

static void accepts_alternative_forms(void)
{
	struct fb_event ev;
	CHECK_EQ(parse("{\"kind\":\"test\",\"tech\":\"ib\",\"switch_guid\":1234,\"port_guid\":\"0XABCdef\"}", &ev), 0);
	CHECK_EQ(ev.tech, FB_TECH_IB);
	CHECK_EQ(ev.subj.switch_guid, 1234);
	CHECK_EQ(ev.subj.port_guid, 0xabcdef);
	CHECK_EQ(parse("{\"kind\":\"test\",\"tech\":\"ETH\",\"seq\":\"18446744073709551615\"}", &ev), 0);
	CHECK_EQ(ev.tech, FB_TECH_ETH);
	CHECK(ev.seq == UINT64_MAX);
	CHECK_EQ(parse("{\"kind\":\"test\",\"counters\":{}}", &ev), 0);
	CHECK_EQ(ev.n_counters, 0);
	/* the longest strings that fit */
	CHECK_EQ(parse("{\"kind\":\"test\",\"fabric\":\"0123456789012345678901234567890\"}", &ev), 0);
	CHECK_EQ(strlen(ev.subj.fabric), FB_FABRIC_MAX - 1);
}

/* ---- timestamps ------------------------------------------------------------- */

static void timestamp_strings_parse(void)
{
	static const struct { const char *s; uint64_t ns; } ok[] = {
		{ "1970-01-01T00:00:00Z", 0 },
		{ "2026-11-22T09:52:21.123456Z", 1795341141123456000ull },
		{ "2026-11-22T09:52:21.123456789Z", 1795341141123456789ull },
		{ "2026-11-22T09:52:21.1234567891Z", 1795341141123456789ull }, /* beyond ns: cut */
		{ "2026-11-22T11:52:21.5+02:00", 1795341141500000000ull },
		{ "2026-11-22T04:22:21-05:30", 1795341141000000000ull },
		{ "2026-11-22t09:52:21z", 1795341141000000000ull },
		{ "2000-02-29T00:00:00Z", 951782400000000000ull },
		{ "2024-02-29T23:59:59Z", 1709251199000000000ull },
		{ "2100-03-01T00:00:00Z", 4107542400000000000ull },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char text[128];
		struct fb_event ev;
		snprintf(text, sizeof(text), "{\"kind\":\"test\",\"timestamp\":\"%s\"}", ok[i].s);
		int rc = parse(text, &ev);
		if (rc || ev.ts_ns != ok[i].ns)
			fprintf(stderr, "  %s -> %d %llu\n", ok[i].s, rc, (unsigned long long)ev.ts_ns);
		CHECK_EQ(rc, 0);
		CHECK(ev.ts_ns == ok[i].ns);
	}
	/* and against the C library for a spread of instants */
	for (time_t t = 0; t < 4102444800; t += 86400 * 37 + 3607) {
		struct tm tm;
		char s[64], text[128];
		struct fb_event ev;
		gmtime_r(&t, &tm);
		strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(text, sizeof(text), "{\"kind\":\"test\",\"timestamp\":\"%s\"}", s);
		CHECK_EQ(parse(text, &ev), 0);
		CHECK(ev.ts_ns == (uint64_t)t * 1000000000u);
	}
}

static void bad_timestamps_are_refused(void)
{
	static const char *const bad[] = {
		"2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-00-10T00:00:00Z",
		"2024-04-31T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T00:60:00Z", "2024-01-01T00:00:00",
		"2024-01-01T00:00:00.Z", "2024-01-01 00:00:00Zjunk", "1969-12-31T23:59:59Z",
		"1970-01-01T00:30:00+01:00", "2024-1-01T00:00:00Z", "", "yesterday", "2024-01-01T00:00:00+0100",
		"2600-01-01T00:00:00Z",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128];
		snprintf(text, sizeof(text), "{\"kind\":\"test\",\"timestamp\":\"%s\"}", bad[i]);
		CHECK(refused(text, "timestamp:", NULL));
	}
	CHECK(refused("{\"kind\":\"test\",\"timestamp\":1}", "timestamp:", NULL));
	CHECK(refused("{\"kind\":\"test\",\"timestamp\":\"2024-01-01T00:00:00Z\",\"ts_ns\":5}", "not both", NULL));
}

/* ---- every reject path -------------------------------------------------------- */

static void unknown_and_missing_fields_are_refused(void)
{
	CHECK(refused("{\"kind\":\"test\",\"x\":1}", "unknown field 'x'", NULL));
	CHECK(refused("{\"kind\":\"test\",\"Switch\":\"a\"}", "unknown field 'Switch'", NULL));
	CHECK(refused("{\"severity\":\"OK\"}", "kind: required", NULL));
	CHECK(refused("{}", "kind: required", NULL));
	CHECK(refused("[]", "must be a JSON object", NULL));
	CHECK(refused("\"link_down\"", "must be a JSON object", NULL));
}

static void wrong_types_are_refused_by_name(void)
{
	static const struct { const char *json, *field; } cases[] = {
		{ "{\"kind\":1}", "kind:" },
		{ "{\"kind\":\"nope\"}", "kind: unknown value 'nope'" },
		{ "{\"kind\":\"test\",\"severity\":\"high\"}", "severity: unknown value 'high'" },
		{ "{\"kind\":\"test\",\"severity\":2}", "severity:" },
		{ "{\"kind\":\"test\",\"link_class\":\"spine\"}", "link_class: unknown value" },
		{ "{\"kind\":\"test\",\"tech\":\"roce\"}", "tech: unknown value" },
		{ "{\"kind\":\"test\",\"agent_id\":5}", "agent_id: must be a string" },
		{ "{\"kind\":\"test\",\"switch\":null}", "switch: must be a string" },
		{ "{\"kind\":\"test\",\"text\":[\"a\"]}", "text: must be a string" },
		{ "{\"kind\":\"test\",\"node\":\"a\\u0000b\"}", "node: contains a NUL" },
		{ "{\"kind\":\"test\",\"seq\":-1}", "seq: must be a non-negative integer" },
		{ "{\"kind\":\"test\",\"seq\":1.5}", "seq:" },
		{ "{\"kind\":\"test\",\"seq\":\"12a\"}", "seq:" },
		{ "{\"kind\":\"test\",\"seq\":\"18446744073709551616\"}", "seq:" },
		{ "{\"kind\":\"test\",\"ts_ns\":true}", "ts_ns:" },
		{ "{\"kind\":\"test\",\"port\":65536}", "port: must be an integer 0..65535" },
		{ "{\"kind\":\"test\",\"port\":\"17\"}", "port: must be an integer" },
		{ "{\"kind\":\"test\",\"lid\":-3}", "lid:" },
		{ "{\"kind\":\"test\",\"peer_port\":70000}", "peer_port:" },
		{ "{\"kind\":\"test\",\"port_state\":256}", "port_state: must be an integer 0..255" },
		{ "{\"kind\":\"test\",\"phys_state\":\"up\"}", "phys_state:" },
		{ "{\"kind\":\"test\",\"ifindex\":4294967296}", "ifindex: must be an integer 0..4294967295" },
		{ "{\"kind\":\"test\",\"switch_guid\":\"0x\"}", "switch_guid:" },
		{ "{\"kind\":\"test\",\"switch_guid\":\"0xZZ\"}", "switch_guid:" },
		{ "{\"kind\":\"test\",\"port_guid\":\"0x12345678901234567\"}", "port_guid:" },
		{ "{\"kind\":\"test\",\"peer_guid\":\"1234\"}", "peer_guid:" },
		{ "{\"kind\":\"test\",\"peer_guid\":-1}", "peer_guid:" },
		{ "{\"kind\":\"test\",\"counters\":[]}", "counters: must be an object" },
		{ "{\"kind\":\"test\",\"counters\":{\"bogus\":1}}", "counters: unknown counter 'bogus'" },
		{ "{\"kind\":\"test\",\"counters\":{\"counter_1\":1}}", "counters: unknown counter 'counter_1'" },
		{ "{\"kind\":\"test\",\"counters\":{\"counter_0\":1}}", "counters: unknown counter" },
		{ "{\"kind\":\"test\",\"counters\":{\"counter_65536\":1}}", "counters: unknown counter" },
		{ "{\"kind\":\"test\",\"counters\":{\"symbol_error\":-1}}", "counters.symbol_error: must be" },
		{ "{\"kind\":\"test\",\"counters\":{\"symbol_error\":\"x\"}}", "counters.symbol_error: must be" },
		{ "{\"kind\":\"test\",\"counters\":{\"symbol_error\":1,\"SYMBOL_ERROR\":2}}", "given twice" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(refused(cases[i].json, cases[i].field, NULL));
}

static void overlong_strings_name_field_and_limit(void)
{
	static const struct { const char *field; size_t max; } cases[] = {
		{ "agent_id", FB_AGENT_ID_MAX }, { "fabric", FB_FABRIC_MAX }, { "switch", FB_NAME_MAX },
		{ "node", FB_NAME_MAX },         { "device", FB_NAME_MAX },   { "addr", FB_ADDR_MAX },
		{ "peer_name", FB_NAME_MAX },    { "text", FB_TEXT_MAX },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512], limit[64], value[256];
		struct fb_event ev;
		memset(value, 'x', cases[i].max - 1);
		value[cases[i].max - 1] = '\0';
		snprintf(text, sizeof(text), "{\"kind\":\"test\",\"%s\":\"%s\"}", cases[i].field, value);
		CHECK_EQ(parse(text, &ev), 0); /* max - 1 bytes fit */
		value[cases[i].max - 1] = 'x';
		value[cases[i].max] = '\0';
		snprintf(text, sizeof(text), "{\"kind\":\"test\",\"%s\":\"%s\"}", cases[i].field, value);
		snprintf(limit, sizeof(limit), "%s: longer than %zu bytes", cases[i].field, cases[i].max - 1);
		CHECK(refused(text, limit, NULL));
	}
	/* bytes, not characters: 15 two-byte characters and one more byte fit
	 * fabric[32]; 16 two-byte characters do not */
	char text[256] = "{\"kind\":\"test\",\"fabric\":\"";
	for (int i = 0; i < 15; i++)
		strcat(text, "\xc3\xa9");
	CHECK(parse(strcat(text, "x\"}"), &(struct fb_event){ 0 }) == 0);
	strcpy(text, "{\"kind\":\"test\",\"fabric\":\"");
	for (int i = 0; i < 16; i++)
		strcat(text, "\xc3\xa9");
	CHECK(refused(strcat(text, "\"}"), "fabric: longer than 31 bytes", NULL));
}

static void too_many_counters_are_refused(void)
{
	char text[2048] = "{\"kind\":\"test\",\"counters\":{";
	for (int id = 1; id <= FB_COUNTERS_MAX + 1; id++) {
		char one[64];
		snprintf(one, sizeof(one), "%s\"%s\":%d", id > 1 ? "," : "", fb_counter_name((unsigned)id), id);
		strcat(text, one);
	}
	strcat(text, "}}");
	CHECK(refused(text, "counters: more than 16", NULL));
}

static void error_output_is_bounded(void)
{
	/* a long unknown key cannot overrun err */
	char text[1200] = "{\"kind\":\"test\",\"";
	memset(text + strlen(text), 'k', 1000);
	strcpy(text + strlen("{\"kind\":\"test\",\"") + 1000, "\":1}");
	json_t *j = json_loads(text, 0, NULL);
	CHECK(j);
	char small[16];
	struct fb_event ev;
	memset(small, 'Z', sizeof(small));
	int rc = fb_event_from_json(j, &ev, small, 8);
	json_decref(j);
	CHECK_EQ(rc, FB_EMALFORMED);
	CHECK_EQ(strlen(small), 7);
	CHECK_EQ(small[8], 'Z');
	CHECK_EQ(fb_event_from_json(NULL, &ev, NULL, 0), FB_EMALFORMED);
}

int main(void)
{
	RUN(round_trip_keeps_every_field);
	RUN(to_json_uses_documented_forms);
	RUN(to_json_omits_empty_fields);
	RUN(jobs_array_becomes_comma_list);
	RUN(bad_jobs_are_refused);
	RUN(minimal_event_gets_defaults);
	RUN(default_severity_follows_the_mapping);
	RUN(accepts_alternative_forms);
	RUN(timestamp_strings_parse);
	RUN(bad_timestamps_are_refused);
	RUN(unknown_and_missing_fields_are_refused);
	RUN(wrong_types_are_refused_by_name);
	RUN(overlong_strings_name_field_and_limit);
	RUN(too_many_counters_are_refused);
	RUN(error_output_is_bounded);
	return TEST_DONE();
}

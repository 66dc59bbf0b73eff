/* test_filter.c - the WebSocket query string: what parses, what is
 * refused (and names the parameter), and what matches. */
#include "fb_test.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_event.h"
#include "filter.h"

#include <string.h>

static const char *ISL_DOWN = "Fabric.1.0.InterswitchLinkDropped";
static const char *PORT = "/redfish/v1/Fabrics/IB/Switches/sw1/Ports/17";

static int apply(struct fb_filter *f, const char *arg, const char **why)
{
	*why = NULL;
	return fb_filter_arg(f, arg, why);
}

static void empty_filter_matches_everything(void)
{
	struct fb_filter f;
	fb_filter_init(&f);
	CHECK(!f.has_since);
	CHECK(fb_filter_match(&f, ISL_DOWN, FB_SEV_CRITICAL, NULL));
	CHECK(fb_filter_match(&f, "ResourceEvent.1.4.ResourceChanged", FB_SEV_OK, PORT));
}

static void since_parses_full_uint64_range(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, "since=0", &why), 0);
	CHECK(f.has_since);
	CHECK_EQ(f.since, 0);
	CHECK_EQ(apply(&f, "since=18446744073709551615", &why), 0);
	CHECK(f.since == UINT64_MAX);
	CHECK_EQ(apply(&f, "since=12345", &why), 0);
	CHECK_EQ(f.since, 12345);
}

static void since_refuses_non_numbers_and_names_the_parameter(void)
{
	static const char *const bad[] = { "since=abc", "since=-1", "since=12x", "since= 1",
					   "since=0x10", "since=18446744073709551616", "since=",
					   "since", "since=1.5" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fb_filter f;
		const char *why;
		fb_filter_init(&f);
		CHECK(apply(&f, bad[i], &why) < 0);
		CHECK(why != NULL);
		CHECK(strncmp(why, "since:", 6) == 0);
	}
}

static void prefix_accepts_a_comma_list(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, "prefix=Fabric.1.0.InterswitchLink,ResourceEvent.", &why), 0);
	CHECK_EQ(f.n_prefix, 2);
	CHECK_STR(f.prefix[0], "Fabric.1.0.InterswitchLink");
	CHECK_STR(f.prefix[1], "ResourceEvent.");
	CHECK(fb_filter_match(&f, ISL_DOWN, FB_SEV_WARNING, NULL));
	CHECK(fb_filter_match(&f, "ResourceEvent.1.4.ResourceChanged", FB_SEV_OK, NULL));
	CHECK(!fb_filter_match(&f, "Fabric.1.0.DownstreamLinkDropped", FB_SEV_WARNING, NULL));
}

static void prefix_refuses_too_many_and_too_long(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK(apply(&f, "prefix=a,b,c,d,e,f,g,h,i", &why) < 0);
	CHECK(strncmp(why, "prefix:", 7) == 0);
	char arg[300] = "prefix=";
	memset(arg + 7, 'x', 200);
	arg[207] = '\0';
	fb_filter_init(&f);
	CHECK(apply(&f, arg, &why) < 0);
	CHECK(strncmp(why, "prefix:", 7) == 0);
	fb_filter_init(&f);
	CHECK(apply(&f, "prefix=,,", &why) < 0);
	CHECK(strncmp(why, "prefix:", 7) == 0);
}

static void repeated_prefix_arguments_accumulate(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, "prefix=Fabric.", &why), 0);
	CHECK_EQ(apply(&f, "prefix=Fabricbus.", &why), 0);
	CHECK_EQ(f.n_prefix, 2);
}

static void severity_is_case_insensitive_and_a_set(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, "severity=critical,WARNING", &why), 0);
	CHECK(fb_filter_match(&f, ISL_DOWN, FB_SEV_CRITICAL, NULL));
	CHECK(fb_filter_match(&f, ISL_DOWN, FB_SEV_WARNING, NULL));
	CHECK(!fb_filter_match(&f, ISL_DOWN, FB_SEV_OK, NULL));
	CHECK(!fb_filter_match(&f, ISL_DOWN, 77, NULL));
}

static void quiet_is_0_or_1_and_all_is_the_same(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK(!fb_filter_quiet_ok(&f, FB_QUIET_RATE_LIMITED)); /* default: quiet events skipped */
	CHECK(fb_filter_quiet_ok(&f, FB_QUIET_NONE));
	CHECK_EQ(apply(&f, "quiet=1", &why), 0);
	CHECK(fb_filter_quiet_ok(&f, FB_QUIET_SYMPTOM) && fb_filter_quiet_ok(&f, FB_QUIET_FLAP));
	CHECK_EQ(apply(&f, "quiet=0", &why), 0);
	CHECK(!fb_filter_quiet_ok(&f, FB_QUIET_FLAP));
	CHECK_EQ(apply(&f, "all=1", &why), 0);
	CHECK(f.quiet == 1);
	struct fb_buf b = FB_BUF_INIT;
	CHECK_EQ(fb_filter_json(&f, &b), 0);
	CHECK(b.len == strlen("{\"quiet\":true}") && memcmp(b.data, "{\"quiet\":true}", b.len) == 0);
	fb_buf_free(&b);
	CHECK(apply(&f, "quiet=yes", &why) < 0);
	CHECK(strncmp(why, "quiet:", 6) == 0);
	CHECK(apply(&f, "all=2", &why) < 0);
	CHECK(strncmp(why, "all:", 4) == 0);
	CHECK(apply(&f, "quiet=", &why) < 0);
}

static void severity_refuses_unknown_names(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK(apply(&f, "severity=Critical,Fatal", &why) < 0);
	CHECK(strncmp(why, "severity:", 9) == 0);
	fb_filter_init(&f);
	CHECK(apply(&f, "severity=", &why) < 0);
	CHECK(strncmp(why, "severity:", 9) == 0);
}

static void origin_matches_whole_path_segments(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, "origin=/redfish/v1/Fabrics/IB/Switches/sw1", &why), 0);
	CHECK(fb_filter_wants_origin(&f));
	CHECK(fb_filter_match(&f, ISL_DOWN, FB_SEV_OK, PORT));
	CHECK(fb_filter_match(&f, ISL_DOWN, FB_SEV_OK, "/redfish/v1/Fabrics/IB/Switches/sw1"));
	CHECK(!fb_filter_match(&f, ISL_DOWN, FB_SEV_OK, "/redfish/v1/Fabrics/IB/Switches/sw10"));
	CHECK(!fb_filter_match(&f, ISL_DOWN, FB_SEV_OK, "/redfish/v1/Systems/node1"));
	CHECK(!fb_filter_match(&f, ISL_DOWN, FB_SEV_OK, NULL));
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, "origin=/redfish/v1/Fabrics/IB/", &why), 0);
	CHECK(fb_filter_match(&f, ISL_DOWN, FB_SEV_OK, PORT));
}

static void origin_must_be_a_path(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK(apply(&f, "origin=Fabrics/IB", &why) < 0);
	CHECK(strncmp(why, "origin:", 7) == 0);
}

static void all_conditions_must_hold(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, "prefix=Fabric.", &why), 0);
	CHECK_EQ(apply(&f, "severity=Critical", &why), 0);
	CHECK_EQ(apply(&f, "origin=/redfish/v1/Fabrics/IB", &why), 0);
	CHECK(fb_filter_match(&f, ISL_DOWN, FB_SEV_CRITICAL, PORT));
	CHECK(!fb_filter_match(&f, ISL_DOWN, FB_SEV_WARNING, PORT));
	CHECK(!fb_filter_match(&f, "ResourceEvent.1.4.ResourceChanged", FB_SEV_CRITICAL, PORT));
	CHECK(!fb_filter_match(&f, ISL_DOWN, FB_SEV_CRITICAL, "/redfish/v1/Systems/n1"));
}

static void unknown_parameters_are_ignored(void)
{
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, "token=abc", &why), 0);
	CHECK_EQ(apply(&f, "sincere=1", &why), 0);
	CHECK_EQ(apply(&f, "x", &why), 0);
	CHECK(!f.has_since);
	CHECK_EQ(f.n_prefix, 0);
}

static void values_are_taken_verbatim(void)
{
	/* lws decodes %XX before we see the fragment; a second decode would
	 * corrupt origins whose path segments are percent-encoded */
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, "origin=/redfish/v1/Systems/my%20node", &why), 0);
	CHECK_STR(f.origin, "/redfish/v1/Systems/my%20node");
	CHECK(fb_filter_match(&f, "x", FB_SEV_OK, "/redfish/v1/Systems/my%20node/x"));
	CHECK_EQ(apply(&f, "prefix=a=b", &why), 0);
	CHECK_STR(f.prefix[0], "a=b");
}

static void overlong_values_are_refused(void)
{
	static char arg[2100];
	memcpy(arg, "origin=/", 8);
	memset(arg + 8, 'a', 2000);
	arg[2008] = '\0';
	struct fb_filter f;
	const char *why;
	fb_filter_init(&f);
	CHECK_EQ(apply(&f, arg, &why), FB_ETOOBIG);
	CHECK(strncmp(why, "origin:", 7) == 0);
	arg[300] = '\0'; /* fits the argument buffer, not the origin field */
	CHECK_EQ(apply(&f, arg, &why), FB_ETOOBIG);
	CHECK(strncmp(why, "origin:", 7) == 0);
}

static void filter_json_lists_what_is_set(void)
{
	struct fb_filter f;
	const char *why;
	struct fb_buf b = FB_BUF_INIT;
	fb_filter_init(&f);
	CHECK_EQ(fb_filter_json(&f, &b), 0);
	CHECK(b.len == 2 && memcmp(b.data, "{}", 2) == 0);
	CHECK_EQ(apply(&f, "since=7", &why), 0);
	CHECK_EQ(apply(&f, "prefix=Fabric.", &why), 0);
	CHECK_EQ(apply(&f, "severity=ok,critical", &why), 0);
	CHECK_EQ(apply(&f, "origin=/redfish/v1/Systems/\"n\"", &why), 0);
	fb_buf_reset(&b);
	CHECK_EQ(fb_filter_json(&f, &b), 0);
	CHECK_EQ(fb_buf_put_u8(&b, 0), 0);
	CHECK_STR((const char *)b.data,
		  "{\"since\":7,\"prefix\":[\"Fabric.\"],\"severity\":[\"OK\",\"Critical\"],"
		  "\"origin\":\"/redfish/v1/Systems/\\\"n\\\"\"}");
	fb_buf_free(&b);
}

int main(void)
{
	RUN(empty_filter_matches_everything);
	RUN(since_parses_full_uint64_range);
	RUN(since_refuses_non_numbers_and_names_the_parameter);
	RUN(prefix_accepts_a_comma_list);
	RUN(prefix_refuses_too_many_and_too_long);
	RUN(repeated_prefix_arguments_accumulate);
	RUN(severity_is_case_insensitive_and_a_set);
	RUN(severity_refuses_unknown_names);
	RUN(origin_matches_whole_path_segments);
	RUN(origin_must_be_a_path);
	RUN(all_conditions_must_hold);
	RUN(unknown_parameters_are_ignored);
	RUN(values_are_taken_verbatim);
	RUN(overlong_values_are_refused);
	RUN(filter_json_lists_what_is_set);
	RUN(quiet_is_0_or_1_and_all_is_the_same);
	return TEST_DONE();
}

/* test_rf_filter.c - the SSE $filter: a table of filters against a table of
 * events (what each selects), a table of refused filters (which Base
 * message, which token), and ResourceType from a path. URL decoding is
 * lws's (test_redfish_sse sends %20, + and %28 and gets the same filter). */
#include "fb_test.h"

#include "fb_err.h"
#include "rf_filter.h"

#include <string.h>

#define PORT3 "/redfish/v1/Fabrics/IB/Switches/sw1/Ports/3"

/* The events every filter is tried on. */
static const struct {
	const char *message_id, *event_type, *origin;
} events[] = {
	/* 0 */ { "Fabric.1.0.PortFailed", "Alert", PORT3 },
	/* 1 */ { "Fabric.1.0.InterswitchLinkDropped", "Alert", "/redfish/v1/Fabrics/IB/Switches/sw10/Ports/3" },
	/* 2 */ { "ResourceEvent.1.4.ResourceStatusChangedOK", "StatusChange", "/redfish/v1/Fabrics/IB/Switches/sw1" },
	/* 3 */ { "NetworkDevice.1.1.ConnectionDropped", "Alert", "/redfish/v1/Systems/node003/NetworkInterfaces/mlx5_0" },
	/* 4 */ { "ResourceEvent.1.4.ResourceCreated", "ResourceAdded", "/redfish/v1/Systems/node003" },
	/* 5 */ { "Fabric.1.0.SwitchFailed", "Alert", "/redfish/v1/Fabrics/IB" },
};
#define N_EVENTS (sizeof(events) / sizeof(events[0]))

/* Each filter and the events it selects, as a string of indexes. */
static const struct {
	const char *filter, *selects;
} cases[] = {
	{ "RegistryPrefix eq Fabric", "015" },
	{ "RegistryPrefix ne Fabric", "234" },
	{ "(RegistryPrefix eq Fabric) or (MessageId eq Fabric.1.0.PortFailed)", "015" },
	{ "(RegistryPrefix eq ResourceEvent) or (MessageId eq Fabric.1.0.PortFailed)", "024" },
	{ "MessageId eq Fabric.1.0.PortFailed", "0" },
	{ "MessageId eq Fabric.PortFailed", "0" },       /* any version */
	{ "MessageId eq Fabric.1.1.PortFailed", "" },    /* another version */
	{ "MessageId eq 'ResourceEvent.1.4.ResourceCreated'", "4" },
	{ "MessageId ne Fabric.1.0.PortFailed", "12345" },
	{ "EventType eq Alert", "0135" },
	{ "EventType eq Alert and not (RegistryPrefix eq Fabric)", "3" },
	{ "not EventType eq Alert", "24" },
	{ "EventFormatType eq Event", "012345" },
	{ "EventFormatType eq MetricReport", "" },
	{ "OriginResource eq " PORT3, "0" },
	{ "OriginResource eq '" PORT3 "/'", "0" }, /* a trailing slash is the same resource */
	{ "OriginResource eq /redfish/v1/Fabrics/IB/Switches/sw1", "2" },
	{ "OriginResource eq /redfish/v1/Fabrics/IB/Switches/sw1 and SubordinateResources eq true", "02" },
	{ "SubordinateResources eq true and OriginResource eq /redfish/v1/Systems/node003", "34" },
	{ "OriginResource eq /redfish/v1/Systems/node003 and SubordinateResources eq false", "4" },
	{ "OriginResource eq /redfish/v1/Fabrics/IB and SubordinateResources eq true", "0125" },
	{ "ResourceType eq Port", "01" },
	{ "ResourceType eq '#Switch.v1_9_0.Switch'", "2" },
	{ "ResourceType eq ComputerSystem or ResourceType eq NetworkInterface", "34" },
	{ "ResourceType eq Fabric", "5" },
	{ "RegistryPrefix eq Fabric and EventType eq Alert and ResourceType eq Port", "01" },
	{ "RegistryPrefix eq Fabric or RegistryPrefix eq NetworkDevice and EventType eq StatusChange", "015" },
	{ "(RegistryPrefix eq Fabric or RegistryPrefix eq ResourceEvent) and EventType eq StatusChange", "2" },
	{ "not (not (RegistryPrefix eq NetworkDevice))", "3" },
	{ "  ( ( MessageId  eq  Fabric.1.0.SwitchFailed ) )  ", "5" },
	{ "RegistryPrefix EQ Fabric AND EventType Eq Alert", "015" }, /* keywords in any case */
	{ "MessageId eq \"Fabric.1.0.SwitchFailed\"", "5" },
};

static void filters_select_exactly_their_events(void)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fb_rf_filter *f;
		struct fb_rf_filter_err err;
		int rc = fb_rf_filter_compile(cases[c].filter, strlen(cases[c].filter), &f, &err);
		if (rc) {
			fprintf(stderr, "  filter [%s]: %s\n", cases[c].filter, err.detail);
			CHECK_EQ(rc, 0);
		}
		char got[N_EVENTS + 1];
		size_t n = 0;
		for (size_t e = 0; e < N_EVENTS; e++) {
			struct fb_rf_attrs a;
			fb_rf_attrs_init(&a, events[e].message_id, events[e].event_type, events[e].origin);
			if (fb_rf_filter_match(f, &a))
				got[n++] = (char)('0' + e);
		}
		got[n] = '\0';
		if (strcmp(got, cases[c].selects) != 0)
			fprintf(stderr, "  filter [%s] selects \"%s\", expected \"%s\"\n", cases[c].filter,
				got, cases[c].selects);
		CHECK_STR(got, cases[c].selects);
		CHECK_STR(fb_rf_filter_text(f), cases[c].filter);
		fb_rf_filter_free(f);
	}
}

/* Each refused filter: the Base message and the token the error names. */
static const struct {
	const char *filter, *message, *token;
} bad[] = {
	{ "", "QueryParameterValueFormatError", "$filter" },
	{ "   ", "QueryParameterValueFormatError", "$filter" },
	{ "Severity eq Critical", "QueryParameterValueFormatError", "Severity" },
	{ "registryprefix eq Fabric", "QueryParameterValueFormatError", "registryprefix" },
	{ "RegistryPrefix gt Fabric", "QueryParameterValueFormatError", "gt" },
	{ "RegistryPrefix Fabric", "QueryParameterValueFormatError", "Fabric" },
	{ "RegistryPrefix eq", "QueryParameterValueFormatError", "$filter" },
	{ "RegistryPrefix eq Fab.ric", "QueryParameterValueFormatError", "Fab.ric" },
	{ "MessageId eq PortFailed", "QueryParameterValueFormatError", "PortFailed" },
	{ "MessageId eq Fabric.1.0.", "QueryParameterValueFormatError", "Fabric.1.0." },
	{ "EventType eq Bogus", "QueryParameterValueFormatError", "Bogus" },
	{ "EventFormatType eq Events", "QueryParameterValueFormatError", "Events" },
	{ "OriginResource eq /redfish/v2/Fabrics", "QueryParameterValueFormatError", "/redfish/v2/Fabrics" },
	{ "OriginResource eq /redfish/v1Fabrics", "QueryParameterValueFormatError", "/redfish/v1Fabrics" },
	{ "ResourceType eq 'Port Metrics'", "QueryParameterValueFormatError", "'Port Metrics'" },
	{ "SubordinateResources eq yes", "QueryParameterValueTypeError", "yes" },
	{ "SubordinateResources eq 'true'", "QueryParameterValueTypeError", "'true'" },
	{ "(RegistryPrefix eq Fabric", "QueryParameterValueFormatError", "(" },
	{ "RegistryPrefix eq Fabric)", "QueryParameterValueFormatError", ")" },
	{ "RegistryPrefix eq Fabric RegistryPrefix eq Fabric", "QueryParameterValueFormatError", "RegistryPrefix" },
	{ "RegistryPrefix eq Fabric and", "QueryParameterValueFormatError", "$filter" },
	{ "RegistryPrefix eq Fabric or or RegistryPrefix eq Fabric", "QueryParameterValueFormatError", "or" },
	{ "not", "QueryParameterValueFormatError", "$filter" },
	{ "()", "QueryParameterValueFormatError", ")" },
	{ "MessageId eq 'Fabric.1.0.PortFailed", "QueryParameterValueFormatError", "'Fabric.1.0.PortFailed" },
	{ "RegistryPrefix eq and", "QueryParameterValueFormatError", "and" },
	{ "RegistryPrefix eq Fabric and ((((((((((((((((((((((((((((((((((RegistryPrefix eq Fabric))))))))))))))))))))))))))))))))))",
	  "QueryParameterValueFormatError", "(" },
};

static void bad_filters_name_the_token(void)
{
	for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
		struct fb_rf_filter *f = (struct fb_rf_filter *)&f;
		struct fb_rf_filter_err err;
		int rc = fb_rf_filter_compile(bad[c].filter, strlen(bad[c].filter), &f, &err);
		if (rc == 0 || strcmp(err.token, bad[c].token) != 0 || strcmp(err.message, bad[c].message))
			fprintf(stderr, "  filter [%s]: rc %d, %s token [%s] detail [%s]\n", bad[c].filter,
				rc, err.message ? err.message : "(none)", err.token, err.detail);
		CHECK(rc < 0);
		CHECK(f == NULL);
		CHECK_STR(err.message, bad[c].message);
		CHECK_STR(err.token, bad[c].token);
		CHECK(strncmp(err.detail, "$filter: ", 9) == 0);
	}
}

static void limits_are_errors_not_crashes(void)
{
	char big[FB_RF_FILTER_MAX + 2];
	memset(big, ' ', sizeof(big));
	struct fb_rf_filter *f;
	struct fb_rf_filter_err err;
	CHECK_EQ(fb_rf_filter_compile(big, sizeof(big), &f, &err), FB_ETOOBIG);
	/* 65 comparisons */
	char many[65 * 32] = "";
	for (int i = 0; i < 65; i++)
		strcat(many, i ? " or EventType eq Alert" : "EventType eq Alert");
	CHECK_EQ(fb_rf_filter_compile(many, strlen(many), &f, &err), FB_ETOOBIG);
	/* 64 are fine */
	many[strlen(many) - strlen(" or EventType eq Alert")] = '\0';
	CHECK_EQ(fb_rf_filter_compile(many, strlen(many), &f, &err), 0);
	struct fb_rf_attrs a;
	fb_rf_attrs_init(&a, "Fabric.1.0.PortFailed", "Alert", PORT3);
	CHECK(fb_rf_filter_match(f, &a));
	fb_rf_filter_free(f);
	CHECK_EQ(fb_rf_filter_compile("RegistryPrefix eq\0Fabric", 24, &f, &err), FB_EMALFORMED);
	CHECK(fb_rf_filter_match(NULL, &a)); /* no filter: everything */
}

static void resource_types_from_paths(void)
{
	CHECK_STR(fb_rf_origin_type(PORT3), "Port");
	CHECK_STR(fb_rf_origin_type("/redfish/v1/Fabrics/IB/Switches/0x0008f10400411a08"), "Switch");
	CHECK_STR(fb_rf_origin_type("/redfish/v1/Fabrics/IB"), "Fabric");
	CHECK_STR(fb_rf_origin_type("/redfish/v1/Systems/node%20x"), "ComputerSystem");
	CHECK_STR(fb_rf_origin_type("/redfish/v1/Systems/n1/NetworkInterfaces/mlx5_0"), "NetworkInterface");
	CHECK_STR(fb_rf_origin_type("/redfish/v1/Fabrics/IB/"), "Fabric");
	CHECK_STR(fb_rf_origin_type("/redfish/v1/Unknown/x"), "");
	CHECK_STR(fb_rf_origin_type(""), "");
	CHECK_STR(fb_rf_origin_type("x"), "");
	CHECK_STR(fb_rf_origin_type("/"), "");
	CHECK_STR(fb_rf_origin_type(PORT3 "/Metrics"), "PortMetrics");
	CHECK_STR(fb_rf_origin_type("/redfish/v1/Fabrics/IB/Switches/sw1/Metrics"), "");
	CHECK_STR(fb_rf_origin_type("/redfish/v1/AggregationService/ConnectionMethods/x"), "ConnectionMethod");
}

int main(void)
{
	RUN(filters_select_exactly_their_events);
	RUN(bad_filters_name_the_token);
	RUN(limits_are_errors_not_crashes);
	RUN(resource_types_from_paths);
	return TEST_DONE();
}

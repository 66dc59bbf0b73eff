/* test_redfish.c - the Redfish mapping: classification of every kind and
 * link class, OriginOfCondition paths, and rendered events parsed back and
 * checked against the DMTF registries field by field.
 *
 * Registries are read from $FB_REDFISH_DIR/registries (default
 * $FB_SRC/proto/redfish, a copy of the DMTF data) and the OEM one from
 * $FB_SRC/proto/redfish/registries; FB_SRC defaults to the source root derived from
 * __FILE__ (meson runs tests from the build directory).
 *
 * `test_redfish --dump` prints one rendered event per line instead of
 * testing; tests/unit/validate_event_schema.py validates them against the
 * Event JSON schema.
 */
#include "fb_test.h"
#include "fb_test_event.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_redfish.h"

#include <jansson.h>
#include <regex.h>
#include <stdlib.h>
#include <time.h>

/* ---- helpers -------------------------------------------------------------- */

static char src_dir[1024];
static char redfish_dir[1100];

static void find_dirs(void)
{
	const char *s = getenv("FB_SRC");
	if (s && *s) {
		snprintf(src_dir, sizeof(src_dir), "%s", s);
	} else {
		const char *f = __FILE__;
		const char *cut = strstr(f, "tests/unit/test_redfish.c");
		int n = cut ? (int)(cut - f) : 0;
		snprintf(src_dir, sizeof(src_dir), "%.*s.", n, f);
	}
	const char *r = getenv("FB_REDFISH_DIR");
	if (r && *r)
		snprintf(redfish_dir, sizeof(redfish_dir), "%s", r);
	else
		snprintf(redfish_dir, sizeof(redfish_dir), "%s/proto/redfish", src_dir);
}

static void base_event(struct fb_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	strcpy(ev->agent_id, "ib-agent-1");
	ev->seq = 7;
	ev->ts_ns = 1795341141123456789ull; /* 2026-11-22T09:52:21.123456Z */
	ev->tech = FB_TECH_IB;
	strcpy(ev->subj.switch_name, "leaf3");
	ev->subj.switch_guid = 0x0008f10400411a08ull;
	ev->subj.port = 17;
}

static json_t *render_json(const struct fb_event *ev, uint64_t id)
{
	struct fb_buf b = FB_BUF_INIT;
	if (fb_redfish_render(&b, ev, id, "IB") != 0) {
		fb_buf_free(&b);
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loadb((const char *)b.data, b.len, 0, &je);
	if (!j)
		fprintf(stderr, "  bad JSON (%s): %.*s\n", je.text, (int)b.len, (const char *)b.data);
	fb_buf_free(&b);
	return j;
}

static json_t *record_of(json_t *root)
{
	return json_array_get(json_object_get(root, "Events"), 0);
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static json_t *oem_of(json_t *rec)
{
	return json_object_get(json_object_get(rec, "Oem"), "Fabricbus");
}

/* Registries by prefix, loaded once. */
static json_t *registry(const char *prefix)
{
	static const char *const files[][2] = {
		{ "Fabric", "R/registries/Fabric.1.0.3.json" },
		{ "NetworkDevice", "R/registries/NetworkDevice.1.1.1.json" },
		{ "ResourceEvent", "R/registries/ResourceEvent.1.4.3.json" },
		{ "Fabricbus", "S/proto/redfish/registries/Fabricbus.1.0.0.json" },
	};
	static json_t *loaded[4];
	for (int i = 0; i < 4; i++) {
		if (strcmp(files[i][0], prefix) != 0)
			continue;
		if (!loaded[i]) {
			char path[2200];
			snprintf(path, sizeof(path), "%s/%s", files[i][1][0] == 'R' ? redfish_dir : src_dir,
				 files[i][1] + 2);
			json_error_t je;
			loaded[i] = json_load_file(path, 0, &je);
			if (!loaded[i])
				fprintf(stderr, "  cannot load %s: %s\n", path, je.text);
		}
		return loaded[i];
	}
	return NULL;
}

static int sev_rank(const char *s)
{
	return !s ? -1 : !strcmp(s, "OK") ? 0 : !strcmp(s, "Warning") ? 1 : !strcmp(s, "Critical") ? 2 : -1;
}

/* The registry's template with MessageArgs substituted, written here
 * independently of the renderer. */
static void substitute(const char *t, json_t *args, char *out, size_t outsz)
{
	size_t n = 0;
	for (; *t && n + 1 < outsz; t++) {
		if (t[0] == '%' && t[1] >= '1' && t[1] <= '9') {
			const char *a = json_string_value(json_array_get(args, (size_t)(t[1] - '1')));
			n += (size_t)snprintf(out + n, outsz - n, "%s", a ? a : "<missing>");
			if (n >= outsz)
				n = outsz - 1;
			t++;
		} else {
			out[n++] = *t;
		}
	}
	out[n] = '\0';
}

static int is_decimal(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* Everything a record must satisfy whatever the event: 0 or a reason. */
static const char *check_record(json_t *root, int expect_event_id)
{
	regex_t re;
	json_t *rec = record_of(root);
	if (!rec)
		return "no Events[0]";
	if (strncmp(jstr(root, "@odata.type") ? jstr(root, "@odata.type") : "", "#Event.v1_13_0.Event", 20))
		return "@odata.type";
	if (!jstr(root, "Id") || !jstr(root, "Name") || json_integer_value(json_object_get(root, "Events@odata.count")) != 1)
		return "envelope Id/Name/count";
	const char *mid = jstr(rec, "MessageId");
	if (!mid || !jstr(rec, "EventType") || !jstr(rec, "MemberId"))
		return "required record fields";
	regcomp(&re, "^[A-Za-z0-9]+\\.[0-9]+\\.[0-9]+\\.[A-Za-z0-9.]+$", REG_EXTENDED | REG_NOSUB);
	int bad = regexec(&re, mid, 0, NULL, 0);
	regfree(&re);
	if (bad)
		return "MessageId pattern";
	if (expect_event_id && (!jstr(rec, "EventId") || strcmp(jstr(rec, "EventId"), jstr(root, "Id"))))
		return "EventId";
	char prefix[64], key[128];
	unsigned maj, min;
	if (sscanf(mid, "%63[^.].%u.%u.%127s", prefix, &maj, &min, key) != 4)
		return "MessageId parts";
	json_t *reg = registry(prefix);
	if (!reg)
		return "no registry for prefix";
	char ver[32];
	snprintf(ver, sizeof(ver), "%u.%u.", maj, min);
	if (strncmp(jstr(reg, "RegistryVersion"), ver, strlen(ver)))
		return "MessageId version != RegistryVersion";
	json_t *m = json_object_get(json_object_get(reg, "Messages"), key);
	if (!m)
		return "key not in registry";
	json_t *args = json_object_get(rec, "MessageArgs");
	size_t nargs = (size_t)json_integer_value(json_object_get(m, "NumberOfArgs"));
	if (json_array_size(args) != nargs)
		return "MessageArgs count != NumberOfArgs";
	json_t *types = json_object_get(m, "ParamTypes");
	for (size_t i = 0; i < nargs; i++) {
		const char *a = json_string_value(json_array_get(args, i));
		if (!a) /* Event.v1_13_0: MessageArgs items are strings */
			return "MessageArgs item not a string";
		if (!strcmp(json_string_value(json_array_get(types, i)), "number") && !is_decimal(a))
			return "number arg not a decimal string";
	}
	char expect[2048];
	substitute(json_string_value(json_object_get(m, "Message")), args, expect, sizeof(expect));
	if (!jstr(rec, "Message") || strcmp(jstr(rec, "Message"), expect)) {
		fprintf(stderr, "  Message \"%s\" != \"%s\"\n", jstr(rec, "Message"), expect);
		return "Message is not the registry template with MessageArgs";
	}
	if (sev_rank(jstr(rec, "MessageSeverity")) < sev_rank(jstr(m, "MessageSeverity")))
		return "severity below the registry's";
	if (!jstr(json_object_get(rec, "OriginOfCondition"), "@odata.id"))
		return "OriginOfCondition";
	return NULL;
}

/* ---- classification -------------------------------------------------------- */

struct expect {
	uint8_t kind, cls;
	const char *id;
	uint8_t sev;
	const char *etype;
};

#define W FB_SEV_WARNING
#define C FB_SEV_CRITICAL
#define O FB_SEV_OK

static const struct expect link_rows[] = {
	{ FB_KIND_LINK_DOWN, FB_LINK_ISL, "Fabric.1.0.InterswitchLinkDropped", W, "Alert" },
	{ FB_KIND_LINK_DOWN, FB_LINK_HOST, "Fabric.1.0.DownstreamLinkDropped", W, "Alert" },
	{ FB_KIND_LINK_DOWN, FB_LINK_UPLINK, "Fabric.1.0.UpstreamLinkDropped", W, "Alert" },
	{ FB_KIND_LINK_DOWN, FB_LINK_NODE, "NetworkDevice.1.1.ConnectionDropped", W, "Alert" },
	{ FB_KIND_LINK_DOWN, FB_LINK_UNKNOWN, "Fabric.1.0.PortFailed", C, "Alert" },
	{ FB_KIND_LINK_UP, FB_LINK_ISL, "Fabric.1.0.InterswitchLinkEstablished", O, "StatusChange" },
	{ FB_KIND_LINK_UP, FB_LINK_HOST, "Fabric.1.0.DownstreamLinkEstablished", O, "StatusChange" },
	{ FB_KIND_LINK_UP, FB_LINK_UPLINK, "Fabric.1.0.UpstreamLinkEstablished", O, "StatusChange" },
	{ FB_KIND_LINK_UP, FB_LINK_NODE, "NetworkDevice.1.1.ConnectionEstablished", O, "StatusChange" },
	{ FB_KIND_LINK_UP, FB_LINK_UNKNOWN, "Fabric.1.0.PortOK", O, "StatusChange" },
	{ FB_KIND_LINK_DEGRADED, FB_LINK_ISL, "Fabric.1.0.DegradedInterswitchLinkEstablished", W, "Alert" },
	{ FB_KIND_LINK_DEGRADED, FB_LINK_HOST, "Fabric.1.0.DegradedDownstreamLinkEstablished", W, "Alert" },
	{ FB_KIND_LINK_DEGRADED, FB_LINK_UPLINK, "Fabric.1.0.DegradedUpstreamLinkEstablished", W, "Alert" },
	{ FB_KIND_LINK_DEGRADED, FB_LINK_NODE, "NetworkDevice.1.1.DegradedConnectionEstablished", W, "Alert" },
	{ FB_KIND_LINK_DEGRADED, FB_LINK_UNKNOWN, "Fabric.1.0.PortDegraded", W, "Alert" },
	{ FB_KIND_FLAP, FB_LINK_ISL, "Fabric.1.0.InterswitchLinkFlapDetected", W, "Alert" },
	{ FB_KIND_FLAP, FB_LINK_HOST, "Fabric.1.0.DownstreamLinkFlapDetected", W, "Alert" },
	{ FB_KIND_FLAP, FB_LINK_UPLINK, "Fabric.1.0.UpstreamLinkFlapDetected", W, "Alert" },
	{ FB_KIND_FLAP, FB_LINK_NODE, "NetworkDevice.1.1.LinkFlapDetected", W, "Alert" },
	{ FB_KIND_FLAP, FB_LINK_UNKNOWN, "Fabricbus.1.0.PortFlapDetected", W, "Alert" },
};

/* Kinds whose message does not depend on the link class. */
static const struct expect any_class_rows[] = {
	{ FB_KIND_COUNTER_THRESHOLD, 0, "ResourceEvent.1.4.ResourceErrorThresholdExceeded", C, "Alert" },
	{ FB_KIND_COUNTER_CLEARED, 0, "ResourceEvent.1.4.ResourceErrorThresholdCleared", O, "StatusChange" },
	{ FB_KIND_CONGESTION, 0, "ResourceEvent.1.4.ResourceWarningThresholdExceeded", W, "Alert" },
	{ FB_KIND_CONGESTION_CLEARED, 0, "ResourceEvent.1.4.ResourceWarningThresholdCleared", O, "StatusChange" },
	{ FB_KIND_SWITCH_UNREACHABLE, 0, "Fabric.1.0.SwitchFailed", C, "Alert" },
	{ FB_KIND_SWITCH_REACHABLE, 0, "Fabric.1.0.SwitchOK", O, "StatusChange" },
	{ FB_KIND_PORT_STATE, 0, "ResourceEvent.1.4.ResourceStateChanged", O, "StatusChange" },
	{ FB_KIND_INVENTORY, 0, "ResourceEvent.1.4.ResourceCreated", O, "ResourceAdded" },
	{ FB_KIND_TOPOLOGY, 0, "ResourceEvent.1.4.ResourceChanged", O, "ResourceUpdated" },
	{ FB_KIND_TEST, 0, "ResourceEvent.1.4.TestMessage", O, "Other" },
	{ FB_KIND_ACTION, 0, "ResourceEvent.1.4.ResourceStatusChangedOK", O, "StatusChange" },
	{ FB_KIND_SWITCH_FAILED, 0, "Fabric.1.0.SwitchFailed", C, "Alert" },
	{ FB_KIND_SWITCH_DEGRADED, 0, "Fabric.1.0.SwitchDegraded", W, "Alert" },
	{ FB_KIND_SWITCH_RECOVERED, 0, "Fabric.1.0.SwitchOK", O, "StatusChange" },
	{ FB_KIND_FLAP_SUPPRESSED, 0, "Fabricbus.1.0.PortFlapSuppressed", W, "Alert" },
	{ FB_KIND_FLAP_STABLE, 0, "Fabricbus.1.0.PortFlapStable", O, "StatusChange" },
	{ FB_KIND_EVENTS_SUPPRESSED, 0, "Fabricbus.1.0.EventsSuppressed", W, "Alert" },
};

static void classify_maps_link_kinds_by_class(void)
{
	for (size_t i = 0; i < sizeof(link_rows) / sizeof(link_rows[0]); i++) {
		const struct expect *e = &link_rows[i];
		for (unsigned tech = 0; tech < FB_TECH__END; tech++) {
			struct fb_event ev;
			struct fb_redfish_class c;
			base_event(&ev);
			ev.kind = e->kind;
			ev.link_class = e->cls;
			ev.tech = (uint8_t)tech;
			fb_redfish_classify(&ev, &c);
			CHECK_STR(c.message_id, e->id);
			CHECK_EQ(c.severity, e->sev);
			CHECK_STR(c.event_type, e->etype);
		}
	}
}

static void classify_maps_other_kinds_for_every_class(void)
{
	for (size_t i = 0; i < sizeof(any_class_rows) / sizeof(any_class_rows[0]); i++) {
		const struct expect *e = &any_class_rows[i];
		for (unsigned cls = 0; cls < FB_LINK__END; cls++) {
			struct fb_event ev;
			struct fb_redfish_class c;
			base_event(&ev);
			ev.kind = e->kind;
			ev.link_class = (uint8_t)cls;
			fb_redfish_classify(&ev, &c);
			CHECK_STR(c.message_id, e->id);
			CHECK_EQ(c.severity, e->sev);
			CHECK_STR(c.event_type, e->etype);
		}
	}
}

static void classify_covers_every_kind(void)
{
	/* A new kind must get a row (and a test row) before it ships. */
	for (unsigned k = 1; k < FB_KIND__END; k++) {
		if (k == 21) /* reserved for de-duplication (fb_event.h) */
			continue;
		int found = 0;
		for (size_t i = 0; i < sizeof(link_rows) / sizeof(link_rows[0]); i++)
			found |= link_rows[i].kind == k;
		for (size_t i = 0; i < sizeof(any_class_rows) / sizeof(any_class_rows[0]); i++)
			found |= any_class_rows[i].kind == k;
		CHECK(found);
	}
}

static void classify_event_severity_escalates_never_lowers(void)
{
	struct fb_event ev;
	struct fb_redfish_class c;
	base_event(&ev);
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_HOST;
	ev.severity = FB_SEV_CRITICAL; /* agent escalates a host link down */
	fb_redfish_classify(&ev, &c);
	CHECK_STR(c.message_id, "Fabric.1.0.DownstreamLinkDropped");
	CHECK_EQ(c.severity, FB_SEV_CRITICAL);
	CHECK_STR(c.event_type, "Alert");

	ev.kind = FB_KIND_COUNTER_THRESHOLD; /* registry Critical, event OK: stays Critical */
	ev.severity = FB_SEV_OK;
	fb_redfish_classify(&ev, &c);
	CHECK_EQ(c.severity, FB_SEV_CRITICAL);

	ev.kind = FB_KIND_LINK_UP; /* an OK message sent as Warning becomes an Alert */
	ev.severity = FB_SEV_WARNING;
	fb_redfish_classify(&ev, &c);
	CHECK_EQ(c.severity, FB_SEV_WARNING);
	CHECK_STR(c.event_type, "Alert");

	ev.kind = FB_KIND_INVENTORY; /* fixed EventTypes do not follow severity */
	fb_redfish_classify(&ev, &c);
	CHECK_STR(c.event_type, "ResourceAdded");

	ev.kind = FB_KIND_LINK_UP;
	ev.severity = 200; /* out of range counts as Critical, never as an index */
	fb_redfish_classify(&ev, &c);
	CHECK_EQ(c.severity, FB_SEV_CRITICAL);
}

static void classify_action_picks_status_message_by_event_severity(void)
{
	static const struct {
		uint8_t sev;
		const char *id;
		uint8_t want;
		const char *etype;
	} cases[] = {
		{ FB_SEV_OK, "ResourceEvent.1.4.ResourceStatusChangedOK", O, "StatusChange" },
		{ FB_SEV_WARNING, "ResourceEvent.1.4.ResourceStatusChangedWarning", W, "Alert" },
		{ FB_SEV_CRITICAL, "ResourceEvent.1.4.ResourceStatusChangedCritical", C, "Alert" },
		{ 200, "ResourceEvent.1.4.ResourceStatusChangedCritical", C, "Alert" }, /* out of range */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (unsigned cls = 0; cls < FB_LINK__END; cls++) {
			struct fb_event ev;
			struct fb_redfish_class c;
			base_event(&ev);
			ev.kind = FB_KIND_ACTION;
			ev.link_class = (uint8_t)cls;
			ev.severity = cases[i].sev;
			fb_redfish_classify(&ev, &c);
			CHECK_STR(c.message_id, cases[i].id);
			CHECK_EQ(c.severity, cases[i].want);
			CHECK_STR(c.event_type, cases[i].etype);
		}
	}
}

static void classify_unknown_kind_falls_back_to_resource_changed(void)
{
	struct fb_event ev;
	struct fb_redfish_class c;
	base_event(&ev);
	ev.kind = 200;
	ev.link_class = 77;
	ev.severity = FB_SEV_WARNING;
	fb_redfish_classify(&ev, &c);
	CHECK_STR(c.message_id, "ResourceEvent.1.4.ResourceChanged");
	CHECK_EQ(c.severity, FB_SEV_WARNING);
	CHECK_STR(c.event_type, "Other");

	ev.kind = FB_KIND_LINK_DOWN; /* out-of-range class: the port-of-unknown-role row */
	fb_redfish_classify(&ev, &c);
	CHECK_STR(c.message_id, "Fabric.1.0.PortFailed");
}

/* ---- every message against its registry ----------------------------------- */

/* An event that fills every field a message's args can use. */
static void rich_event(struct fb_event *ev, unsigned kind, unsigned cls, unsigned tech)
{
	base_event(ev);
	ev->kind = (uint8_t)kind;
	ev->link_class = (uint8_t)cls;
	ev->tech = (uint8_t)tech;
	ev->port_state = 4;
	strcpy(ev->subj.node, "node003");
	strcpy(ev->subj.device, "mlx5_0");
	strcpy(ev->subj.addr, "10.0.0.2");
	ev->subj.ifindex = 12;
	strcpy(ev->text, "drain: link down on leaf3 port 17");
	fb_event_add_counter(ev, FB_CTR_SYMBOL_ERROR, 12);
	fb_event_add_counter(ev, FB_CTR_THRESHOLD, 10);
	fb_event_add_counter(ev, FB_CTR_FLAP_COUNT, 6);
	fb_event_add_counter(ev, FB_CTR_FLAP_WINDOW_S, 300);
}

static void render_every_combination_matches_registry(void)
{
	for (unsigned k = 1; k <= FB_KIND__END; k++) { /* FB_KIND__END: the fallback */
		for (unsigned cls = 0; cls < FB_LINK__END; cls++) {
			for (unsigned tech = 0; tech < FB_TECH__END; tech++) {
				struct fb_event ev;
				rich_event(&ev, k, cls, tech);
				json_t *root = render_json(&ev, 1000 + k);
				CHECK(root);
				const char *why = check_record(root, 1);
				if (why)
					fprintf(stderr, "  kind %u class %u tech %u: %s\n", k, cls, tech, why);
				json_t *rec = record_of(root);
				struct fb_redfish_class c;
				fb_redfish_classify(&ev, &c);
				int same = jstr(rec, "MessageId") && !strcmp(jstr(rec, "MessageId"), c.message_id) &&
					   !strcmp(jstr(rec, "EventType"), c.event_type) &&
					   !strcmp(jstr(rec, "MessageSeverity"), fb_severity_name(c.severity));
				json_decref(root);
				CHECK(why == NULL);
				CHECK(same);
			}
		}
	}
}

static void render_link_down_field_by_field(void)
{
	struct fb_event ev;
	base_event(&ev);
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_HOST;
	ev.severity = FB_SEV_CRITICAL;
	strcpy(ev.subj.node, "node003");
	ev.subj.port_guid = 0x0002c90300a1b2c3ull;
	ev.subj.lid = 42;
	ev.subj.peer_guid = 0xf452140300a1b2c4ull;
	ev.subj.peer_port = 1;
	strcpy(ev.subj.peer_name, "node003 HCA-1");
	fb_event_add_counter(&ev, FB_CTR_LINK_DOWNED, 3);
	fb_event_add_counter(&ev, 999, 5); /* unknown id, carried through */
	json_t *root = render_json(&ev, 4242);
	CHECK(root);
	json_t *rec = record_of(root);
	json_t *oem = oem_of(rec);
	const char *why = check_record(root, 1);
	int ok = why == NULL && !strcmp(jstr(root, "Id"), "4242") &&
		 !strcmp(jstr(root, "Name"), "Fabric Event") &&
		 json_array_size(json_object_get(root, "Events")) == 1 &&
		 !strcmp(jstr(rec, "EventType"), "Alert") && !strcmp(jstr(rec, "EventId"), "4242") &&
		 !strcmp(jstr(rec, "EventTimestamp"), "2026-11-22T09:52:21.123456Z") &&
		 !strcmp(jstr(rec, "MemberId"), "0") &&
		 !strcmp(jstr(rec, "MessageId"), "Fabric.1.0.DownstreamLinkDropped") &&
		 !strcmp(jstr(rec, "MessageSeverity"), "Critical") &&
		 !strcmp(jstr(rec, "Message"), "Switch 'leaf3' downstream link has gone down on port '17'.") &&
		 !strcmp(json_string_value(json_array_get(json_object_get(rec, "MessageArgs"), 0)), "leaf3") &&
		 !strcmp(json_string_value(json_array_get(json_object_get(rec, "MessageArgs"), 1)), "17") &&
		 !strcmp(jstr(json_object_get(rec, "OriginOfCondition"), "@odata.id"),
			 "/redfish/v1/Fabrics/IB/Switches/leaf3/Ports/17");
	int oem_ok = oem && !strcmp(jstr(oem, "AgentId"), "ib-agent-1") &&
		     json_integer_value(json_object_get(oem, "Sequence")) == 7 &&
		     !strcmp(jstr(oem, "Kind"), "link_down") && !strcmp(jstr(oem, "LinkClass"), "host") &&
		     !strcmp(jstr(oem, "Technology"), "infiniband") && !strcmp(jstr(oem, "Node"), "node003") &&
		     !strcmp(jstr(oem, "SwitchGUID"), "0x0008f10400411a08") &&
		     !strcmp(jstr(oem, "PortGUID"), "0x0002c90300a1b2c3") &&
		     !strcmp(jstr(oem, "PeerGUID"), "0xf452140300a1b2c4") &&
		     json_integer_value(json_object_get(oem, "PeerPort")) == 1 &&
		     !strcmp(jstr(oem, "PeerName"), "node003 HCA-1") &&
		     json_integer_value(json_object_get(oem, "LID")) == 42 &&
		     json_integer_value(json_object_get(json_object_get(oem, "Counters"), "link_downed")) == 3 &&
		     json_integer_value(json_object_get(json_object_get(oem, "Counters"), "counter_999")) == 5 &&
		     !json_object_get(oem, "Text") && !json_object_get(oem, "Device") &&
		     !json_object_get(oem, "IfIndex");
	if (why)
		fprintf(stderr, "  %s\n", why);
	json_decref(root);
	CHECK(ok);
	CHECK(oem_ok);
}

static const char *arg(json_t *rec, size_t i)
{
	return json_string_value(json_array_get(json_object_get(rec, "MessageArgs"), i));
}

static void render_action_names_node_health_at_every_severity(void)
{
	static const char *const health[] = { "OK", "Warning", "Critical" };
	for (unsigned sev = 0; sev < FB_SEV__END; sev++) {
		struct fb_event ev;
		base_event(&ev);
		ev.kind = FB_KIND_ACTION;
		ev.link_class = FB_LINK_HOST;
		ev.severity = (uint8_t)sev;
		strcpy(ev.subj.node, "node003");
		json_t *root = render_json(&ev, 3);
		CHECK(root);
		json_t *rec = record_of(root);
		const char *why = check_record(root, 1); /* args per the registry's ParamTypes */
		char mid[96], msg[128];
		snprintf(mid, sizeof(mid), "ResourceEvent.1.4.ResourceStatusChanged%s", health[sev]);
		snprintf(msg, sizeof(msg), "The health of resource 'node003' has changed to %s.", health[sev]);
		int ok = !why && !strcmp(jstr(rec, "MessageId"), mid) && !strcmp(jstr(rec, "Message"), msg) &&
			 !strcmp(jstr(rec, "MessageSeverity"), health[sev]) &&
			 json_array_size(json_object_get(rec, "MessageArgs")) == 2 &&
			 !strcmp(arg(rec, 0), "node003") && !strcmp(arg(rec, 1), health[sev]) &&
			 !strcmp(jstr(json_object_get(rec, "OriginOfCondition"), "@odata.id"),
				 "/redfish/v1/Systems/node003");
		if (why)
			fprintf(stderr, "  %s\n", why);
		json_decref(root);
		CHECK(ok);
	}
}

static void render_oem_carries_switch_name_port_and_jobs(void)
{
	struct fb_event ev;
	base_event(&ev);
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_HOST;
	strcpy(ev.jobs, "123,124,9999999999");
	json_t *root = render_json(&ev, 1);
	CHECK(root);
	json_t *oem = oem_of(record_of(root));
	json_t *jobs = json_object_get(oem, "Jobs");
	int ok = !strcmp(jstr(oem, "SwitchName"), "leaf3") &&
		 json_integer_value(json_object_get(oem, "Port")) == 17 && json_array_size(jobs) == 3 &&
		 !strcmp(json_string_value(json_array_get(jobs, 0)), "123") &&
		 !strcmp(json_string_value(json_array_get(jobs, 1)), "124") &&
		 !strcmp(json_string_value(json_array_get(jobs, 2)), "9999999999");
	json_decref(root);
	CHECK(ok);

	/* none of the three when unset */
	ev.subj.switch_name[0] = '\0';
	ev.subj.port = 0;
	ev.jobs[0] = '\0';
	CHECK((root = render_json(&ev, 1)));
	oem = oem_of(record_of(root));
	ok = !json_object_get(oem, "SwitchName") && !json_object_get(oem, "Port") && !json_object_get(oem, "Jobs") &&
	     !json_object_get(oem, "Resync");
	json_decref(root);
	CHECK(ok);

	/* found at an agent's resync: "Resync": true, and the counter that carries it */
	fb_event_add_counter(&ev, FB_CTR_RESYNC, 1);
	CHECK((root = render_json(&ev, 1)));
	oem = oem_of(record_of(root));
	ok = json_is_true(json_object_get(oem, "Resync")) &&
	     json_integer_value(json_object_get(json_object_get(oem, "Counters"), "resync")) == 1;
	json_decref(root);
	CHECK(ok);
}

/* The broker's root cause: the switch is the origin, the incident the
 * EventGroupId, and the lists have their own names in Oem. */
static void render_root_cause_names_switch_group_and_lists(void)
{
	struct fb_event ev;
	fbt_event_head(&ev, "fabricbusd", 1, 1700000000000000000ull, FB_KIND_SWITCH_DEGRADED, FB_SEV_CRITICAL);
	ev.tech = FB_TECH_IB;
	strcpy(ev.subj.switch_name, "leaf1");
	ev.subj.switch_guid = 0x0008f10400411a08ull;
	strcpy(ev.text, "node[001-018]");
	strcpy(ev.subj.peer_name, "");
	strcpy(ev.subj.device, "1412-1429");
	fb_event_add_counter(&ev, FB_CTR_EVENT_GROUP_ID, 1430);
	fb_event_add_counter(&ev, FB_CTR_HOSTS_NO_PATH, 18);
	json_t *root = render_json(&ev, 1430);
	CHECK(root);
	json_t *rec = record_of(root), *oem = oem_of(rec);
	CHECK_STR(jstr(rec, "MessageId"), "Fabric.1.0.SwitchDegraded");
	CHECK_STR(jstr(rec, "MessageSeverity"), "Critical");
	CHECK_STR(json_string_value(json_object_get(json_object_get(rec, "OriginOfCondition"), "@odata.id")),
		  "/redfish/v1/Fabrics/IB/Switches/leaf1");
	CHECK_EQ(json_integer_value(json_object_get(rec, "EventGroupId")), 1430);
	CHECK_STR(jstr(oem, "NoPath"), "node[001-018]");
	CHECK_STR(jstr(oem, "Degraded"), "");
	CHECK_STR(jstr(oem, "Symptoms"), "1412-1429");
	CHECK(!json_object_get(oem, "ListsCut"));
	json_decref(root);

	/* an agent's event has no EventGroupId and no lists */
	base_event(&ev);
	ev.kind = FB_KIND_LINK_DOWN;
	CHECK((root = render_json(&ev, 2)));
	rec = record_of(root);
	CHECK(!json_object_get(rec, "EventGroupId") && !json_object_get(oem_of(rec), "NoPath"));
	json_decref(root);
}

static void render_oem_writes_u64_above_int64_max_as_strings(void)
{
	struct fb_event ev;
	base_event(&ev);
	ev.kind = FB_KIND_COUNTER_THRESHOLD;
	ev.seq = UINT64_MAX;
	fb_event_add_counter(&ev, FB_CTR_XMIT_DATA, (uint64_t)INT64_MAX + 1);
	fb_event_add_counter(&ev, FB_CTR_RCV_DATA, INT64_MAX);
	json_t *root = render_json(&ev, 1); /* jansson refuses integers above INT64_MAX */
	CHECK(root);
	json_t *oem = oem_of(record_of(root));
	json_t *c = json_object_get(oem, "Counters");
	int ok = !strcmp(jstr(oem, "Sequence"), "18446744073709551615") &&
		 !strcmp(jstr(c, "xmit_data"), "9223372036854775808") &&
		 json_integer_value(json_object_get(c, "rcv_data")) == INT64_MAX;
	json_decref(root);
	CHECK(ok);

	struct fb_buf b = FB_BUF_INIT;
	CHECK_EQ(fb_redfish_render_missed(&b, UINT64_MAX, 5), 0);
	root = json_loadb((const char *)b.data, b.len, 0, NULL);
	fb_buf_free(&b);
	CHECK(root);
	ok = !strcmp(jstr(oem_of(record_of(root)), "Missed"), "18446744073709551615");
	json_decref(root);
	CHECK(ok);
}

static void render_args_for_flap_threshold_state_action(void)
{
	struct fb_event ev;
	json_t *root, *rec;

	base_event(&ev); /* flap: count and window rounded up to minutes */
	ev.kind = FB_KIND_FLAP;
	ev.link_class = FB_LINK_ISL;
	fb_event_add_counter(&ev, FB_CTR_FLAP_COUNT, 9);
	fb_event_add_counter(&ev, FB_CTR_FLAP_WINDOW_S, 90);
	CHECK((root = render_json(&ev, 1)));
	rec = record_of(root);
	int ok = !strcmp(arg(rec, 2), "9") && !strcmp(arg(rec, 3), "2") &&
		 !strcmp(jstr(rec, "Message"),
			 "Switch 'leaf3' interswitch link on port '17' was established and dropped 9 times in the last 2 minutes.");
	json_decref(root);
	CHECK(ok);

	base_event(&ev); /* node flap: NetworkDevice args */
	ev.kind = FB_KIND_FLAP;
	ev.link_class = FB_LINK_NODE;
	ev.subj.port = 1;
	strcpy(ev.subj.node, "node003");
	strcpy(ev.subj.device, "mlx5_0");
	fb_event_add_counter(&ev, FB_CTR_FLAP_COUNT, 4);
	fb_event_add_counter(&ev, FB_CTR_FLAP_WINDOW_S, 600);
	CHECK((root = render_json(&ev, 1)));
	rec = record_of(root);
	ok = !strcmp(arg(rec, 0), "node003:mlx5_0") && !strcmp(arg(rec, 1), "1") && !strcmp(arg(rec, 2), "0") &&
	     !strcmp(arg(rec, 3), "4") && !strcmp(arg(rec, 4), "10") &&
	     !strcmp(jstr(json_object_get(rec, "OriginOfCondition"), "@odata.id"),
		     "/redfish/v1/Systems/node003/NetworkInterfaces/mlx5_0");
	json_decref(root);
	CHECK(ok);

	base_event(&ev); /* threshold: the first real counter names the property */
	ev.kind = FB_KIND_COUNTER_THRESHOLD;
	fb_event_add_counter(&ev, FB_CTR_THRESHOLD, 100);
	fb_event_add_counter(&ev, FB_CTR_RATE_PER_S, 150);
	fb_event_add_counter(&ev, FB_CTR_SYMBOL_ERROR, 3000);
	CHECK((root = render_json(&ev, 1)));
	rec = record_of(root);
	ok = !strcmp(arg(rec, 0), "SymbolErrorCounter") && !strcmp(arg(rec, 1), "100") &&
	     !strcmp(jstr(rec, "Message"),
		     "The resource property SymbolErrorCounter has exceeded error threshold of value 100.");
	json_decref(root);
	CHECK(ok);

	base_event(&ev); /* Ethernet error counters use PortMetrics names */
	ev.kind = FB_KIND_COUNTER_CLEARED;
	ev.tech = FB_TECH_ETH;
	fb_event_add_counter(&ev, FB_CTR_IF_IN_ERRORS, 5);
	CHECK((root = render_json(&ev, 1)));
	rec = record_of(root);
	ok = !strcmp(arg(rec, 0), "RXErrors") && !strcmp(arg(rec, 1), "0");
	json_decref(root);
	CHECK(ok);

	base_event(&ev); /* congestion: PortXmitWait */
	ev.kind = FB_KIND_CONGESTION;
	fb_event_add_counter(&ev, FB_CTR_CONGESTION_PPM, 250000);
	fb_event_add_counter(&ev, FB_CTR_THRESHOLD, 100000);
	CHECK((root = render_json(&ev, 1)));
	rec = record_of(root);
	ok = !strcmp(arg(rec, 0), "PortXmitWait") && !strcmp(arg(rec, 1), "100000");
	json_decref(root);
	CHECK(ok);

	static const struct { uint8_t tech, ps, phys; const char *state; } states[] = {
		{ FB_TECH_IB, 4, 5, "Enabled" }, { FB_TECH_IB, 1, 2, "UnavailableOffline" },
		{ FB_TECH_IB, 2, 5, "Starting" }, { FB_TECH_IB, 1, 3, "Disabled" },
		{ FB_TECH_ETH, 1, 0, "Enabled" }, { FB_TECH_ETH, 6, 0, "Absent" },
		{ FB_TECH_ETH, 3, 0, "InTest" },
	};
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		base_event(&ev);
		ev.kind = FB_KIND_PORT_STATE;
		ev.tech = states[i].tech;
		ev.port_state = states[i].ps;
		ev.phys_state = states[i].phys;
		CHECK((root = render_json(&ev, 1)));
		rec = record_of(root);
		ok = !strcmp(arg(rec, 0), "leaf3 port 17") && !strcmp(arg(rec, 1), states[i].state);
		json_decref(root);
		CHECK(ok);
	}

	base_event(&ev); /* action: the node's health, even with the switch port known */
	ev.kind = FB_KIND_ACTION;
	ev.severity = FB_SEV_WARNING;
	strcpy(ev.agent_id, "slurm-adapter");
	strcpy(ev.subj.node, "node003");
	strcpy(ev.subj.device, "mlx5_0"); /* the action is not about the adapter */
	strcpy(ev.text, "drain");
	CHECK((root = render_json(&ev, 1)));
	rec = record_of(root);
	ok = !strcmp(arg(rec, 0), "node003") && !strcmp(arg(rec, 1), "Warning") &&
	     !strcmp(jstr(rec, "MessageId"), "ResourceEvent.1.4.ResourceStatusChangedWarning") &&
	     !strcmp(jstr(rec, "Message"), "The health of resource 'node003' has changed to Warning.") &&
	     !strcmp(jstr(rec, "MessageSeverity"), "Warning") && !strcmp(jstr(rec, "EventType"), "Alert") &&
	     !strcmp(jstr(oem_of(rec), "AgentId"), "slurm-adapter") && !strcmp(jstr(oem_of(rec), "Text"), "drain") &&
	     !strcmp(jstr(json_object_get(rec, "OriginOfCondition"), "@odata.id"), "/redfish/v1/Systems/node003");
	json_decref(root);
	CHECK(ok);

	base_event(&ev); /* switch events: one arg, the switch */
	ev.kind = FB_KIND_SWITCH_UNREACHABLE;
	ev.subj.switch_name[0] = '\0';
	CHECK((root = render_json(&ev, 1)));
	rec = record_of(root);
	ok = !strcmp(arg(rec, 0), "0x0008f10400411a08") &&
	     !strcmp(jstr(json_object_get(rec, "OriginOfCondition"), "@odata.id"),
		     "/redfish/v1/Fabrics/IB/Switches/0x0008f10400411a08");
	json_decref(root);
	CHECK(ok);

	base_event(&ev); /* nothing known: "unknown", never an empty arg */
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_ISL;
	ev.subj.switch_name[0] = '\0';
	ev.subj.switch_guid = 0;
	ev.subj.port = 0;
	CHECK((root = render_json(&ev, 1)));
	rec = record_of(root);
	ok = !strcmp(arg(rec, 0), "unknown") && !strcmp(arg(rec, 1), "unknown") &&
	     !strcmp(jstr(json_object_get(rec, "OriginOfCondition"), "@odata.id"), "/redfish/v1/Fabrics/IB");
	json_decref(root);
	CHECK(ok);
}

static void render_escapes_hostile_strings(void)
{
	static const char *const hostile[] = {
		"quote\" back\\slash",
		"ctl\x01\x02\x1f\x7f tab\t nl\n cr\r",
		"\xc3\xbc\xe6\x97\xa5\xe6\x9c\xac\xf0\x9f\x8e\x89 utf8",
		"</script><!-- \\u0000 %1 %2 %%",
		"{\"Oem\":1}",
	};
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		struct fb_event ev;
		base_event(&ev);
		ev.kind = FB_KIND_ACTION;
		strcpy(ev.agent_id, hostile[i]);
		strcpy(ev.subj.switch_name, hostile[i]);
		strcpy(ev.subj.peer_name, hostile[i]);
		strcpy(ev.text, hostile[i]);
		json_t *root = render_json(&ev, 9);
		CHECK(root);
		json_t *rec = record_of(root);
		json_t *oem = oem_of(rec);
		char label[256], msg[1024];
		snprintf(label, sizeof(label), "%s port 17", hostile[i]);
		int ok = !strcmp(jstr(oem, "AgentId"), hostile[i]) && !strcmp(jstr(oem, "PeerName"), hostile[i]) &&
			 !strcmp(jstr(oem, "SwitchName"), hostile[i]) && !strcmp(jstr(oem, "Text"), hostile[i]) &&
			 !strcmp(arg(rec, 0), label) && !strcmp(arg(rec, 1), "OK");
		/* "%1" in an arg stays literal: args are never expanded again */
		snprintf(msg, sizeof(msg), "The health of resource '%s' has changed to OK.", label);
		ok = ok && !strcmp(jstr(rec, "Message"), msg);
		json_decref(root);
		CHECK(ok);
	}
}

static void render_guards_unterminated_fields(void)
{
	struct fb_event ev;
	base_event(&ev);
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_ISL;
	memset(ev.subj.switch_name, 'A', sizeof(ev.subj.switch_name)); /* no NUL */
	memset(ev.text, 'B', sizeof(ev.text));
	json_t *root = render_json(&ev, 1);
	CHECK(root);
	int ok = !strcmp(arg(record_of(root), 0), "?") && !strcmp(jstr(oem_of(record_of(root)), "Text"), "?");
	json_decref(root);
	CHECK(ok);
}

static void render_appends_after_existing_bytes(void)
{
	struct fb_event ev;
	struct fb_buf b = FB_BUF_INIT;
	base_event(&ev);
	ev.kind = FB_KIND_TEST;
	CHECK(fb_buf_puts(&b, "data: ") == 0);
	CHECK_EQ(fb_redfish_render(&b, &ev, 5, NULL), 0);
	size_t first = b.len;
	CHECK_EQ(fb_redfish_render(&b, &ev, 6, NULL), 0);
	int ok = !memcmp(b.data, "data: {", 7) && b.len - first == first - 6 &&
		 b.data[first] == '{' && b.data[first - 1] == '}';
	fb_buf_free(&b);
	CHECK(ok);
}

/* ---- timestamps ------------------------------------------------------------ */

static void check_ts(uint64_t ts_ns, int *bad)
{
	struct fb_event ev;
	base_event(&ev);
	ev.kind = FB_KIND_TEST;
	ev.ts_ns = ts_ns;
	time_t t = (time_t)(ts_ns / 1000000000u);
	struct tm tm;
	char expect[64], frac[16];
	gmtime_r(&t, &tm);
	strftime(expect, sizeof(expect), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(frac, sizeof(frac), ".%06uZ", (unsigned)(ts_ns % 1000000000u / 1000u));
	strcat(expect, frac);
	json_t *root = render_json(&ev, 1);
	const char *got = root ? jstr(record_of(root), "EventTimestamp") : NULL;
	if (!got || strcmp(got, expect)) {
		fprintf(stderr, "  ts %llu: got %s, want %s\n", (unsigned long long)ts_ns, got ? got : "(null)",
			expect);
		(*bad)++;
	}
	json_decref(root);
}

static void timestamp_matches_gmtime(void)
{
	static const uint64_t secs[] = {
		0,           /* 1970-01-01 */
		68169599,    /* 1972-02-29T23:59:59, first leap day */
		951782400,   /* 2000-02-29, 400-year leap */
		951868800,   /* 2000-03-01 */
		978307199,   /* 2000-12-31T23:59:59, day 366 */
		1709164800,  /* 2024-02-29 */
		1795341141,  /* 2026-11-22T09:52:21 */
		4107456000,  /* 2100-02-28 */
		4107542400,  /* 2100-03-01: 2100 is not leap */
		13569465600, /* 2400-01-01 */
		13574563200, /* 2400-02-29: 2400 is */
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		check_ts(secs[i] * 1000000000u, &bad);
		check_ts(secs[i] * 1000000000u + 999999999u, &bad);
		check_ts(secs[i] * 1000000000u + 1000u, &bad);
	}
	check_ts(UINT64_MAX, &bad); /* 2554-07-21T23:34:33.709551Z */
	uint64_t x = 88172645463325252ull; /* xorshift over 1970..2554 */
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		check_ts(x, &bad);
	}
	CHECK_EQ(bad, 0);
}

/* ---- OriginOfCondition ------------------------------------------------------- */

static int origin_is(const struct fb_event *ev, const char *fabric, const char *want)
{
	char out[FB_REDFISH_ORIGIN_MAX];
	int n = fb_redfish_origin(ev, fabric, out, sizeof(out));
	if (n < 0 || strcmp(out, want) || (size_t)n != strlen(want)) {
		fprintf(stderr, "  origin: got %s (%d), want %s\n", n < 0 ? "error" : out, n, want);
		return 0;
	}
	return 1;
}

static void origin_paths(void)
{
	struct fb_event ev;
	base_event(&ev);
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_ISL;
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Fabrics/IB/Switches/leaf3/Ports/17"));
	CHECK(origin_is(&ev, NULL, "/redfish/v1/Fabrics/IB/Switches/leaf3/Ports/17"));
	CHECK(origin_is(&ev, "", "/redfish/v1/Fabrics/IB/Switches/leaf3/Ports/17"));
	CHECK(origin_is(&ev, "fab2", "/redfish/v1/Fabrics/fab2/Switches/leaf3/Ports/17"));
	strcpy(ev.subj.fabric, "ib0");
	CHECK(origin_is(&ev, "fab2", "/redfish/v1/Fabrics/ib0/Switches/leaf3/Ports/17"));
	ev.subj.fabric[0] = '\0';

	ev.subj.switch_name[0] = '\0'; /* GUID when there is no name */
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Fabrics/IB/Switches/0x0008f10400411a08/Ports/17"));
	ev.subj.port = 0; /* port unknown: the switch */
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Fabrics/IB/Switches/0x0008f10400411a08"));

	ev.kind = FB_KIND_SWITCH_REACHABLE; /* switch events never name a port */
	ev.subj.port = 3;
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Fabrics/IB/Switches/0x0008f10400411a08"));
	strcpy(ev.subj.node, "node003");
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Fabrics/IB/Switches/0x0008f10400411a08"));

	base_event(&ev); /* host link seen from the node side: no switch, a node */
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_HOST;
	ev.subj.switch_name[0] = '\0';
	ev.subj.switch_guid = 0;
	strcpy(ev.subj.node, "node003");
	strcpy(ev.subj.device, "mlx5_0");
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Systems/node003"));
	ev.link_class = FB_LINK_NODE; /* the node's own adapter port */
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Systems/node003/NetworkInterfaces/mlx5_0"));
	ev.subj.device[0] = '\0';
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Systems/node003"));
	strcpy(ev.subj.switch_name, "leaf3"); /* NODE class prefers the node */
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Systems/node003"));
	ev.subj.node[0] = '\0'; /* ... unless there is none */
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Fabrics/IB/Switches/leaf3/Ports/17"));

	base_event(&ev); /* inventory: the created interface */
	ev.kind = FB_KIND_INVENTORY;
	strcpy(ev.subj.node, "node003");
	strcpy(ev.subj.device, "mlx5_1");
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Systems/node003/NetworkInterfaces/mlx5_1"));

	base_event(&ev); /* Ethernet: address and ifIndex */
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_HOST;
	ev.tech = FB_TECH_ETH;
	ev.subj.switch_name[0] = '\0';
	ev.subj.switch_guid = 0;
	strcpy(ev.subj.addr, "10.0.0.2");
	ev.subj.ifindex = 1012;
	CHECK(origin_is(&ev, "eth", "/redfish/v1/Fabrics/eth/Switches/10.0.0.2/Ports/1012"));
	strcpy(ev.subj.addr, "fe80::1%eth0");
	CHECK(origin_is(&ev, "eth", "/redfish/v1/Fabrics/eth/Switches/fe80%3A%3A1%25eth0/Ports/1012"));
	strcpy(ev.subj.switch_name, "tor1"); /* a sysName wins over the address */
	CHECK(origin_is(&ev, "eth", "/redfish/v1/Fabrics/eth/Switches/tor1/Ports/1012"));

	base_event(&ev); /* nothing known: the fabric */
	ev.kind = FB_KIND_TOPOLOGY;
	ev.subj.switch_name[0] = '\0';
	ev.subj.switch_guid = 0;
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Fabrics/IB"));
}

static void origin_percent_encodes_segments(void)
{
	struct fb_event ev;
	base_event(&ev);
	ev.kind = FB_KIND_LINK_DOWN;
	ev.link_class = FB_LINK_ISL;
	strcpy(ev.subj.switch_name, "MF0;leaf 3/a?b#c%d");
	strcpy(ev.subj.fabric, "f/../x");
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Fabrics/f%2F..%2Fx/Switches/MF0%3Bleaf%203%2Fa%3Fb%23c%25d/Ports/17"));
	strcpy(ev.subj.switch_name, "sw\xc3\xbc-._~");
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Fabrics/f%2F..%2Fx/Switches/sw%C3%BC-._~/Ports/17"));
	ev.link_class = FB_LINK_NODE;
	strcpy(ev.subj.node, "n\"1\\");
	strcpy(ev.subj.device, "eth 0");
	CHECK(origin_is(&ev, "IB", "/redfish/v1/Systems/n%221%5C/NetworkInterfaces/eth%200"));
}

static void origin_too_long_is_refused(void)
{
	struct fb_event ev;
	char out[FB_REDFISH_ORIGIN_MAX];
	base_event(&ev);
	ev.kind = FB_KIND_LINK_DOWN;
	const char *want = "/redfish/v1/Fabrics/IB/Switches/leaf3/Ports/17"; /* 46 bytes */
	CHECK_EQ(fb_redfish_origin(&ev, "IB", out, 47), 46);
	CHECK_STR(out, want);
	memset(out, 'x', sizeof(out));
	CHECK_EQ(fb_redfish_origin(&ev, "IB", out, 46), FB_ETOOBIG); /* no room for the NUL */
	CHECK_EQ(out[0], '\0');
	CHECK_EQ(fb_redfish_origin(&ev, "IB", out, 10), FB_ETOOBIG);
	CHECK_EQ(fb_redfish_origin(&ev, "IB", out, 0), FB_ETOOBIG);

	/* The longest possible origin still fits FB_REDFISH_ORIGIN_MAX. */
	ev.link_class = FB_LINK_NODE;
	memset(ev.subj.node, '/', sizeof(ev.subj.node) - 1);
	memset(ev.subj.device, ' ', sizeof(ev.subj.device) - 1);
	int n = fb_redfish_origin(&ev, "IB", out, sizeof(out));
	CHECK(n > 400);
	CHECK((size_t)n < sizeof(out));
	ev.link_class = FB_LINK_ISL;
	ev.subj.node[0] = '\0';
	memset(ev.subj.fabric, '#', sizeof(ev.subj.fabric) - 1);
	memset(ev.subj.switch_name, '#', sizeof(ev.subj.switch_name) - 1);
	ev.tech = FB_TECH_ETH;
	ev.subj.ifindex = UINT32_MAX;
	n = fb_redfish_origin(&ev, "IB", out, sizeof(out));
	CHECK(n > 300);
}

/* ---- the missed notice ---------------------------------------------------- */

static void render_missed_notice(void)
{
	struct fb_buf b = FB_BUF_INIT;
	CHECK_EQ(fb_redfish_render_missed(&b, 1234, 987654321), 0);
	json_t *root = json_loadb((const char *)b.data, b.len, 0, NULL);
	fb_buf_free(&b);
	CHECK(root);
	json_t *rec = record_of(root);
	json_t *oem = oem_of(rec);
	const char *why = check_record(root, 0);
	if (why)
		fprintf(stderr, "  %s\n", why);
	int ok = !why && !strcmp(jstr(rec, "EventType"), "Other") &&
		 !strcmp(jstr(rec, "MessageId"), "Fabricbus.1.0.SubscriberEventsMissed") &&
		 !strcmp(jstr(rec, "MessageSeverity"), "Warning") && !json_object_get(rec, "EventId") &&
		 !strcmp(arg(rec, 0), "1234") && !strcmp(arg(rec, 1), "987654321") &&
		 !strcmp(jstr(json_object_get(rec, "OriginOfCondition"), "@odata.id"), "/redfish/v1/EventService") &&
		 json_integer_value(json_object_get(oem, "Missed")) == 1234 &&
		 json_integer_value(json_object_get(oem, "ResumeSince")) == 987654321 && json_object_size(oem) == 2;
	json_decref(root);
	CHECK(ok);
}

static void oem_registry_is_well_formed(void)
{
	json_t *reg = registry("Fabricbus");
	CHECK(reg);
	CHECK_STR(jstr(reg, "Id"), "Fabricbus.1.0.0");
	CHECK_STR(jstr(reg, "RegistryPrefix"), "Fabricbus");
	json_t *msgs = json_object_get(reg, "Messages");
	const char *key;
	json_t *m;
	json_object_foreach(msgs, key, m) {
		size_t n = (size_t)json_integer_value(json_object_get(m, "NumberOfArgs"));
		CHECK(jstr(m, "Message") && jstr(m, "Description") && jstr(m, "Resolution"));
		CHECK(sev_rank(jstr(m, "MessageSeverity")) >= 0);
		CHECK_EQ(json_array_size(json_object_get(m, "ParamTypes")), n);
		for (size_t i = 1; i <= n; i++) {
			char pct[4];
			snprintf(pct, sizeof(pct), "%%%zu", i);
			CHECK(strstr(jstr(m, "Message"), pct));
		}
	}
	m = json_object_get(msgs, "SubscriberEventsMissed");
	CHECK(m);
	CHECK_STR(jstr(m, "MessageSeverity"), "Warning");
	CHECK_EQ(json_integer_value(json_object_get(m, "NumberOfArgs")), 2);
	CHECK_STR(json_string_value(json_array_get(json_object_get(m, "ParamTypes"), 0)), "number");
	CHECK_STR(json_string_value(json_array_get(json_object_get(m, "ParamTypes"), 1)), "number");
}

/* ---- --dump: rendered events for the schema validator ---------------------- */

static int dump(void)
{
	struct fb_buf b = FB_BUF_INIT;
	for (unsigned k = 1; k <= FB_KIND__END; k++)
		for (unsigned cls = 0; cls < FB_LINK__END; cls++)
			for (unsigned tech = 0; tech < FB_TECH__END; tech++) {
				struct fb_event ev;
				rich_event(&ev, k, cls, tech);
				if (k == FB_KIND_ACTION)
					strcpy(ev.text, "q\"\\\x01\xc3\xbc");
				if (k == FB_KIND_ACTION)
					strcpy(ev.jobs, "123,124");
				if (fb_redfish_render(&b, &ev, k * 100 + cls * 10 + tech, "IB") ||
				    fb_buf_puts(&b, "\n"))
					return 1;
			}
	if (fb_redfish_render_missed(&b, 5, 77) || fb_buf_puts(&b, "\n"))
		return 1;
	int rc = fwrite(b.data, 1, b.len, stdout) == b.len ? 0 : 1;
	fb_buf_free(&b);
	return rc;
}

int main(int argc, char **argv)
{
	find_dirs();
	if (argc > 1 && !strcmp(argv[1], "--dump"))
		return dump();
	RUN(classify_maps_link_kinds_by_class);
	RUN(classify_maps_other_kinds_for_every_class);
	RUN(classify_covers_every_kind);
	RUN(classify_event_severity_escalates_never_lowers);
	RUN(classify_action_picks_status_message_by_event_severity);
	RUN(classify_unknown_kind_falls_back_to_resource_changed);
	RUN(oem_registry_is_well_formed);
	RUN(render_every_combination_matches_registry);
	RUN(render_link_down_field_by_field);
	RUN(render_args_for_flap_threshold_state_action);
	RUN(render_action_names_node_health_at_every_severity);
	RUN(render_oem_carries_switch_name_port_and_jobs);
	RUN(render_oem_writes_u64_above_int64_max_as_strings);
	RUN(render_escapes_hostile_strings);
	RUN(render_guards_unterminated_fields);
	RUN(render_appends_after_existing_bytes);
	RUN(render_missed_notice);
	RUN(timestamp_matches_gmtime);
	RUN(render_root_cause_names_switch_group_and_lists);
	RUN(origin_paths);
	RUN(origin_percent_encodes_segments);
	RUN(origin_too_long_is_refused);
	return TEST_DONE();
}

/* test_redfish_parse.c - Redfish Event JSON back into events: every kind x
 * link class x technology rendered and parsed back field by field, the
 * missed notice, and every refusal naming its field.
 *
 * Documents are handed to the parser in heap buffers of exactly their
 * length (no NUL after them), so an over-read shows up under ASan.
 */
#include "fb_test.h"
#include "fb_test_event.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_redfish.h"
#include "fb_redfish_parse.h"

#include <jansson.h>
#include <stdlib.h>

static char err[512];

/* fb_redfish_parse over an exact-size copy of n bytes of text. */
static int parse_n(const char *text, size_t n, struct fb_event *ev, struct fb_redfish_parsed *out)
{
	char *copy = malloc(n ? n : 1);
	if (!copy)
		return -12;
	memcpy(copy, text, n);
	err[0] = '\0';
	int rc = fb_redfish_parse(copy, n, ev, out, err, sizeof(err));
	free(copy);
	return rc;
}

static int render(struct fb_buf *b, const struct fb_event *ev, uint64_t id)
{
	fb_buf_reset(b);
	return fb_redfish_render(b, ev, id, "IB");
}

/* The fixture, with names and text that need escaping in an origin or a
 * document, and the counters of every Redfish property. */
static void full_event(struct fb_event *ev, unsigned kind, unsigned cls, unsigned tech)
{
	fbt_event_full(ev);
	ev->seq = 42 + kind;
	ev->kind = (uint8_t)kind;
	ev->severity = (uint8_t)((kind + cls) % FB_SEV__END);
	ev->link_class = (uint8_t)cls;
	ev->tech = (uint8_t)tech;
	strcpy(ev->subj.fabric, "ib0/east"); /* percent-encoded in the origin */
	strcpy(ev->subj.switch_name, "MF0;leaf3 \"x\"");
	strcpy(ev->subj.addr, "fe80::1%eth0");
	strcat(ev->text, " %1");
	strcat(ev->jobs, ",4294967296");
	ev->n_counters = 0;
	static const struct { uint16_t id; uint64_t v; } ctr[] = {
		{ FB_CTR_SYMBOL_ERROR, 12 }, { FB_CTR_THRESHOLD, 10 }, { FB_CTR_FLAP_COUNT, 6 },
		{ FB_CTR_FLAP_WINDOW_S, 300 }, { FB_CTR_XMIT_DATA, UINT64_MAX }, /* a string in JSON */
		{ FB_CTR_CAUSE_EVENT_ID, 4242 }, { FB_CTR_NODE_COUNT, 3 }, { FB_CTR_NODE_LIMIT, 0 },
		{ 999, 5 }, /* an id with no name: "counter_999" */
	};
	for (size_t i = 0; i < sizeof(ctr) / sizeof(ctr[0]); i++)
		fb_event_add_counter(ev, ctr[i].id, ctr[i].v);
}

/* Field by field: what the document carries must come back unchanged. */
static const char *diff(const struct fb_event *a, const struct fb_event *b)
{
	const struct fb_subject *x = &a->subj, *y = &b->subj;
	if (strcmp(a->agent_id, b->agent_id)) return "agent_id";
	if (a->seq != b->seq) return "seq";
	if (a->kind != b->kind) return "kind";
	if (a->link_class != b->link_class) return "link_class";
	if (a->tech != b->tech) return "tech";
	if (a->port_state != b->port_state) return "port_state";
	if (a->phys_state != b->phys_state) return "phys_state";
	if (strcmp(x->switch_name, y->switch_name)) return "switch_name";
	if (x->switch_guid != y->switch_guid) return "switch_guid";
	if (x->port != y->port) return "port";
	if (x->port_guid != y->port_guid) return "port_guid";
	if (x->lid != y->lid) return "lid";
	if (strcmp(x->node, y->node)) return "node";
	if (strcmp(x->device, y->device)) return "device";
	if (strcmp(x->addr, y->addr)) return "addr";
	if (x->ifindex != y->ifindex) return "ifindex";
	if (x->peer_guid != y->peer_guid) return "peer_guid";
	if (x->peer_port != y->peer_port) return "peer_port";
	if (strcmp(x->peer_name, y->peer_name)) return "peer_name";
	if (strcmp(a->text, b->text)) return "text";
	if (strcmp(a->jobs, b->jobs)) return "jobs";
	if (a->n_counters != b->n_counters) return "n_counters";
	for (unsigned i = 0; i < a->n_counters; i++)
		if (a->counters[i].id != b->counters[i].id || a->counters[i].value != b->counters[i].value)
			return "counters";
	return NULL;
}

/* ---- round trips ------------------------------------------------------------ */

static void every_kind_class_and_tech_round_trips(void)
{
	struct fb_buf b = FB_BUF_INIT, again = FB_BUF_INIT;
	unsigned n = 0;
	for (unsigned k = 1; k < FB_KIND__END; k++) {
		if (k == 21) /* reserved for de-duplication (fb_event.h): no name to parse back */
			continue;
		for (unsigned cls = 0; cls < FB_LINK__END; cls++) {
			for (unsigned tech = 0; tech < FB_TECH__END; tech++) {
				struct fb_event in, ev;
				struct fb_redfish_parsed out;
				struct fb_redfish_class c;
				char origin[FB_REDFISH_ORIGIN_MAX];
				full_event(&in, k, cls, tech);
				uint64_t id = 1000000u * k + 1000u * cls + tech;
				CHECK_EQ(render(&b, &in, id), 0);
				int rc = parse_n((const char *)b.data, b.len, &ev, &out);
				if (rc)
					fprintf(stderr, "  kind %u class %u tech %u: %s\n", k, cls, tech, err);
				CHECK_EQ(rc, 0);
				const char *d = diff(&in, &ev);
				if (d)
					fprintf(stderr, "  kind %u class %u tech %u: %s differs\n", k, cls, tech, d);
				CHECK(d == NULL);

				/* what the document says rather than what the agent sent */
				fb_redfish_classify(&in, &c);
				CHECK(fb_redfish_origin(&in, "IB", origin, sizeof(origin)) > 0);
				CHECK_EQ(ev.severity, c.severity);
				CHECK(ev.ts_ns == in.ts_ns - in.ts_ns % 1000u); /* EventTimestamp has us */
				CHECK_STR(ev.subj.fabric, strncmp(origin, "/redfish/v1/Fabrics/", 20) ? "" : "ib0/east");
				CHECK_EQ(ev.agent_id[0], 'i');
				CHECK(out.event_id == id);
				CHECK_STR(out.message_id, c.message_id);
				CHECK_STR(out.origin, origin);
				CHECK_EQ(out.missed, 0);

				/* and rendering what came back gives the same document */
				CHECK_EQ(render(&again, &ev, id), 0);
				CHECK(again.len == b.len && memcmp(again.data, b.data, b.len) == 0);
				n++;
			}
		}
	}
	CHECK_EQ(n, (FB_KIND__END - 2) * FB_LINK__END * FB_TECH__END); /* without 21 */
	fb_buf_free(&b);
	fb_buf_free(&again);
}

static void sparse_event_round_trips_with_default_fabric(void)
{
	struct fb_buf b = FB_BUF_INIT;
	struct fb_event in, ev;
	struct fb_redfish_parsed out;
	memset(&in, 0, sizeof(in));
	in.seq = 1;
	in.kind = FB_KIND_TEST; /* no subject, no counters, no text: only the required keys */
	CHECK_EQ(render(&b, &in, 0), 0);
	CHECK_EQ(parse_n((const char *)b.data, b.len, &ev, &out), 0);
	CHECK(diff(&in, &ev) == NULL);
	CHECK_STR(ev.subj.fabric, "IB"); /* the renderer's default, read from the origin */
	CHECK_STR(out.origin, "/redfish/v1/Fabrics/IB");
	CHECK(out.event_id == 0 && ev.ts_ns == 0);
	fb_buf_free(&b);
}

static void action_round_trips_node_health_and_jobs(void)
{
	struct fb_buf b = FB_BUF_INIT;
	struct fb_event in, ev;
	struct fb_redfish_parsed out;
	fbt_event_head(&in, "slurm-adapter", 9, 1795341141000000000ull, FB_KIND_ACTION, FB_SEV_WARNING);
	strcpy(in.subj.node, "node003");
	strcpy(in.text, "drain");
	strcpy(in.jobs, "77");
	fb_event_add_counter(&in, FB_CTR_CAUSE_EVENT_ID, 4242);
	CHECK_EQ(render(&b, &in, 4243), 0);
	CHECK_EQ(parse_n((const char *)b.data, b.len, &ev, &out), 0);
	CHECK(diff(&in, &ev) == NULL);
	CHECK_EQ(ev.severity, FB_SEV_WARNING);
	CHECK_STR(out.message_id, "ResourceEvent.1.4.ResourceStatusChangedWarning");
	CHECK_STR(out.origin, "/redfish/v1/Systems/node003");
	CHECK_STR(ev.subj.fabric, ""); /* a Systems origin names no fabric */
	CHECK(fb_event_counter(&ev, FB_CTR_CAUSE_EVENT_ID, 0) == 4242);
	fb_buf_free(&b);
}

static void missed_notice_is_recognised(void)
{
	struct fb_buf b = FB_BUF_INIT;
	struct fb_event ev;
	struct fb_redfish_parsed out;
	CHECK_EQ(fb_redfish_render_missed(&b, 1234, 987654321), 0);
	CHECK_EQ(parse_n((const char *)b.data, b.len, &ev, &out), 0);
	CHECK_EQ(out.missed, 1);
	CHECK(out.missed_count == 1234 && out.resume_since == 987654321);
	CHECK(out.event_id == 0);
	CHECK_STR(out.message_id, "Fabricbus.1.0.SubscriberEventsMissed");
	CHECK_STR(out.origin, "/redfish/v1/EventService");
	CHECK_EQ(ev.severity, FB_SEV_WARNING);
	CHECK_EQ(ev.kind, 0);

	fb_buf_reset(&b); /* u64 extremes come as decimal strings */
	CHECK_EQ(fb_redfish_render_missed(&b, UINT64_MAX, (uint64_t)INT64_MAX + 1), 0);
	CHECK_EQ(parse_n((const char *)b.data, b.len, &ev, &out), 0);
	CHECK(out.missed_count == UINT64_MAX && out.resume_since == (uint64_t)INT64_MAX + 1);
	fb_buf_free(&b);
}

/* ---- documents edited as JSON ------------------------------------------------ */

/* A rendered link_down as a jansson tree, with Events[0] and its Oem.Fabricbus. */
struct doc {
	json_t *root, *rec, *oem;
};

static int doc_open(struct doc *d)
{
	struct fb_event ev;
	struct fb_buf b = FB_BUF_INIT;
	full_event(&ev, FB_KIND_LINK_DOWN, FB_LINK_HOST, FB_TECH_IB);
	if (render(&b, &ev, 77))
		return -1;
	d->root = json_loadb((const char *)b.data, b.len, 0, NULL);
	fb_buf_free(&b);
	d->rec = json_array_get(json_object_get(d->root, "Events"), 0);
	d->oem = json_object_get(json_object_get(d->rec, "Oem"), "Fabricbus");
	return d->oem ? 0 : -1;
}

/* Dump, parse, and free: the parser's result (err holds the reason). */
static int doc_parse(struct doc *d, struct fb_event *ev, struct fb_redfish_parsed *out)
{
	char *text = json_dumps(d->root, JSON_COMPACT);
	json_decref(d->root);
	if (!text)
		return -12;
	int rc = parse_n(text, strlen(text), ev, out);
	free(text);
	return rc;
}

enum where { ROOT, REC, OEM };

/* Set (value non-NULL, JSON text) or delete one key, then expect a refusal
 * whose message contains needle and is one line. */
static int refused_with(enum where w, const char *key, const char *value, const char *needle)
{
	struct doc d;
	struct fb_event ev;
	struct fb_redfish_parsed out;
	if (doc_open(&d))
		return 0;
	json_t *obj = w == ROOT ? d.root : w == REC ? d.rec : d.oem;
	if (value) {
		json_t *v = json_loads(value, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		if (!v) {
			fprintf(stderr, "  test value does not parse: %s\n", value);
			json_decref(d.root);
			return 0;
		}
		json_object_set_new(obj, key, v);
	} else {
		json_object_del(obj, key);
	}
	int rc = doc_parse(&d, &ev, &out);
	if (rc != FB_EMALFORMED || !strstr(err, needle) || strchr(err, '\n')) {
		fprintf(stderr, "  %s=%s -> rc %d, \"%s\" (wanted \"%s\")\n", key, value ? value : "(deleted)", rc, err,
			needle);
		return 0;
	}
	return ev.kind == 0 && out.message_id[0] == '\0'; /* zeroed on failure */
}

static void unknown_keys_are_ignored(void)
{
	struct doc d;
	struct fb_event ev;
	struct fb_redfish_parsed out;
	CHECK_EQ(doc_open(&d), 0);
	json_object_set_new(d.root, "Context", json_string("kafka-topic")); /* a sink adds it */
	json_object_set_new(d.rec, "Resolution", json_string("None."));
	json_object_set_new(d.oem, "FutureKey", json_pack("{s:i}", "x", 1)); /* a newer broker */
	CHECK_EQ(doc_parse(&d, &ev, &out), 0);
	CHECK_EQ(ev.kind, FB_KIND_LINK_DOWN);
}

static void timestamp_keeps_nanoseconds_when_present(void)
{
	struct doc d;
	struct fb_event ev;
	struct fb_redfish_parsed out;
	CHECK_EQ(doc_open(&d), 0);
	json_object_set_new(d.rec, "EventTimestamp", json_string("2026-11-22T11:52:21.123456789+02:00"));
	CHECK_EQ(doc_parse(&d, &ev, &out), 0);
	CHECK(ev.ts_ns == 1795341141123456789ull);
}

static void wrong_types_and_ranges_are_refused_by_name(void)
{
	static const struct {
		enum where w;
		const char *key, *value, *needle;
	} cases[] = {
		{ ROOT, "@odata.type", "\"#Task.v1_0_0.Task\"", "@odata.type" },
		{ ROOT, "@odata.type", "7", "@odata.type" },
		{ ROOT, "Events", "[]", "Events: must be an array of exactly one" },
		{ ROOT, "Events", "[{},{}]", "Events: must be an array of exactly one" },
		{ ROOT, "Events", "{}", "Events:" },
		{ ROOT, "Events", "[7]", "Events[0]: must be an object" },
		{ REC, "EventId", "77", "Events[0].EventId" },
		{ REC, "EventId", "\"-1\"", "Events[0].EventId" },
		{ REC, "EventId", "\"18446744073709551616\"", "Events[0].EventId" },
		{ REC, "EventId", "\"\"", "Events[0].EventId" },
		{ REC, "EventId", NULL, "Events[0].EventId: required" },
		{ REC, "EventTimestamp", "\"yesterday\"", "Events[0].EventTimestamp" },
		{ REC, "EventTimestamp", "1795341141", "Events[0].EventTimestamp" },
		{ REC, "EventTimestamp", "\"1969-12-31T23:59:59Z\"", "Events[0].EventTimestamp" },
		{ REC, "EventTimestamp", NULL, "Events[0].EventTimestamp: required" },
		{ REC, "MessageId", "5", "Events[0].MessageId" },
		{ REC, "MessageId", "\"\"", "Events[0].MessageId" },
		{ REC, "MessageId", NULL, "Events[0].MessageId: required" },
		{ REC, "MessageSeverity", "\"Major\"", "Events[0].MessageSeverity" },
		{ REC, "MessageSeverity", "2", "Events[0].MessageSeverity" },
		{ REC, "OriginOfCondition", "\"/redfish/v1\"", "Events[0].OriginOfCondition" },
		{ REC, "OriginOfCondition", "{\"@odata.id\":5}", "Events[0].OriginOfCondition" },
		{ REC, "OriginOfCondition", "{\"@odata.id\":\"/redfish/v1/Fabrics/a%2\"}", "percent-encoding" },
		{ REC, "OriginOfCondition", "{\"@odata.id\":\"/redfish/v1/Fabrics/a%zz/Switches\"}", "percent-encoding" },
		{ REC, "OriginOfCondition", "{\"@odata.id\":\"/redfish/v1/Fabrics/a%00b\"}", "OriginOfCondition: the fabric" },
		{ REC, "OriginOfCondition", "{\"@odata.id\":\"/redfish/v1/Fabrics/%C3\"}", "OriginOfCondition: the fabric" },
		{ REC, "OriginOfCondition", "{\"@odata.id\":\"/redfish/v1/Fabrics//Switches\"}", "OriginOfCondition: the fabric" },
		{ REC, "OriginOfCondition", NULL, "Events[0].OriginOfCondition: required" },
		{ REC, "Oem", "{}", "Events[0].Oem.Fabricbus: required" },
		{ REC, "Oem", "{\"Fabricbus\":[]}", "Events[0].Oem.Fabricbus: required" },
		{ OEM, "AgentId", NULL, "Oem.Fabricbus.AgentId: required" },
		{ OEM, "AgentId", "1", "Oem.Fabricbus.AgentId: must be a string" },
		{ OEM, "Node", "\"a\\u0000b\"", "document: not JSON" }, /* jansson refuses a NUL */
		{ OEM, "Sequence", "-1", "Oem.Fabricbus.Sequence: must be a non-negative integer" },
		{ OEM, "Sequence", "1.5", "Oem.Fabricbus.Sequence" },
		{ OEM, "Sequence", "\"12a\"", "Oem.Fabricbus.Sequence" },
		{ OEM, "Sequence", "0", "seq: must be at least 1" }, /* fb_event_check */
		{ OEM, "Sequence", NULL, "Oem.Fabricbus.Sequence: required" },
		{ OEM, "Kind", "\"nope\"", "Oem.Fabricbus.Kind: unknown value" },
		{ OEM, "Kind", "\"unknown\"", "Oem.Fabricbus.Kind: unknown value" },
		{ OEM, "Kind", "1", "Oem.Fabricbus.Kind" },
		{ OEM, "LinkClass", "\"spine\"", "Oem.Fabricbus.LinkClass" },
		{ OEM, "Technology", "\"roce\"", "Oem.Fabricbus.Technology" },
		{ OEM, "Technology", NULL, "Oem.Fabricbus.Technology: required" },
		{ OEM, "Port", "\"17\"", "Oem.Fabricbus.Port: must be an integer 0..65535" },
		{ OEM, "Port", "65536", "Oem.Fabricbus.Port: must be an integer 0..65535" },
		{ OEM, "Port", "-1", "Oem.Fabricbus.Port" },
		{ OEM, "LID", "-3", "Oem.Fabricbus.LID" },
		{ OEM, "PeerPort", "true", "Oem.Fabricbus.PeerPort" },
		{ OEM, "IfIndex", "4294967296", "Oem.Fabricbus.IfIndex: must be an integer 0..4294967295" },
		{ OEM, "PortState", "256", "Oem.Fabricbus.PortState: must be an integer 0..255" },
		{ OEM, "PhysState", "null", "Oem.Fabricbus.PhysState" },
		{ OEM, "SwitchGUID", "\"0x\"", "Oem.Fabricbus.SwitchGUID" },
		{ OEM, "SwitchGUID", "\"0xZZ\"", "Oem.Fabricbus.SwitchGUID" },
		{ OEM, "SwitchGUID", "\"1234\"", "Oem.Fabricbus.SwitchGUID" },
		{ OEM, "PortGUID", "\"0x12345678901234567\"", "Oem.Fabricbus.PortGUID" },
		{ OEM, "PortGUID", "\"0x-1\"", "Oem.Fabricbus.PortGUID" },
		{ OEM, "PeerGUID", "1234", "Oem.Fabricbus.PeerGUID" },
		{ OEM, "PeerGUID", "\" 0x12\"", "Oem.Fabricbus.PeerGUID" },
		{ OEM, "Counters", "[]", "Oem.Fabricbus.Counters: must be an object" },
		{ OEM, "Counters", "{\"bogus\":1}", "Oem.Fabricbus.Counters: unknown counter 'bogus'" },
		{ OEM, "Counters", "{\"counter_1\":1}", "Oem.Fabricbus.Counters: unknown counter 'counter_" },
		{ OEM, "Counters", "{\"counter_0\":1}", "Oem.Fabricbus.Counters: unknown counter 'counter_" },
		{ OEM, "Counters", "{\"symbol_error\":-1}", "Oem.Fabricbus.Counters.symbol_error" },
		{ OEM, "Counters", "{\"symbol_error\":1.0}", "Oem.Fabricbus.Counters.symbol_error" },
		{ OEM, "Counters", "{\"symbol_error\":\"18446744073709551616\"}", "Oem.Fabricbus.Counters.symbol_error" },
		{ OEM, "Counters", "{\"symbol_error\":1,\"SYMBOL_ERROR\":2}", "given twice" },
		{ OEM, "Jobs", "\"123,124\"", "Oem.Fabricbus.Jobs: must be an array" },
		{ OEM, "Jobs", "[123]", "Oem.Fabricbus.Jobs[0]" },
		{ OEM, "Jobs", "[\"1\",\"\"]", "Oem.Fabricbus.Jobs[1]" },
		{ OEM, "Jobs", "[\"1,2\"]", "Oem.Fabricbus.Jobs[0]" },
		{ OEM, "Jobs", "[\"-5\"]", "Oem.Fabricbus.Jobs[0]" },
		{ OEM, "Jobs", "[\"0x10\"]", "Oem.Fabricbus.Jobs[0]" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(refused_with(cases[i].w, cases[i].key, cases[i].value, cases[i].needle));
}

static void missed_notice_needs_its_counts(void)
{
	static const char *const bad[] = {
		"{\"Missed\":1}", "{\"ResumeSince\":1}", "{\"Missed\":-1,\"ResumeSince\":1}",
		"{\"Missed\":1,\"ResumeSince\":\"x\"}", "[]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fb_buf b = FB_BUF_INIT;
		struct fb_event ev;
		struct fb_redfish_parsed out;
		CHECK_EQ(fb_redfish_render_missed(&b, 5, 6), 0);
		json_t *root = json_loadb((const char *)b.data, b.len, 0, NULL);
		fb_buf_free(&b);
		CHECK(root);
		json_t *rec = json_array_get(json_object_get(root, "Events"), 0);
		json_object_set_new(json_object_get(rec, "Oem"), "Fabricbus", json_loads(bad[i], JSON_DECODE_ANY, NULL));
		struct doc d = { root, rec, NULL };
		CHECK_EQ(doc_parse(&d, &ev, &out), FB_EMALFORMED);
		CHECK(strstr(err, "Oem.Fabricbus"));
		CHECK_EQ(out.missed, 0); /* zeroed on failure */
	}
}

static void oversize_strings_are_refused_not_cut(void)
{
	static const struct {
		enum where w;
		const char *key;
		size_t max; /* bytes that fit */
	} cases[] = {
		{ OEM, "AgentId", FB_AGENT_ID_MAX - 1 }, { OEM, "SwitchName", FB_NAME_MAX - 1 },
		{ OEM, "Node", FB_NAME_MAX - 1 },        { OEM, "Device", FB_NAME_MAX - 1 },
		{ OEM, "Address", FB_ADDR_MAX - 1 },     { OEM, "PeerName", FB_NAME_MAX - 1 },
		{ OEM, "Text", FB_TEXT_MAX - 1 },        { REC, "MessageId", 95 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t n = cases[i].max; n <= cases[i].max + 1; n++) {
			struct doc d;
			struct fb_event ev;
			struct fb_redfish_parsed out;
			char value[256], needle[128];
			memset(value, 'x', n);
			value[n] = '\0';
			CHECK_EQ(doc_open(&d), 0);
			json_object_set_new(cases[i].w == OEM ? d.oem : d.rec, cases[i].key, json_string(value));
			int rc = doc_parse(&d, &ev, &out);
			if (n == cases[i].max) {
				if (rc)
					fprintf(stderr, "  %s of %zu bytes: %s\n", cases[i].key, n, err);
				CHECK_EQ(rc, 0);
				continue;
			}
			snprintf(needle, sizeof(needle), "%s: longer than %zu bytes", cases[i].key, cases[i].max);
			if (rc != FB_EMALFORMED || !strstr(err, needle))
				fprintf(stderr, "  %s of %zu bytes: rc %d \"%s\"\n", cases[i].key, n, rc, err);
			CHECK_EQ(rc, FB_EMALFORMED);
			CHECK(strstr(err, needle));
		}
	}

	/* the origin (511 bytes fit) and the fabric inside it (31 bytes) */
	char origin[600] = "/redfish/v1/Fabrics/IB/Switches/";
	size_t have = strlen(origin);
	memset(origin + have, 's', 511 - have);
	origin[511] = '\0';
	struct doc d;
	struct fb_event ev;
	struct fb_redfish_parsed out;
	CHECK_EQ(doc_open(&d), 0);
	json_object_set_new(d.rec, "OriginOfCondition", json_pack("{s:s}", "@odata.id", origin));
	CHECK_EQ(doc_parse(&d, &ev, &out), 0);
	CHECK_EQ(strlen(out.origin), 511);
	strcat(origin, "s");
	CHECK_EQ(doc_open(&d), 0);
	json_object_set_new(d.rec, "OriginOfCondition", json_pack("{s:s}", "@odata.id", origin));
	CHECK_EQ(doc_parse(&d, &ev, &out), FB_EMALFORMED);
	CHECK(strstr(err, "OriginOfCondition: longer than 511 bytes"));
	CHECK_EQ(doc_open(&d), 0); /* 16 bytes encoded as 32 %XX: decodes to 16, fits */
	json_object_set_new(d.rec, "OriginOfCondition",
			    json_pack("{s:s}", "@odata.id", "/redfish/v1/Fabrics/%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41"));
	CHECK_EQ(doc_parse(&d, &ev, &out), 0);
	CHECK_STR(ev.subj.fabric, "AAAAAAAAAAAAAAAA");
	CHECK_EQ(doc_open(&d), 0);
	json_object_set_new(d.rec, "OriginOfCondition",
			    json_pack("{s:s}", "@odata.id", "/redfish/v1/Fabrics/0123456789012345678901234567890123"));
	CHECK_EQ(doc_parse(&d, &ev, &out), FB_EMALFORMED);
	CHECK(strstr(err, "fabric longer than 31 bytes"));

	/* jobs: 95 bytes joined fit, 96 do not */
	char item[128];
	memset(item, '9', 93);
	item[93] = '\0';
	CHECK_EQ(doc_open(&d), 0);
	json_object_set_new(d.oem, "Jobs", json_pack("[s,s]", item, "1"));
	CHECK_EQ(doc_parse(&d, &ev, &out), 0);
	CHECK_EQ(strlen(ev.jobs), 95);
	strcat(item, "9");
	CHECK_EQ(doc_open(&d), 0);
	json_object_set_new(d.oem, "Jobs", json_pack("[s,s]", item, "1"));
	CHECK_EQ(doc_parse(&d, &ev, &out), FB_EMALFORMED);
	CHECK(strstr(err, "Oem.Fabricbus.Jobs: longer than 95 bytes"));
}

static void too_many_counters_are_refused(void)
{
	struct doc d;
	struct fb_event ev;
	struct fb_redfish_parsed out;
	CHECK_EQ(doc_open(&d), 0);
	json_t *c = json_object();
	for (unsigned id = 1; id <= FB_COUNTERS_MAX + 1; id++)
		json_object_set_new(c, fb_counter_name(id), json_integer(id));
	json_object_set_new(d.oem, "Counters", c);
	CHECK_EQ(doc_parse(&d, &ev, &out), FB_EMALFORMED);
	CHECK(strstr(err, "Oem.Fabricbus.Counters: more than 16 counters"));
}

/* ---- raw bytes ------------------------------------------------------------------ */

static void every_truncation_is_refused(void)
{
	struct fb_buf b = FB_BUF_INIT;
	struct fb_event in, ev;
	struct fb_redfish_parsed out;
	full_event(&in, FB_KIND_FLAP, FB_LINK_NODE, FB_TECH_ETH);
	CHECK_EQ(render(&b, &in, 5), 0);
	for (size_t n = 0; n < b.len; n++) {
		int rc = parse_n((const char *)b.data, n, &ev, &out);
		if (rc != FB_EMALFORMED)
			fprintf(stderr, "  prefix of %zu bytes: rc %d\n", n, rc);
		CHECK_EQ(rc, FB_EMALFORMED);
		CHECK(strstr(err, "document: not JSON"));
	}
	fb_buf_free(&b);
}

static void non_json_duplicates_and_oversize_are_refused(void)
{
	static const struct { const char *text, *needle; } cases[] = {
		{ "", "document: not JSON" },
		{ "null", "document: not JSON" },
		{ "[]", "@odata.type" },
		{ "\"x\"", "document: not JSON" },
		{ "{\"@odata.type\":\"#Event.v1_13_0.Event\",\"@odata.type\":\"#Event.v1_13_0.Event\"}",
		  "document: not JSON: duplicate object key" },
		{ "{\"a\":1}\n{\"b\":2}", "document: not JSON" },
		{ "{\"a\":\"\xff\"}", "document: not JSON" },
		{ "{\"a\":\"\\u0000\"}", "document: not JSON" },
		{ "{\"a\":\n\n\"\x01\"}", "document: not JSON" },
	};
	struct fb_event ev;
	struct fb_redfish_parsed out;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse_n(cases[i].text, strlen(cases[i].text), &ev, &out);
		if (rc != FB_EMALFORMED || !strstr(err, cases[i].needle) || strchr(err, '\n'))
			fprintf(stderr, "  case %zu: rc %d \"%s\"\n", i, rc, err);
		CHECK_EQ(rc, FB_EMALFORMED);
		CHECK(strstr(err, cases[i].needle));
		CHECK(!strchr(err, '\n'));
	}

	/* duplicates deep inside are refused too */
	struct fb_buf b = FB_BUF_INIT;
	struct fb_event in;
	full_event(&in, FB_KIND_LINK_DOWN, FB_LINK_ISL, FB_TECH_IB);
	CHECK_EQ(render(&b, &in, 5), 0);
	const char *kind = memmem(b.data, b.len, "\"Kind\":", 7); /* b is not NUL-terminated */
	CHECK(kind);
	struct fb_buf dup = FB_BUF_INIT;
	size_t at = (size_t)(kind - (const char *)b.data);
	CHECK_EQ(fb_buf_put(&dup, b.data, at), 0);
	CHECK_EQ(fb_buf_puts(&dup, "\"Kind\":\"link_up\","), 0);
	CHECK_EQ(fb_buf_put(&dup, b.data + at, b.len - at), 0);
	CHECK_EQ(parse_n((const char *)dup.data, dup.len, &ev, &out), FB_EMALFORMED);
	CHECK(strstr(err, "duplicate object key"));
	fb_buf_free(&dup);

	/* more than 1 MiB is refused before it is parsed; 1 MiB of padding is fine */
	struct fb_buf big = FB_BUF_INIT;
	CHECK_EQ(fb_buf_put(&big, b.data, b.len), 0);
	while (big.len < FB_REDFISH_PARSE_MAX)
		CHECK_EQ(fb_buf_put_u8(&big, ' '), 0);
	CHECK_EQ(parse_n((const char *)big.data, big.len, &ev, &out), 0);
	CHECK_EQ(fb_buf_put_u8(&big, ' '), 0);
	CHECK_EQ(parse_n((const char *)big.data, big.len, &ev, &out), FB_EMALFORMED);
	CHECK(strstr(err, "document: 1048577 bytes, more than the 1048576 allowed"));
	fb_buf_free(&big);
	fb_buf_free(&b);
}

static void error_output_is_bounded_and_optional(void)
{
	struct fb_event ev;
	struct fb_redfish_parsed out;
	char small[16];
	memset(small, 'Z', sizeof(small));
	CHECK_EQ(fb_redfish_parse("{}", 2, &ev, &out, small, 8), FB_EMALFORMED);
	CHECK_EQ(strlen(small), 7);
	CHECK_EQ(small[8], 'Z');
	CHECK_EQ(fb_redfish_parse("{}", 2, &ev, &out, NULL, 0), FB_EMALFORMED);
	small[0] = 'Q';
	CHECK_EQ(fb_redfish_parse("{", 1, &ev, &out, small, 0), FB_EMALFORMED);
	CHECK_EQ(small[0], 'Q'); /* errsz 0: err untouched */
}

int main(void)
{
	RUN(every_kind_class_and_tech_round_trips);
	RUN(sparse_event_round_trips_with_default_fabric);
	RUN(action_round_trips_node_health_and_jobs);
	RUN(missed_notice_is_recognised);
	RUN(unknown_keys_are_ignored);
	RUN(timestamp_keeps_nanoseconds_when_present);
	RUN(wrong_types_and_ranges_are_refused_by_name);
	RUN(missed_notice_needs_its_counts);
	RUN(oversize_strings_are_refused_not_cut);
	RUN(too_many_counters_are_refused);
	RUN(every_truncation_is_refused);
	RUN(non_json_duplicates_and_oversize_are_refused);
	RUN(error_output_is_bounded_and_optional);
	return TEST_DONE();
}

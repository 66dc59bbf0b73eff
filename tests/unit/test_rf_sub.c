/* test_rf_sub.c - Redfish subscriptions: what a POST/PATCH may say and the
 * Base error each refusal gives, the matcher against an oracle of cases,
 * the store file's round trip and its refusals, the push cursors file, and
 * the retry policies on an explicit clock. */
#include "fb_test.h"

#include "fb_buf.h"
#include "fb_crc32c.h"
#include "fb_err.h"
#include "fb_event.h"
#include "push_cursor.h"
#include "push_retry.h"
#include "rf_live.h"
#include "rf_sub.h"
#include "rf_sub_store.h"

#include <errno.h>
#include <string.h>

static int build(const char *body, enum fb_rf_mode mode, const struct fb_rf_sub *old,
		 struct fb_rf_sub *s, struct fb_rf_error *e)
{
	memset(e, 0, sizeof(*e));
	return fb_rf_sub_build_text(body, strlen(body), mode, old, s, e);
}

/* The Base message key a body is refused with ("" when accepted). */
static const char *refusal(const char *body, enum fb_rf_mode mode)
{
	static char key[64];
	struct fb_rf_sub s;
	struct fb_rf_error e;
	int rc = build(body, mode, NULL, &s, &e);
	fb_rf_sub_free(&s);
	snprintf(key, sizeof(key), "%s", rc ? e.key : "");
	return key;
}

static void create_full(void)
{
	struct fb_rf_sub s;
	struct fb_rf_error e;
	const char *body =
		"{\"Destination\":\"https://rcv.example:8443/events\",\"Context\":\"ctx1\","
		"\"Protocol\":\"Redfish\",\"RegistryPrefixes\":[\"Fabric\"],"
		"\"ExcludeMessageIds\":[\"Fabric.1.0.PortOK\"],\"Severities\":[\"Critical\",\"Warning\"],"
		"\"OriginResources\":[{\"@odata.id\":\"/redfish/v1/Fabrics/IB/Switches/sw1\"}],"
		"\"SubordinateResources\":true,\"HttpHeaders\":[{\"X-Token\":\"s3cret\"}],"
		"\"SendHeartbeat\":true,\"HeartbeatIntervalMinutes\":5,"
		"\"DeliveryRetryPolicy\":\"SuspendRetries\"}";
	CHECK_EQ(build(body, FB_RF_SUB_CREATE, NULL, &s, &e), 0);
	CHECK_STR(s.destination, "https://rcv.example:8443/events");
	CHECK_STR(s.context, "ctx1");
	CHECK_EQ(s.protocol, FB_RF_PROTO_REDFISH);
	CHECK_EQ(s.retry_policy, FB_RF_RETRY_SUSPEND);
	CHECK_EQ(s.enabled, 1);
	CHECK_EQ(s.send_heartbeat, 1);
	CHECK_EQ(s.heartbeat_minutes, 5);
	CHECK_EQ(s.n_headers, 1);
	CHECK_STR(s.headers[0], "X-Token: s3cret");
	CHECK_EQ(s.match.sev_mask, (1u << FB_SEV_CRITICAL) | (1u << FB_SEV_WARNING));
	CHECK_EQ(fb_rf_sub_set_id(&s, "7"), 0);
	json_t *r = fb_rf_sub_render(&s);
	CHECK(r != NULL);
	/* HttpHeaders is write-only: it reads back empty. */
	CHECK_EQ(json_array_size(json_object_get(r, "HttpHeaders")), 0);
	char *text = json_dumps(r, JSON_COMPACT);
	CHECK(text && !strstr(text, "s3cret"));
	CHECK(strstr(text, "\"@odata.id\":\"/redfish/v1/EventService/Subscriptions/7\""));
	CHECK(strstr(text, "\"State\":\"Enabled\""));
	free(text);
	json_decref(r);
	fb_rf_sub_free(&s);
}

/* Each body and the Base message it is refused with ("" = accepted). */
static const char *const refusals[][2] = {
	{ "{\"Destination\":", "MalformedJSON" },
	{ "[1]", "MalformedJSON" },
	{ "{}", "PropertyMissing" },
	{ "{\"Destination\":\"http://h/\",\"Bogus\":1}", "PropertyUnknown" },
	{ "{\"Destination\":\"http://h/\",\"Id\":\"5\"}", "PropertyNotWritable" },
	{ "{\"Destination\":\"http://h/\",\"Status\":{\"State\":\"Enabled\"}}", "PropertyNotWritable" },
	{ "{\"Destination\":42}", "PropertyValueTypeError" },
	{ "{\"Destination\":\"ftp://h/\"}", "PropertyValueFormatError" },
	{ "{\"Destination\":\"http://\"}", "PropertyValueFormatError" },
	{ "{\"Destination\":\"http://h:99999/\"}", "PropertyValueFormatError" },
	{ "{\"Destination\":\"http://h/ x\"}", "PropertyValueFormatError" },
	{ "{\"Destination\":\"http://h/\",\"Protocol\":\"SMTP\"}", "PropertyValueNotInList" },
	{ "{\"Destination\":\"http://h/\",\"DeliveryRetryPolicy\":\"Never\"}", "PropertyValueNotInList" },
	{ "{\"Destination\":\"http://h/\",\"Severities\":[\"Fatal\"]}", "PropertyValueNotInList" },
	{ "{\"Destination\":\"http://h/\",\"MessageIds\":\"Fabric.1.0.PortOK\"}", "PropertyValueTypeError" },
	{ "{\"Destination\":\"http://h/\",\"MessageIds\":[\"no dots\"]}", "PropertyValueFormatError" },
	{ "{\"Destination\":\"http://h/\",\"OriginResources\":[\"/redfish/v1\"]}", "PropertyValueTypeError" },
	{ "{\"Destination\":\"http://h/\",\"OriginResources\":[{\"@odata.id\":\"/x\"}]}", "PropertyValueFormatError" },
	{ "{\"Destination\":\"http://h/\",\"HeartbeatIntervalMinutes\":0}", "PropertyValueOutOfRange" },
	{ "{\"Destination\":\"http://h/\",\"SendHeartbeat\":\"yes\"}", "PropertyValueTypeError" },
	{ "{\"Destination\":\"http://h/\",\"HttpHeaders\":[{\"Bad Name\":\"v\"}]}", "PropertyValueFormatError" },
	{ "{\"Destination\":\"http://h/\",\"HttpHeaders\":[{\"X\":\"a\\r\\nB: c\"}]}", "PropertyValueFormatError" },
	{ "{\"Destination\":\"kafka://k:9092\",\"Protocol\":\"Kafka\"}", "PropertyValueFormatError" },
	{ "{\"Destination\":\"kafka://k:9092\",\"Protocol\":\"Kafka\",\"Context\":\"t1\"}", "" },
	{ "{\"Destination\":\"http://[::1]:80/x\",\"@odata.type\":\"x\"}", "" },
};

static void create_refusals(void)
{
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const char *got = refusal(refusals[i][0], FB_RF_SUB_CREATE);
		if (strcmp(got, refusals[i][1]) != 0)
			FB_TEST_FAIL_("  body %s: refused with \"%s\", want \"%s\"\n", refusals[i][0], got,
				      refusals[i][1]);
	}
}

static void patch_rules(void)
{
	struct fb_rf_sub s, p2;
	struct fb_rf_error e;
	CHECK_EQ(build("{\"Destination\":\"http://h/\",\"Context\":\"a\"}", FB_RF_SUB_CREATE, NULL, &s, &e), 0);
	CHECK_EQ(fb_rf_sub_set_id(&s, "3"), 0);
	CHECK_EQ(build("{\"Destination\":\"http://x/\"}", FB_RF_SUB_PATCH, &s, &p2, &e), FB_EMALFORMED);
	CHECK_STR(e.key, "PropertyNotWritable");
	CHECK_EQ(build("{\"RegistryPrefixes\":[\"Fabric\"]}", FB_RF_SUB_PATCH, &s, &p2, &e), FB_EMALFORMED);
	CHECK_STR(e.key, "PropertyNotWritable");
	CHECK_EQ(build("{\"Status\":{\"Health\":\"OK\"}}", FB_RF_SUB_PATCH, &s, &p2, &e), FB_EMALFORMED);
	CHECK_STR(e.key, "PropertyNotWritable");
	CHECK_EQ(build("{\"Context\":\"b\",\"Status\":{\"State\":\"Disabled\"},\"DeliveryRetryPolicy\":"
		       "\"TerminateAfterRetries\"}",
		       FB_RF_SUB_PATCH, &s, &p2, &e),
		 0);
	CHECK_STR(p2.id, "3");
	CHECK_STR(p2.context, "b");
	CHECK_STR(p2.destination, "http://h/");
	CHECK_EQ(p2.enabled, 0);
	CHECK_EQ(p2.retry_policy, FB_RF_RETRY_TERMINATE);
	CHECK_STR(s.context, "a"); /* the old one is untouched */
	fb_rf_sub_free(&p2);
	fb_rf_sub_free(&s);
}

static struct fb_rf_sub *sub_of(const char *body, struct fb_rf_sub *s)
{
	struct fb_rf_error e;
	return build(body, FB_RF_SUB_CREATE, NULL, s, &e) ? NULL : s;
}

static int matches(const struct fb_rf_sub *s, const char *id, unsigned sev, const char *origin)
{
	struct fb_rf_facts f;
	fb_rf_facts_init(&f, id, sev, "Alert", origin);
	return fb_rf_match(&s->match, &f);
}

static void matcher(void)
{
	static const char *SW1 = "/redfish/v1/Fabrics/IB/Switches/sw1";
	static const char *SW1P = "/redfish/v1/Fabrics/IB/Switches/sw1/Ports/3";
	static const char *SW10P = "/redfish/v1/Fabrics/IB/Switches/sw10/Ports/3";
	struct fb_rf_sub a, b, c, d, x;
	CHECK(sub_of("{\"Destination\":\"http://h/\",\"RegistryPrefixes\":[\"Fabric\"]}", &a));
	CHECK(matches(&a, "Fabric.1.0.PortFailed", FB_SEV_CRITICAL, SW1P));
	CHECK(!matches(&a, "FabricX.1.0.PortFailed", FB_SEV_CRITICAL, SW1P));
	CHECK(!matches(&a, "ResourceEvent.1.4.ResourceChanged", FB_SEV_OK, SW1P));
	CHECK(sub_of("{\"Destination\":\"http://h/\",\"MessageIds\":[\"Fabric.1.0.PortFailed\","
		     "\"NetworkDevice.LinkFlapDetected\"]}", &b));
	CHECK(matches(&b, "Fabric.1.0.PortFailed", FB_SEV_OK, ""));
	CHECK(!matches(&b, "Fabric.1.0.PortFailedX", FB_SEV_OK, ""));
	CHECK(matches(&b, "NetworkDevice.1.1.LinkFlapDetected", FB_SEV_OK, ""));
	CHECK(!matches(&b, "Fabric.1.0.PortOK", FB_SEV_OK, ""));
	CHECK(sub_of("{\"Destination\":\"http://h/\",\"OriginResources\":[{\"@odata.id\":"
		     "\"/redfish/v1/Fabrics/IB/Switches/sw1\"}],\"SubordinateResources\":true,"
		     "\"Severities\":[\"Critical\"]}", &c));
	CHECK(matches(&c, "Fabric.1.0.PortFailed", FB_SEV_CRITICAL, SW1));
	CHECK(matches(&c, "Fabric.1.0.PortFailed", FB_SEV_CRITICAL, SW1P));
	CHECK(!matches(&c, "Fabric.1.0.PortFailed", FB_SEV_CRITICAL, SW10P));
	CHECK(!matches(&c, "Fabric.1.0.PortFailed", FB_SEV_WARNING, SW1P));
	CHECK(sub_of("{\"Destination\":\"http://h/\",\"OriginResources\":[{\"@odata.id\":"
		     "\"/redfish/v1/Fabrics/IB/Switches/sw1\"}]}", &d));
	CHECK(matches(&d, "Fabric.1.0.PortFailed", FB_SEV_OK, SW1)); /* no subordinates: exact */
	CHECK(!matches(&d, "Fabric.1.0.PortFailed", FB_SEV_OK, SW1P));
	fb_rf_sub_free(&d);
	CHECK(sub_of("{\"Destination\":\"http://h/\",\"ResourceTypes\":[\"Port\"]}", &d));
	CHECK(matches(&d, "Fabric.1.0.PortFailed", FB_SEV_OK, SW1P));
	CHECK(!matches(&d, "Fabric.1.0.SwitchFailed", FB_SEV_OK, SW1));
	CHECK(sub_of("{\"Destination\":\"http://h/\",\"ExcludeRegistryPrefixes\":[\"ResourceEvent\"],"
		     "\"ExcludeMessageIds\":[\"Fabric.1.0.PortOK\"]}", &x));
	CHECK(matches(&x, "Fabric.1.0.PortFailed", FB_SEV_OK, ""));
	CHECK(!matches(&x, "Fabric.1.0.PortOK", FB_SEV_OK, ""));
	CHECK(!matches(&x, "ResourceEvent.1.4.ResourceChanged", FB_SEV_OK, ""));
	struct fb_rf_facts f;
	fb_rf_facts_init(&f, "Fabric.1.0.PortFailed", FB_SEV_OK, "Alert", "/redfish/v1/Systems/n1");
	CHECK_STR(f.resource_type, "ComputerSystem");
	CHECK_EQ(f.prefix_len, 6);
	fb_rf_sub_free(&a);
	fb_rf_sub_free(&b);
	fb_rf_sub_free(&c);
	fb_rf_sub_free(&d);
	fb_rf_sub_free(&x);
}

static void store_round_trip(void)
{
	struct fb_rf_store st, back;
	fb_rf_store_init(&st, NULL);
	fb_rf_store_init(&back, NULL);
	struct fb_rf_sub s;
	CHECK(sub_of("{\"Destination\":\"http://h/\",\"HttpHeaders\":[{\"A\":\"1\"}],\"MessageIds\":"
		     "[\"Fabric.1.0.PortOK\"]}", &s));
	CHECK_EQ(fb_rf_store_add(&st, &s, NULL, NULL), 0);
	CHECK(sub_of("{\"Destination\":\"http://h2/\",\"Context\":\"c\"}", &s));
	CHECK_EQ(fb_rf_store_add(&st, &s, "SunfishServer", NULL), 0);
	CHECK(sub_of("{\"Destination\":\"http://h3/\"}", &s));
	CHECK_EQ(fb_rf_store_add(&st, &s, "SunfishServer", NULL), -EEXIST);
	fb_rf_sub_free(&s);
	CHECK(sub_of("{\"Destination\":\"http://h3/\"}", &s));
	CHECK_EQ(fb_rf_store_add(&st, &s, "bad id", NULL), -EINVAL);
	CHECK_EQ(fb_rf_store_add(&st, &s, NULL, NULL), 0);
	CHECK_STR(st.v[2]->id, "2");
	CHECK_EQ(fb_rf_sub_set_enabled(st.v[2], 0), 0);
	CHECK_EQ(fb_rf_store_remove(&st, "1"), 0);
	struct fb_buf b = FB_BUF_INIT;
	CHECK_EQ(fb_rf_store_serialize(&st, &b), 0);
	char err[256];
	CHECK_EQ(fb_rf_store_parse(&back, b.data, b.len, err, sizeof(err)), 0);
	CHECK_EQ(back.n, 2);
	CHECK_EQ(back.next_id, 3); /* "1" is never handed out again */
	CHECK(fb_rf_store_find(&back, "SunfishServer"));
	CHECK_STR(fb_rf_store_find(&back, "SunfishServer")->context, "c");
	CHECK_EQ(fb_rf_store_find(&back, "2")->enabled, 0);
	/* Every byte matters: a flipped byte or a cut is refused whole. */
	b.data[b.len - 3] ^= 1;
	CHECK_EQ(fb_rf_store_parse(&back, b.data, b.len, err, sizeof(err)), FB_ECORRUPT);
	CHECK(strstr(err, "checksum"));
	CHECK_EQ(back.n, 0);
	b.data[b.len - 3] ^= 1;
	CHECK_EQ(fb_rf_store_parse(&back, b.data, b.len - 1, err, sizeof(err)), FB_ECORRUPT);
	/* A member no POST could have made is refused. */
	const char *body = "{\"Members\":[{\"Destination\":\"ftp://x/\",\"Id\":\"1\"}],\"NextId\":2}";
	struct fb_buf f = FB_BUF_INIT;
	fb_buf_printf(&f, FB_RF_STORE_MAGIC " %zu %08x\n%s", strlen(body),
		      (unsigned)fb_crc32c(0, body, strlen(body)), body);
	CHECK_EQ(fb_rf_store_parse(&back, f.data, f.len, err, sizeof(err)), FB_ECORRUPT);
	CHECK(strstr(err, "member 0"));
	fb_buf_free(&f);
	fb_buf_free(&b);
	fb_rf_store_free(&st);
	fb_rf_store_free(&back);
}

static void cursors_file(void)
{
	const char *dir = fbt_dir();
	struct fb_push_cursor in[2] = { { "1", 42 }, { "SunfishServer", 18446744073709551615ull } };
	CHECK_EQ(fb_push_cursors_write(dir, 0xabcull, in, 2), 0);
	struct fb_push_cursor *out;
	size_t n;
	const char *why;
	CHECK_EQ(fb_push_cursors_read(dir, 0xabcull, &out, &n, &why), 0);
	CHECK_EQ(n, 2);
	CHECK_STR(out[1].id, "SunfishServer");
	CHECK(out[1].cursor == 18446744073709551615ull);
	free(out);
	CHECK_EQ(fb_push_cursors_read(dir, 0xabdull, &out, &n, &why), FB_ECORRUPT);
	CHECK(strstr(why, "epoch"));
	char path[128];
	snprintf(path, sizeof(path), "%s/" FB_PUSH_CURSOR_NAME, dir);
	remove(path);
	CHECK_EQ(fb_push_cursors_read(dir, 0xabcull, &out, &n, &why), -ENOENT);
}

static void retry_policies(void)
{
	struct fb_push_retry_conf c = { 2, 1000, 8000 };
	struct fb_push_retry r = { 0 };
	/* TerminateAfterRetries: the first try and 2 retries fail -> delete. */
	CHECK(fb_push_retry_due(&r, 0));
	CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_TERMINATE, &c, 100), FB_PUSH_RETRY);
	CHECK(!fb_push_retry_due(&r, 1099));
	CHECK(fb_push_retry_due(&r, 1100));
	CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_TERMINATE, &c, 1100), FB_PUSH_RETRY);
	CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_TERMINATE, &c, 2100), FB_PUSH_TERMINATE);
	/* SuspendRetries: the same count, another verdict; a success resets it. */
	r = (struct fb_push_retry){ 0 };
	CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_SUSPEND, &c, 0), FB_PUSH_RETRY);
	fb_push_retry_ok(&r);
	CHECK(fb_push_retry_due(&r, 0));
	CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_SUSPEND, &c, 0), FB_PUSH_RETRY);
	CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_SUSPEND, &c, 1000), FB_PUSH_RETRY);
	CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_SUSPEND, &c, 2000), FB_PUSH_SUSPEND);
	/* RetryForever: the interval, for ever. */
	r = (struct fb_push_retry){ 0 };
	for (int i = 0; i < 100; i++)
		CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_FOREVER, &c, (uint64_t)i * 1000), FB_PUSH_RETRY);
	CHECK_EQ(r.next_ms, 99000 + 1000);
	/* WithBackoff: 1, 2, 4, 8, 8 s. */
	r = (struct fb_push_retry){ 0 };
	uint64_t want[] = { 1000, 2000, 4000, 8000, 8000 };
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_BACKOFF, &c, 0), FB_PUSH_RETRY);
		CHECK_EQ(r.next_ms, want[i]);
	}
	/* DeliveryRetryAttempts=0: the first failure decides. */
	struct fb_push_retry_conf z = { 0, 1000, 8000 };
	r = (struct fb_push_retry){ 0 };
	CHECK_EQ(fb_push_retry_failed(&r, FB_RF_RETRY_TERMINATE, &z, 0), FB_PUSH_TERMINATE);
}

static int closed_calls;
static char closed_id[FB_RF_LIVE_ID_MAX];
static void on_close(void *arg, const char *id)
{
	(void)arg;
	closed_calls++;
	snprintf(closed_id, sizeof(closed_id), "%s", id);
}

static void live_registry(void)
{
	struct fb_rf_live *r = fb_rf_live_new();
	CHECK(r);
	char a[FB_RF_LIVE_ID_MAX], b[FB_RF_LIVE_ID_MAX];
	struct fb_rf_live_entry e = { "redfish-sse://127.0.0.1:5000", "sse-ctx", "MessageId eq 'x'",
				      on_close, NULL };
	CHECK_EQ(fb_rf_live_add(r, &e, a), 0);
	CHECK_EQ(fb_rf_live_add(r, &e, b), 0);
	CHECK(strcmp(a, b) != 0);
	struct fb_buf out = FB_BUF_INIT;
	CHECK_EQ(fb_rf_live_members(r, 1, &out), 2);
	CHECK_EQ(fb_rf_live_member_json(r, a, &out), 0);
	fb_buf_put_u8(&out, 0);
	CHECK(strstr((char *)out.data, "redfish-sse://127.0.0.1:5000"));
	CHECK(strstr((char *)out.data, "\"SubscriptionType\":\"SSE\""));
	fb_buf_free(&out);
	fb_rf_live_remove(r, b); /* the stream ended: no callback */
	CHECK_EQ(closed_calls, 0);
	CHECK_EQ(fb_rf_live_close(r, a), 0); /* DELETE: the callback closes it */
	CHECK_EQ(closed_calls, 1);
	CHECK_STR(closed_id, a);
	CHECK_EQ(fb_rf_live_close(r, a), -ENOENT);
	CHECK(!fb_rf_live_has(r, a));
	fb_rf_live_free(r);
}

int main(void)
{
	RUN(create_full);
	RUN(create_refusals);
	RUN(patch_rules);
	RUN(matcher);
	RUN(store_round_trip);
	RUN(cursors_file);
	RUN(retry_policies);
	RUN(live_registry);
	return TEST_DONE();
}

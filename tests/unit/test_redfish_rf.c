/* test_redfish_rf.c - the Redfish framework without lws: path
 * normalization, etags and conditional headers, Base error rendering,
 * route matching and the table's shape, body checks, the UUID file, the
 * loop hand-off (a real event loop and thread), and the tree built from a
 * fabric map (what a GET finds at the OriginOfCondition paths). The HTTP
 * side is tests/integration/test_redfish_tree.py. */
#include "fb_test.h"
#include "fb_test_fabric.h"

#include "fabric_map.h"
#include "fb_err.h"
#include "fb_redfish.h"
#include "inventory.h"
#include "loopq.h"
#include "rf_body.h"
#include "rf_error.h"
#include "rf_etag.h"
#include "rf_req.h"
#include "rf_route.h"
#include "rf_service.h"
#include "rf_tree.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The reply body as a C string (fb_buf holds no NUL). */
static const char *text(struct fb_rf_reply *rep)
{
	fb_buf_put(&rep->body, "", 1);
	rep->body.len--;
	return (const char *)rep->body.data;
}

static int norm(const char *in, char *out, size_t sz)
{
	return fb_rf_path_normalize(in, strlen(in), out, sz);
}

static void path_normalization(void)
{
	char p[64];
	CHECK_EQ(norm("//redfish/v1/Fabrics/IB", p, sizeof(p)), 22);
	CHECK_STR(p, "/redfish/v1/Fabrics/IB");
	CHECK(norm("/redfish/v1/", p, sizeof(p)) > 0);
	CHECK_STR(p, "/redfish/v1");
	CHECK(norm("///redfish//v1///Systems/", p, sizeof(p)) > 0);
	CHECK_STR(p, "/redfish/v1/Systems");
	CHECK_EQ(norm("/", p, sizeof(p)), 1);
	CHECK_STR(p, "/");
	CHECK_EQ(norm("//", p, sizeof(p)), 1);
	CHECK_EQ(norm("redfish/v1", p, sizeof(p)), FB_EMALFORMED);
	CHECK_EQ(norm("", p, sizeof(p)), FB_EMALFORMED);
	CHECK_EQ(norm("/redfish/../etc", p, sizeof(p)), FB_EMALFORMED);
	CHECK_EQ(norm("/redfish/./v1", p, sizeof(p)), FB_EMALFORMED);
	CHECK_EQ(norm("/a\nb", p, sizeof(p)), FB_EMALFORMED);
	CHECK(norm("/redfish/v1/..x", p, sizeof(p)) > 0); /* only whole ".." segments */
	CHECK_EQ(norm("/redfish/v1/Fabrics/IB", p, 12), FB_ETOOBIG);
	CHECK_EQ(norm("/redfish/v1/Fabrics/IB", p, 22), FB_ETOOBIG); /* no room for the NUL */
	CHECK_EQ(norm("/redfish/v1/Fabrics/IB", p, 23), 22);
}

static void etags_and_conditions(void)
{
	char a[FB_RF_ETAG_MAX], b[FB_RF_ETAG_MAX];
	fb_rf_etag("{\"x\":1}", 7, a);
	fb_rf_etag("{\"x\":1}", 7, b);
	CHECK_STR(a, b);
	CHECK(strncmp(a, "W/\"", 3) == 0 && strlen(a) == 20);
	fb_rf_etag("{\"x\":2}", 7, b);
	CHECK(strcmp(a, b) != 0);
	CHECK(fb_rf_etag_listed(a, a));
	char strong[32];
	snprintf(strong, sizeof(strong), "%s", a + 2); /* "..." without W/ */
	CHECK(fb_rf_etag_listed(strong, a));
	char list[96];
	snprintf(list, sizeof(list), "%s , %s", b, a);
	CHECK(fb_rf_etag_listed(list, a));
	CHECK(fb_rf_etag_listed(" * ", a));
	CHECK(!fb_rf_etag_listed(b, a));
	CHECK(!fb_rf_etag_listed(NULL, a));
	CHECK(!fb_rf_etag_listed("", a));
	CHECK(!fb_rf_etag_listed("W/\"\"", a));
	/* If-Match on a write: 412 unless it names the current tag. */
	struct fb_rf_req req = { 0 };
	struct fb_rf_reply rep = { 0 };
	CHECK_EQ(fb_rf_reply_if_match(&rep, &req, a), 1);
	CHECK_EQ(fb_rf_req_set_header(&req, FB_RF_H_IF_MATCH, b), 0);
	CHECK_EQ(fb_rf_reply_if_match(&rep, &req, a), 0);
	CHECK_EQ(rep.status, 412);
	CHECK(strstr(text(&rep), "Base.1.22.PreconditionFailed"));
	fb_rf_reply_free(&rep);
	/* If-None-Match on a read: 304 without a body. */
	CHECK_EQ(fb_rf_req_set_header(&req, FB_RF_H_IF_NONE_MATCH, a), 0);
	CHECK_EQ(fb_rf_reply_bytes(&rep, &req, "{}", 2, a, "Port"), 0);
	CHECK_EQ(rep.status, 304);
	CHECK(rep.ctype == NULL);
	fb_rf_reply_free(&rep);
	fb_rf_req_free(&req);
}

static void resource_reply_has_its_etag(void)
{
	struct fb_rf_req req = { .method = FB_RF_GET };
	struct fb_rf_reply rep = { 0 };
	json_t *o = json_pack("{s:s,s:s}", "@odata.id", "/redfish/v1/X", "Id", "X");
	CHECK_EQ(fb_rf_reply_resource(&rep, &req, o, "Port"), 0);
	CHECK_EQ(rep.status, 200);
	json_t *back = json_loadb(text(&rep), rep.body.len, 0, NULL);
	CHECK(back);
	CHECK_STR(json_string_value(json_object_get(back, "@odata.etag")), rep.etag);
	/* the tag is over the document without @odata.etag */
	char t[FB_RF_ETAG_MAX];
	const char *plain = "{\"@odata.id\":\"/redfish/v1/X\",\"Id\":\"X\"}";
	fb_rf_etag(plain, strlen(plain), t);
	CHECK_STR(rep.etag, t);
	CHECK_STR(rep.hname[0], "Link");
	CHECK_STR(rep.hval[0], "</redfish/v1/JsonSchemas/Port.json>; rel=describedby");
	json_decref(back);
	json_decref(o);
	fb_rf_reply_free(&rep);
}

static void errors_render_base_messages(void)
{
	struct fb_rf_reply rep = { 0 };
	const char *args[] = { "Port", "/redfish/v1/x" };
	fb_rf_reply_error(&rep, FB_RF_RESOURCE_NOT_FOUND, args, 2);
	CHECK_EQ(rep.status, 404);
	json_t *d = json_loadb(text(&rep), rep.body.len, 0, NULL);
	json_t *e = json_object_get(d, "error");
	CHECK_STR(json_string_value(json_object_get(e, "code")), "Base.1.22.ResourceNotFound");
	CHECK_STR(json_string_value(json_object_get(e, "message")),
		  "The requested resource of type Port named '/redfish/v1/x' was not found.");
	json_t *m = json_array_get(json_object_get(e, "@Message.ExtendedInfo"), 0);
	CHECK_STR(json_string_value(json_object_get(m, "@odata.type")), "#Message.v1_3_0.Message");
	CHECK_STR(json_string_value(json_object_get(m, "MessageSeverity")), "Critical");
	CHECK_EQ(json_array_size(json_object_get(m, "MessageArgs")), 2);
	CHECK(json_string_value(json_object_get(m, "Resolution")));
	json_decref(d);
	fb_rf_reply_free(&rep);
	/* 401 carries WWW-Authenticate; every message id is in Base 1.22 */
	fb_rf_reply_error(&rep, FB_RF_NO_VALID_SESSION, NULL, 0);
	CHECK_EQ(rep.status, 401);
	CHECK_STR(rep.hname[0], "WWW-Authenticate");
	fb_rf_reply_free(&rep);
	char path[512];
	snprintf(path, sizeof(path), "%s/proto/redfish/registries/Base.1.22.1.json",
		 getenv("FB_SRC") ? getenv("FB_SRC") : "../..");
	json_t *base = json_load_file(path, 0, NULL);
	CHECK(base);
	for (int i = 0; i < FB_RF_MSG_COUNT; i++) {
		json_t *msg = json_object_get(json_object_get(base, "Messages"), fb_rf_msg_id(i));
		if (!msg)
			FB_TEST_FAIL_("  %s is not in Base 1.22\n", fb_rf_msg_id(i));
		json_t *one = fb_rf_message(i, NULL, 0);
		CHECK_STR(json_string_value(json_object_get(one, "MessageSeverity")),
			  json_string_value(json_object_get(msg, "MessageSeverity")));
		CHECK_STR(json_string_value(json_object_get(one, "Resolution")),
			  json_string_value(json_object_get(msg, "Resolution")));
		if (!json_object_get(msg, "NumberOfArgs") ||
		    json_integer_value(json_object_get(msg, "NumberOfArgs")) == 0)
			CHECK_STR(json_string_value(json_object_get(one, "Message")),
				  json_string_value(json_object_get(msg, "Message")));
		json_decref(one);
	}
	json_decref(base);
	/* several messages in one error */
	json_t *doc = NULL;
	const char *p1[] = { "Foo" }, *p2[] = { "Id" };
	CHECK_EQ(fb_rf_error_add(&doc, FB_RF_PROPERTY_UNKNOWN, p1, 1), 0);
	CHECK_EQ(fb_rf_error_add(&doc, FB_RF_PROPERTY_NOT_WRITABLE, p2, 1), 0);
	CHECK_EQ(json_array_size(json_object_get(json_object_get(doc, "error"), "@Message.ExtendedInfo")), 2);
	json_decref(doc);
}

static void routes_match_and_declare(void)
{
	struct fb_rf_ctx c;
	CHECK(fb_rf_route_match("/redfish/v1/Fabrics/{}/Switches/{}", "/redfish/v1/Fabrics/IB/Switches/leaf1", &c));
	CHECK_EQ(c.n_arg, 2);
	CHECK_STR(c.arg[0], "IB");
	CHECK_STR(c.arg[1], "leaf1");
	CHECK(!fb_rf_route_match("/redfish/v1/Fabrics/{}", "/redfish/v1/Fabrics/IB/Switches", &c));
	CHECK(!fb_rf_route_match("/redfish/v1/Fabrics/{}", "/redfish/v1/Fabrics", &c));
	CHECK(fb_rf_route_match("/redfish/v1/EventService/**", "/redfish/v1/EventService", &c));
	CHECK_STR(c.rest, "");
	CHECK(fb_rf_route_match("/redfish/v1/EventService/**", "/redfish/v1/EventService/a/b", &c));
	CHECK_STR(c.rest, "a/b");
	CHECK(!fb_rf_route_match("/redfish/v1/EventService/**", "/redfish/v1/EventServiceX", &c));
	/* the table: the service root and $metadata are public, the rest needs a login */
	const struct fb_rf_route *r = fb_rf_route_find(fb_rf_routes, "/redfish/v1", &c);
	CHECK(r && r->op[FB_RF_GET].priv == FB_RF_PRIV_NONE);
	r = fb_rf_route_find(fb_rf_routes, "/redfish/v1/$metadata", &c);
	CHECK(r && r->op[FB_RF_GET].priv == FB_RF_PRIV_NONE);
	r = fb_rf_route_find(fb_rf_routes, "/redfish/v1/Fabrics/IB", &c);
	CHECK(r && r->op[FB_RF_GET].priv == FB_RF_PRIV_LOGIN && r->exists);
	CHECK_EQ(fb_rf_route_allow(r), FB_RF_ALLOW(FB_RF_GET) | FB_RF_ALLOW(FB_RF_HEAD));
	r = fb_rf_route_find(fb_rf_routes, "/redfish/v1/EventService/Subscriptions/7", &c);
	CHECK(r && r->op[FB_RF_PATCH].priv == FB_RF_PRIV_CONFIGURE_COMPONENTS);
	CHECK_STR(r->owner, "rf-push");
	r = fb_rf_route_find(fb_rf_routes, "/redfish/v1/EventService/SSE", &c);
	CHECK(r && strcmp(r->owner, "rf-sse") == 0);
	r = fb_rf_route_find(fb_rf_routes, "/redfish/v1/SessionService/Sessions", &c);
	CHECK(r && r->op[FB_RF_POST].priv == FB_RF_PRIV_NONE);
	/* every route with a write declares a privilege above Login */
	for (r = fb_rf_routes; r->pattern; r++)
		for (int m = FB_RF_PATCH; m < FB_RF_METHODS; m++)
			if (r->op[m].fn && r->op[m].priv < FB_RF_PRIV_LOGIN)
				FB_TEST_FAIL_("  %s %s is public\n", fb_rf_method_name(m), r->pattern);
}

static void body_checks_list_every_problem(void)
{
	static const struct fb_rf_prop props[] = {
		{ "Destination", FB_RF_T_STRING, FB_RF_P_REQUIRED },
		{ "Context", FB_RF_T_STRING | FB_RF_T_NULL, 0 },
		{ "Id", FB_RF_T_STRING, FB_RF_P_READONLY },
		{ NULL, 0, 0 },
	};
	struct fb_rf_req req = { 0 };
	struct fb_rf_reply rep = { 0 };
	json_t *o;
	fb_buf_puts(&req.body, "{\"Context\":");
	CHECK_EQ(fb_rf_body_object(&req, &rep, &o), 0);
	CHECK(!o && rep.status == 400 && strstr(text(&rep), "MalformedJSON"));
	fb_rf_reply_free(&rep);
	fb_buf_reset(&req.body);
	fb_buf_puts(&req.body, "[1]");
	CHECK_EQ(fb_rf_body_object(&req, &rep, &o), 0);
	CHECK(!o && strstr(text(&rep), "UnrecognizedRequestBody"));
	fb_rf_reply_free(&rep);
	fb_buf_reset(&req.body);
	fb_buf_puts(&req.body, "{\"Context\":5,\"Id\":\"x\",\"Bogus\":1,\"@odata.id\":\"/x\"}");
	CHECK_EQ(fb_rf_body_object(&req, &rep, &o), 0);
	CHECK(o);
	CHECK_EQ(fb_rf_body_check(o, props, 1, &rep), 0);
	CHECK_EQ(rep.status, 400);
	const char *b = text(&rep);
	CHECK(strstr(b, "PropertyValueTypeError") && strstr(b, "PropertyNotWritable") &&
	      strstr(b, "PropertyUnknown") && strstr(b, "CreateFailedMissingReqProperties"));
	CHECK(!strstr(b, "@odata.id"));
	json_decref(o);
	fb_rf_reply_free(&rep);
	o = json_pack("{s:s,s:n}", "Destination", "http://x", "Context");
	CHECK_EQ(fb_rf_body_check(o, props, 1, &rep), 1);
	json_decref(o);
	fb_rf_req_free(&req);
}

static void uuid_is_kept(void)
{
	char a[37], b[37];
	CHECK_EQ(fb_rf_uuid_load(fbt_dir(), a), 0);
	CHECK_EQ(strlen(a), 36);
	CHECK(a[14] == '4');
	CHECK_EQ(fb_rf_uuid_load(fbt_dir(), b), 0);
	CHECK_STR(a, b);
}

/* ---- the loop hand-off ---- */

struct add_call {
	struct fb_loop_call c;
	pthread_t ran_on;
	int *loop_state;
};

static void add_run(struct fb_loop_call *c)
{
	struct add_call *a = (struct add_call *)c;
	a->ran_on = pthread_self();
	(*a->loop_state)++;
}

static void add_free(struct fb_loop_call *c)
{
	free(c);
}

struct loop_thread {
	struct event_base *base;
	int woken;
	pthread_mutex_t mu;
};

static void *loop_main(void *arg)
{
	struct loop_thread *t = arg;
	event_base_loop(t->base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

static void wake(void *arg)
{
	struct loop_thread *t = arg;
	pthread_mutex_lock(&t->mu);
	t->woken++;
	pthread_mutex_unlock(&t->mu);
}

static void loop_hand_off_runs_on_the_loop(void)
{
	evthread_use_pthreads();
	struct loop_thread t = { .base = event_base_new() };
	pthread_mutex_init(&t.mu, NULL);
	event_base_priority_init(t.base, 2);
	struct fb_loopq *q = fb_loopq_new(t.base, 2);
	CHECK(q);
	fb_loopq_set_waker(q, wake, &t);
	int state = 0;
	pthread_t lt;
	pthread_create(&lt, NULL, loop_main, &t);
	struct add_call *a[3];
	for (int i = 0; i < 3; i++) {
		a[i] = calloc(1, sizeof(*a[i]));
		a[i]->c = (struct fb_loop_call){ .run = add_run, .free = add_free, .token = 10 + i };
		a[i]->loop_state = &state;
	}
	CHECK_EQ(fb_loopq_submit(q, &a[0]->c), 0);
	CHECK_EQ(fb_loopq_submit(q, &a[1]->c), 0);
	CHECK_EQ(fb_loopq_submit(q, &a[2]->c), FB_EFULL); /* 2 in flight at most */
	free(a[2]);
	struct fb_loop_call *done[2] = { 0 };
	for (int i = 0, n = 0; n < 2 && i < 2000; i++) {
		struct fb_loop_call *c = fb_loopq_take_done(q);
		if (c)
			done[n++] = c;
		else
			usleep(1000);
	}
	CHECK(done[0] && done[1]);
	CHECK_EQ(done[0]->token, 10);
	CHECK_EQ(done[1]->token, 11);
	CHECK(pthread_equal(((struct add_call *)done[0])->ran_on, lt));
	CHECK_EQ(state, 2);
	pthread_mutex_lock(&t.mu);
	CHECK(t.woken >= 1);
	pthread_mutex_unlock(&t.mu);
	done[0]->free(done[0]);
	done[1]->free(done[1]);
	event_base_loopbreak(t.base);
	pthread_join(lt, NULL);
	fb_loopq_free(q);
	event_base_free(t.base);
	pthread_mutex_destroy(&t.mu);
}

/* ---- the tree from a fabric map ---- */

static char *body_at(struct fb_rf_service *svc, const char *path)
{
	return fb_rf_tree_body(svc->tree, path);
}

/* An Ethernet switch port as the SNMP agent reports it: no GUID, an ifIndex. */
static struct fb_event eth_event(uint8_t kind, const char *fabric, const char *sw, uint32_t ifindex)
{
	struct fb_event ev = sw_event(kind, 0, sw, 0);
	ev.tech = FB_TECH_ETH;
	ev.link_class = FB_LINK_HOST;
	ev.subj.ifindex = ifindex;
	snprintf(ev.subj.fabric, sizeof(ev.subj.fabric), "%s", fabric);
	return ev;
}

/* 1 if the resource at path exists and its body contains needle. */
static int has(struct fb_rf_service *svc, const char *path, const char *needle)
{
	char *b = body_at(svc, path);
	int found = b && strstr(b, needle);
	free(b);
	return found;
}

static void tree_serves_the_origins_events_name(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	/* the events name their fabric ("ibsim"); the broker's own is "IB" */
	struct fb_event evs[] = {
		host_event(FB_KIND_TOPOLOGY, LEAF1, "leaf1", 3, 3, 4, 5),
		inventory_event(3),
		host_event(FB_KIND_LINK_DOWN, LEAF1, "leaf1", 3, 3, 1, 2),
		eth_event(FB_KIND_LINK_DOWN, "dc1", "tor 7", 12), /* SNMP: no GUID */
		eth_event(FB_KIND_TOPOLOGY, "", "tor8", 3), /* no fabric: FabricName */
		eth_event(FB_KIND_COUNTER_THRESHOLD, "", "tor8", 3),
	};
	fb_event_add_counter(&evs[5], FB_CTR_IF_IN_ERRORS, 9);
	fb_event_add_counter(&evs[2], FB_CTR_SYMBOL_ERROR, 7);
	fb_event_add_counter(&evs[2], FB_CTR_RCV_ERRORS, 3);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		fb_inventory_learn(inv, &evs[i]);
		fb_fabric_map_learn(m, &evs[i]);
	}
	CHECK_EQ(fb_fabric_map_refresh(m, 3), 1);
	struct fb_rf_service_opts o = { .map = m, .state_dir = fbt_dir(), .fabric_name = "IB" };
	struct fb_rf_service *svc = NULL;
	CHECK_EQ(fb_rf_service_new(&o, &svc), 0);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		fb_rf_tree_learn(svc->tree, &evs[i]);
	CHECK_EQ(fb_rf_tree_rebuild(svc->tree, 3), 1);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		char origin[FB_REDFISH_ORIGIN_MAX];
		CHECK(fb_redfish_origin(&evs[i], "IB", origin, sizeof(origin)) > 0);
		char *b = body_at(svc, origin);
		if (!b)
			FB_TEST_FAIL_("  no resource at %s\n", origin);
		free(b);
	}
	const char *leaf1_3 = "/redfish/v1/Fabrics/ibsim/Switches/leaf1/Ports/3";
	CHECK(has(svc, leaf1_3, "\"LinkStatus\":\"LinkDown\""));
	CHECK(has(svc, leaf1_3, "\"AssociatedEndpoints\""));
	/* symbol errors 7 + receive errors 3 */
	CHECK(has(svc, "/redfish/v1/Fabrics/ibsim/Switches/leaf1/Ports/3/Metrics", "\"RXErrors\":10"));
	CHECK(has(svc, "/redfish/v1", svc->uuid));
	char cm[128];
	snprintf(cm, sizeof(cm), "/redfish/v1/AggregationService/ConnectionMethods/%s", svc->cm_id);
	CHECK(has(svc, cm, "\"ConnectionMethodType\":\"Redfish\""));
	CHECK(!body_at(svc, "/redfish/v1/Fabrics/ibsim/Switches/leaf9"));
	/* the broker's own fabric is always there; tor8 (Ethernet) is in it */
	CHECK(has(svc, "/redfish/v1/Fabrics/IB", "\"FabricType\":\"Ethernet\""));
	const char *tor7 = "/redfish/v1/Fabrics/dc1/Switches/tor%207/Ports/12";
	CHECK(has(svc, tor7, "\"@odata.id\":\"/redfish/v1/Fabrics/dc1/Switches/tor%207/Ports/12\""));
	CHECK(has(svc, tor7, "\"LinkNetworkTechnology\":\"Ethernet\""));
	CHECK(has(svc, "/redfish/v1/Fabrics/IB/Switches/tor8/Ports/3/Metrics", "\"RXErrors\":9"));
	/* just rebuilt: the next refresh waits FB_RF_TREE_MIN_MS */
	CHECK_EQ(fb_rf_tree_refresh(svc->tree, 3), 0);
	fb_rf_service_free(svc);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

/* A 10000-node fabric on 250 leaves (40 hosts each): what one rebuild of
 * the tree costs the loop, and that the next one waits 9 times that.
 * Prints the time; asserts only the spacing and the resources' count. */
static void tree_10000_nodes_rebuild_is_spaced_by_its_cost(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	FBT_LEARN_10000_NODES(inv, m);
	CHECK_EQ(fb_fabric_map_refresh(m, 1), 1);
	struct fb_rf_service_opts o = { .map = m, .state_dir = fbt_dir(), .fabric_name = "IB" };
	struct fb_rf_service *svc = NULL;
	CHECK_EQ(fb_rf_service_new(&o, &svc), 0);
	CHECK_EQ(fb_rf_tree_refresh(svc->tree, 1), 1);
	struct fb_rf_tree_stats st;
	fb_rf_tree_get_stats(svc->tree, &st);
	fprintf(stderr, "  10000 nodes, 251 switches: %zu resources (%zu KiB) built in %llu ms\n",
		st.resources, st.bytes / 1024, (unsigned long long)st.last_ms);
	/* per node: system, its NIC collection and NIC, endpoint; per host port: port, metrics */
	CHECK(st.resources > 10000 * 6);
	/* a counter changes: no rebuild before max(500 ms, 9 x the last) */
	struct fb_event ctr = host_event(FB_KIND_COUNTER_THRESHOLD, LEAF1, "leaf0", 2, 1, 4, 5);
	fb_event_add_counter(&ctr, FB_CTR_SYMBOL_ERROR, 1);
	fb_rf_tree_learn(svc->tree, &ctr);
	CHECK_EQ(fb_rf_tree_refresh(svc->tree, 2), 0);
	CHECK_EQ(st.rebuilds, 1);
	fb_rf_service_free(svc);
	/* with the builder thread, the loop only copies: time that */
	CHECK_EQ(fb_rf_service_new(&o, &svc), 0);
	CHECK_EQ(fb_rf_tree_start_builder(svc->tree), 0);
	uint64_t t0 = fb_now_ns();
	CHECK_EQ(fb_rf_tree_refresh(svc->tree, 1), 1);
	uint64_t copy_us = (fb_now_ns() - t0) / 1000;
	for (int i = 0; i < 600; i++) {
		fb_rf_tree_get_stats(svc->tree, &st);
		if (st.rebuilds)
			break;
		usleep(100 * 1000);
	}
	CHECK_EQ(st.rebuilds, 1);
	fprintf(stderr, "  with the builder thread: the loop's part took %llu us\n",
		(unsigned long long)copy_us);
	CHECK(has(svc, "/redfish/v1/Systems/node9999", "\"HostName\":\"node9999\""));
	fb_rf_service_free(svc);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

int main(void)
{
	RUN(path_normalization);
	RUN(etags_and_conditions);
	RUN(resource_reply_has_its_etag);
	RUN(errors_render_base_messages);
	RUN(routes_match_and_declare);
	RUN(body_checks_list_every_problem);
	RUN(uuid_is_kept);
	RUN(loop_hand_off_runs_on_the_loop);
	RUN(tree_serves_the_origins_events_name);
	RUN(tree_10000_nodes_rebuild_is_spaced_by_its_cost);
	return TEST_DONE();
}

/* test_ofmf: the OFMF registration state machine (broker/ofmf/ofmf_reg.c) on
 * an explicit clock, driven with the replies the reference core gives
 * (../shared/ofmf/HANDSHAKE.md), and its state file (ofmf_state.c). */
#include "fb_test.h"

#include "fb_err.h"
#include "ofmf_reg.h"
#include "ofmf_state.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S 1000000000ull
#define BASE "http://127.0.0.1:7412"
#define CM "/redfish/v1/AggregationService/ConnectionMethods/fabricbus-00000000000000aa"
#define FABRIC "/redfish/v1/Fabrics/IB"
#define SRC(id) FB_OFMF_SOURCES "/" id
#define PORT "/redfish/v1/Fabrics/IB/Switches/0x0008f10400411a08/Ports/3"

static const struct fb_ofmf_reg_opts opts = {
	.base = BASE, .connection_method = CM, .fabric = FABRIC, .check_ns = 10 * S,
	.retry_min_ns = 1 * S, .retry_max_ns = 8 * S, .conflict_ns = 60 * S,
	.context_wait_ns = 5 * S, .queue_max = 8, .refuse_min_ns = 3 * S,
};

/* An AggregationSource as the core stores it. */
static char src_buf[1024];
static const char *source(const char *id, const char *host, const char *cm)
{
	snprintf(src_buf, sizeof(src_buf),
		 "{\"@odata.id\":\"%s/%s\",\"@odata.type\":\"#AggregationSource.v1_2_.AggregationSource\","
		 "\"HostName\":\"%s\",\"Id\":\"%s\",\"Links\":{\"ConnectionMethod\":{\"@odata.id\":\"%s\"},"
		 "\"ResourcesAccessed\":[]}}",
		 FB_OFMF_SOURCES, id, host, id, cm);
	return src_buf;
}

/* Ours, with what the core's crawls reached (a JSON array's inside). */
static char src_acc_buf[2048];
static const char *source_accessed(const char *id, const char *accessed)
{
	snprintf(src_acc_buf, sizeof(src_acc_buf),
		 "{\"HostName\":\"%s\",\"Id\":\"%s\",\"Links\":{\"ConnectionMethod\":{\"@odata.id\":"
		 "\"%s\"},\"ResourcesAccessed\":[%s]}}",
		 BASE, id, CM, accessed);
	return src_acc_buf;
}

static void reply(struct fb_ofmf_reg *r, uint64_t now, int status, const char *body)
{
	fb_ofmf_reg_done(r, now, status, body, body ? strlen(body) : 0);
}

/* The next action must be kind (with path and context when not NULL). */
#define EXPECT(r, now, k, p, c)                                                           \
	do {                                                                              \
		struct fb_ofmf_action a_;                                                 \
		fb_ofmf_reg_next(r, now, &a_);                                            \
		CHECK_EQ(a_.kind, k);                                                     \
		if ((p) != NULL)                                                          \
			CHECK_STR(a_.path, (const char *)(p));                            \
		if ((c) != NULL)                                                          \
			CHECK_STR(a_.context, (const char *)(c));                         \
	} while (0)
#define NOTHING(r, now) EXPECT(r, now, FB_OFMF_NONE, NULL, NULL)
/* SET_CONTEXT with events delivered to the core (LIVE) or held (HELD). */
#define EXPECT_SET(r, now, c, d)                                                          \
	do {                                                                              \
		struct fb_ofmf_action a_;                                                 \
		fb_ofmf_reg_next(r, now, &a_);                                            \
		CHECK_EQ(a_.kind, FB_OFMF_SET_CONTEXT);                                   \
		CHECK_STR(a_.context, (const char *)(c));                                 \
		CHECK_EQ(a_.deliver, d);                                                  \
	} while (0)
#define HELD(r, now, c) EXPECT_SET(r, now, c, 0)
#define LIVE(r, now, c) EXPECT_SET(r, now, c, 1)

/* From a fresh start to registered as ctx (the exchange of HANDSHAKE.md). */
#define REGISTER(r, now, ctx)                                                             \
	do {                                                                              \
		EXPECT(r, now, FB_OFMF_DISCOVER, NULL, NULL);                             \
		NOTHING(r, now); /* one request at a time */                              \
		fb_ofmf_reg_context_patched(r, now, ctx); /* inside our POST */           \
		EXPECT(r, now, FB_OFMF_SAVE, NULL, ctx); /* at once */                    \
		NOTHING(r, now); /* the POST is still pending */                          \
		reply(r, now, 200, "[]");                                                 \
		EXPECT(r, now, FB_OFMF_ANNOUNCE, FABRIC, ctx);                            \
		reply(r, now, 200, "[]");                                                 \
		LIVE(r, now, ctx); /* crawled: events may go */                           \
		/* what did its crawl reach? (nothing listed here) */                     \
		EXPECT(r, now, FB_OFMF_GET_SOURCE, SRC(ctx), NULL);                       \
		reply(r, now, 200, source(ctx, BASE, CM));                                \
		CHECK_EQ(fb_ofmf_reg_state(r), FB_OFMF_ST_REGISTERED);                    \
	} while (0)

static void ofmf_first_registration(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	CHECK(r);
	/* Deliveries to the core wait until it knows us. */
	HELD(r, 0, "");
	REGISTER(r, 0, "uuid-1");
	NOTHING(r, 1 * S);
	CHECK_EQ(fb_ofmf_reg_wake(r), 10 * S); /* the periodic check */
	EXPECT(r, 10 * S, FB_OFMF_GET_SOURCE, SRC("uuid-1"), NULL);
	reply(r, 10 * S, 200, source("uuid-1", BASE, CM));
	NOTHING(r, 10 * S); /* still ours: nothing to do until the next check */
	CHECK_EQ(fb_ofmf_reg_wake(r), 20 * S);
	struct fb_ofmf_reg_stats st;
	fb_ofmf_reg_get_stats(r, &st);
	CHECK_EQ(st.registrations, 1);
	CHECK_EQ(st.announced, 1);
	fb_ofmf_reg_free(r);
}

static void ofmf_patch_after_the_200(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	EXPECT(r, 0, FB_OFMF_DISCOVER, NULL, NULL);
	reply(r, 0, 200, "[]");
	CHECK_EQ(fb_ofmf_reg_state(r), FB_OFMF_ST_AWAIT_CONTEXT);
	NOTHING(r, 1 * S);
	fb_ofmf_reg_context_patched(r, 1 * S, "uuid-2");
	EXPECT(r, 1 * S, FB_OFMF_SAVE, NULL, "uuid-2");
	HELD(r, 1 * S, "uuid-2"); /* events wait for the crawl */
	EXPECT(r, 1 * S, FB_OFMF_ANNOUNCE, FABRIC, "uuid-2");
	fb_ofmf_reg_free(r);

	/* A PATCH that never comes: look for a source of ours on the core. */
	r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	EXPECT(r, 0, FB_OFMF_DISCOVER, NULL, NULL);
	reply(r, 0, 200, "[]");
	CHECK_EQ(fb_ofmf_reg_wake(r), 5 * S);
	NOTHING(r, 4 * S);
	EXPECT(r, 5 * S, FB_OFMF_LIST_SOURCES, FB_OFMF_SOURCES, NULL);
	fb_ofmf_reg_free(r);
}

static void ofmf_409_adopts_our_source(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	EXPECT(r, 0, FB_OFMF_DISCOVER, NULL, NULL);
	reply(r, 0, 409, "[Error] Resource already exists");
	EXPECT(r, 0, FB_OFMF_LIST_SOURCES, FB_OFMF_SOURCES, NULL);
	reply(r, 0, 200,
	      "{\"Members\":[{\"@odata.id\":\"" SRC("other") "\"},{\"@odata.id\":\"" SRC("mine") "\"},"
	      "{\"@odata.id\":\"/elsewhere/x\"}],\"Members@odata.count\":3}");
	EXPECT(r, 0, FB_OFMF_GET_SOURCE, SRC("other"), NULL);
	reply(r, 0, 200, source("other", "http://10.0.0.9:7412", "/redfish/v1/AggregationService/ConnectionMethods/CXL"));
	EXPECT(r, 0, FB_OFMF_GET_SOURCE, SRC("mine"), NULL);
	reply(r, 0, 200, source("mine", BASE, CM));
	EXPECT(r, 0, FB_OFMF_SAVE, NULL, "mine");
	HELD(r, 0, "mine");
	EXPECT(r, 0, FB_OFMF_ANNOUNCE, FABRIC, "mine");
	struct fb_ofmf_reg_stats st;
	fb_ofmf_reg_get_stats(r, &st);
	CHECK_EQ(st.adoptions, 1);
	fb_ofmf_reg_free(r);
}

static void ofmf_409_for_another_agent_is_a_conflict(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	EXPECT(r, 0, FB_OFMF_DISCOVER, NULL, NULL);
	reply(r, 0, 409, NULL);
	EXPECT(r, 0, FB_OFMF_LIST_SOURCES, NULL, NULL);
	reply(r, 0, 200, "{\"Members\":[{\"@odata.id\":\"" SRC("twin") "\"}]}");
	EXPECT(r, 0, FB_OFMF_GET_SOURCE, SRC("twin"), NULL);
	/* Same ConnectionMethod id, another broker's URL. */
	reply(r, 0, 200, source("twin", "http://127.0.0.1:9999", CM));
	CHECK_EQ(fb_ofmf_reg_state(r), FB_OFMF_ST_CONFLICT);
	CHECK(strstr(fb_ofmf_reg_last_error(r), "OfmfConnectionMethodId"));
	CHECK(strstr(fb_ofmf_reg_last_error(r), "http://127.0.0.1:9999"));
	CHECK_EQ(fb_ofmf_reg_context(r)[0], 0);
	NOTHING(r, 59 * S);
	CHECK_EQ(fb_ofmf_reg_wake(r), 60 * S);
	/* Tried again later (a restarted core forgets the other agent too). */
	EXPECT(r, 60 * S, FB_OFMF_DISCOVER, NULL, NULL);
	fb_ofmf_reg_free(r);
}

static void ofmf_core_restart_found_by_the_periodic_check(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	REGISTER(r, 0, "uuid-old");
	EXPECT(r, 10 * S, FB_OFMF_GET_SOURCE, SRC("uuid-old"), NULL);
	reply(r, 10 * S, 404, "[Error] Resource AggregationService/AggregationSources/uuid-old not found.");
	EXPECT(r, 10 * S, FB_OFMF_SAVE, NULL, "");
	HELD(r, 10 * S, "");
	REGISTER(r, 10 * S, "uuid-new");
	struct fb_ofmf_reg_stats st;
	fb_ofmf_reg_get_stats(r, &st);
	CHECK_EQ(st.forgotten, 1);
	CHECK_EQ(st.registrations, 2);
	CHECK_EQ(st.announced, 2); /* the fabric, crawled by each core */
	fb_ofmf_reg_free(r);
}

static void ofmf_core_restart_found_by_an_announce(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	REGISTER(r, 0, "uuid-old");
	fb_ofmf_reg_origin(r, 1 * S, PORT);
	EXPECT(r, 1 * S, FB_OFMF_ANNOUNCE, PORT, "uuid-old");
	/* "Cannot find aggregation source; file does not exist" */
	reply(r, 1 * S, 400, "Cannot find aggregation source");
	EXPECT(r, 1 * S, FB_OFMF_GET_SOURCE, SRC("uuid-old"), NULL);
	reply(r, 1 * S, 404, NULL);
	EXPECT(r, 1 * S, FB_OFMF_SAVE, NULL, "");
	HELD(r, 1 * S, "");
	REGISTER(r, 1 * S, "uuid-new");
	/* The port is still owed to the new core, after its fabric crawl. */
	EXPECT(r, 1 * S, FB_OFMF_ANNOUNCE, PORT, "uuid-new");
	reply(r, 1 * S, 200, "[]");
	NOTHING(r, 1 * S);
	fb_ofmf_reg_free(r);
}

static void ofmf_broker_restart_core_remembers(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, "uuid-saved", 0);
	HELD(r, 0, "uuid-saved"); /* not before the core says so */
	EXPECT(r, 0, FB_OFMF_GET_SOURCE, SRC("uuid-saved"), NULL);
	reply(r, 0, 200, source("uuid-saved", BASE, CM));
	/* No discovery (it would get 409) and nothing to save. */
	EXPECT(r, 0, FB_OFMF_ANNOUNCE, FABRIC, "uuid-saved");
	reply(r, 0, 200, "[]");
	LIVE(r, 0, "uuid-saved");
	EXPECT(r, 0, FB_OFMF_GET_SOURCE, SRC("uuid-saved"), NULL);
	reply(r, 0, 200, source("uuid-saved", BASE, CM));
	NOTHING(r, 0);
	struct fb_ofmf_reg_stats st;
	fb_ofmf_reg_get_stats(r, &st);
	CHECK_EQ(st.resumed, 1);
	CHECK_EQ(st.registrations, 0);
	fb_ofmf_reg_free(r);
}

static void ofmf_broker_restart_core_forgot(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, "uuid-saved", 0);
	HELD(r, 0, "uuid-saved");
	EXPECT(r, 0, FB_OFMF_GET_SOURCE, SRC("uuid-saved"), NULL);
	reply(r, 0, 404, NULL);
	EXPECT(r, 0, FB_OFMF_SAVE, NULL, "");
	HELD(r, 0, "");
	REGISTER(r, 0, "uuid-fresh");
	fb_ofmf_reg_free(r);

	/* A saved Context the core gave to another agent since: not ours. */
	r = fb_ofmf_reg_new(&opts, "uuid-reused", 0);
	HELD(r, 0, "uuid-reused");
	EXPECT(r, 0, FB_OFMF_GET_SOURCE, SRC("uuid-reused"), NULL);
	reply(r, 0, 200, source("uuid-reused", "http://10.1.1.1:80", CM));
	EXPECT(r, 0, FB_OFMF_SAVE, NULL, "");
	HELD(r, 0, "");
	EXPECT(r, 0, FB_OFMF_DISCOVER, NULL, NULL);
	fb_ofmf_reg_free(r);
}

static void ofmf_core_down_backs_off_and_keeps_the_context(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	uint64_t now = 0, waits[] = { 1, 2, 4, 8, 8 };
	for (unsigned i = 0; i < 5; i++) {
		EXPECT(r, now, FB_OFMF_DISCOVER, NULL, NULL);
		reply(r, now, -ECONNREFUSED, NULL);
		CHECK(strstr(fb_ofmf_reg_last_error(r), "no reply"));
		CHECK_EQ(fb_ofmf_reg_wake(r), now + waits[i] * S);
		NOTHING(r, now + waits[i] * S - 1);
		now += waits[i] * S;
	}
	/* 500: the core could not GET our ConnectionMethod; same back-off. */
	EXPECT(r, now, FB_OFMF_DISCOVER, NULL, NULL);
	reply(r, now, 500, NULL);
	CHECK(strstr(fb_ofmf_reg_last_error(r), "500"));
	now += 8 * S;
	REGISTER(r, now, "uuid-1");
	/* Registered, then the core stops answering: the Context is kept. */
	now += 10 * S;
	EXPECT(r, now, FB_OFMF_GET_SOURCE, NULL, NULL);
	reply(r, now, -ECONNREFUSED, NULL);
	CHECK_EQ(fb_ofmf_reg_state(r), FB_OFMF_ST_REGISTERED);
	CHECK_STR(fb_ofmf_reg_context(r), "uuid-1");
	CHECK_EQ(fb_ofmf_reg_wake(r), now + 1 * S);
	EXPECT(r, now + 1 * S, FB_OFMF_GET_SOURCE, NULL, NULL);
	reply(r, now + 1 * S, 200, source("uuid-1", BASE, CM));
	NOTHING(r, now + 1 * S);
	fb_ofmf_reg_free(r);
}

static void ofmf_origins_announced_once_in_order(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	/* Seen before registration: owed, after the fabric. */
	fb_ofmf_reg_origin(r, 0, PORT);
	fb_ofmf_reg_origin(r, 0, PORT);
	HELD(r, 0, "");
	REGISTER(r, 0, "c");
	EXPECT(r, 0, FB_OFMF_ANNOUNCE, PORT, "c");
	reply(r, 0, 200, "[]");
	fb_ofmf_reg_origin(r, 0, PORT);
	fb_ofmf_reg_origin(r, 0, "/redfish/v1/Systems/node001");
	EXPECT(r, 0, FB_OFMF_ANNOUNCE, "/redfish/v1/Systems/node001", "c");
	reply(r, 0, 200, "[]");
	NOTHING(r, 0);
	/* More at once than the queue holds: the fabric is crawled again. */
	char p[64];
	for (unsigned i = 0; i < 20; i++) {
		snprintf(p, sizeof(p), "/redfish/v1/Systems/n%02u", i);
		fb_ofmf_reg_origin(r, 0, p);
	}
	for (unsigned i = 0; i < 8; i++) {
		snprintf(p, sizeof(p), "/redfish/v1/Systems/n%02u", i);
		EXPECT(r, 0, FB_OFMF_ANNOUNCE, p, NULL);
		reply(r, 0, 200, "[]");
	}
	EXPECT(r, 0, FB_OFMF_ANNOUNCE, FABRIC, NULL);
	reply(r, 0, 200, "[]");
	/* Its crawl reached n10 (linked from the fabric), not n19. */
	EXPECT(r, 0, FB_OFMF_GET_SOURCE, SRC("c"), NULL);
	reply(r, 0, 200, source_accessed("c", "{\"@odata.id\":\"" FABRIC "\"},"
					      "{\"@odata.id\":\"/redfish/v1/Systems/n10\"}"));
	NOTHING(r, 0);
	/* The ones turned away are not "known": their next event brings them,
	 * unless the core holds them already. */
	fb_ofmf_reg_origin(r, 0, "/redfish/v1/Systems/n10");
	fb_ofmf_reg_origin(r, 0, "/redfish/v1/Systems/n19");
	EXPECT(r, 0, FB_OFMF_ANNOUNCE, "/redfish/v1/Systems/n19", NULL);
	reply(r, 0, 200, "[]");
	NOTHING(r, 0);
	fb_ofmf_reg_free(r);
}

static void ofmf_what_the_crawl_reached_is_not_announced(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	/* The agents' first events, before the core knows us. */
	fb_ofmf_reg_origin(r, 0, PORT);
	fb_ofmf_reg_origin(r, 0, "/redfish/v1/Systems/node001");
	HELD(r, 0, "");
	EXPECT(r, 0, FB_OFMF_DISCOVER, NULL, NULL);
	fb_ofmf_reg_context_patched(r, 0, "c");
	EXPECT(r, 0, FB_OFMF_SAVE, NULL, "c");
	reply(r, 0, 200, "[]");
	EXPECT(r, 0, FB_OFMF_ANNOUNCE, FABRIC, "c");
	reply(r, 0, 200, "[]");
	LIVE(r, 0, "c");
	EXPECT(r, 0, FB_OFMF_GET_SOURCE, SRC("c"), NULL);
	/* Each ResourceCreated is a crawl: the port came with the fabric's. */
	/* (the reference core lists bare paths, not {"@odata.id": ...}) */
	reply(r, 0, 200, source_accessed("c", "\"" FABRIC "\",\"" PORT "\",\"" PORT "#/Links\""));
	EXPECT(r, 0, FB_OFMF_ANNOUNCE, "/redfish/v1/Systems/node001", "c");
	reply(r, 0, 200, "[]");
	NOTHING(r, 0);
	struct fb_ofmf_reg_stats st;
	fb_ofmf_reg_get_stats(r, &st);
	CHECK_EQ(st.announced, 2);
	fb_ofmf_reg_free(r);
}

static void ofmf_refused_origin_dropped_after_tries(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	REGISTER(r, 0, "c");
	fb_ofmf_reg_origin(r, 0, PORT);
	fb_ofmf_reg_origin(r, 0, "/redfish/v1/Systems/node001");
	uint64_t now = 0, waits[] = { 1, 2 };
	for (unsigned i = 0; i < 3; i++) {
		EXPECT(r, now, FB_OFMF_ANNOUNCE, PORT, NULL);
		/* The reference core closes the connection when its GET of us fails. */
		reply(r, now, -ECONNRESET, NULL);
		EXPECT(r, now, FB_OFMF_GET_SOURCE, SRC("c"), NULL); /* alive? */
		reply(r, now, 200, source("c", BASE, CM));
		if (i < 2) { /* alive: maybe our tree lagged; again, later */
			NOTHING(r, now + waits[i] * S - 1);
			CHECK_EQ(fb_ofmf_reg_wake(r), now + waits[i] * S);
			now += waits[i] * S;
		}
	}
	EXPECT(r, now, FB_OFMF_ANNOUNCE, "/redfish/v1/Systems/node001", NULL);
	struct fb_ofmf_reg_stats st;
	fb_ofmf_reg_get_stats(r, &st);
	CHECK_EQ(st.announce_dropped, 1);
	fb_ofmf_reg_free(r);
}

static void ofmf_new_origin_waits_for_our_tree(void)
{
	struct fb_ofmf_reg_opts o = opts;
	o.announce_delay_ns = 1 * S;
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&o, NULL, 0);
	HELD(r, 0, "");
	REGISTER(r, 0, "c");
	fb_ofmf_reg_origin(r, 2 * S, PORT);
	NOTHING(r, 2 * S); /* the tree is rebuilt every 100 ms: not yet */
	CHECK_EQ(fb_ofmf_reg_wake(r), 3 * S);
	EXPECT(r, 3 * S, FB_OFMF_ANNOUNCE, PORT, "c");
	fb_ofmf_reg_free(r);
}

static void ofmf_failed_delivery_checks_soon(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	REGISTER(r, 0, "c");
	CHECK_EQ(fb_ofmf_reg_wake(r), 10 * S);
	CHECK_EQ(fb_ofmf_reg_delivery_failed(r, 2 * S, 5, PORT, 0), 0); /* the core is down */
	CHECK_EQ(fb_ofmf_reg_wake(r), 3 * S);
	EXPECT(r, 3 * S, FB_OFMF_GET_SOURCE, SRC("c"), NULL);
	fb_ofmf_reg_free(r);
}

/* The reference core closes the connection on an event whose origin it does
 * not hold; with RetryForever that event would hold every later one. */
static void ofmf_refused_event_dropped_after_announce_and_check(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	REGISTER(r, 0, "c");
	/* First refusal: check we are known, and announce its origin now. */
	CHECK_EQ(fb_ofmf_reg_delivery_failed(r, 1 * S, 7, PORT, 1), 0);
	EXPECT(r, 1 * S, FB_OFMF_GET_SOURCE, SRC("c"), NULL);
	reply(r, 1 * S, 200, source("c", BASE, CM));
	EXPECT(r, 1 * S, FB_OFMF_ANNOUNCE, PORT, "c");
	/* Refused again while its ResourceCreated is out: retried, not dropped. */
	CHECK_EQ(fb_ofmf_reg_delivery_failed(r, 1 * S, 7, PORT, 1), 0);
	uint64_t now = 1 * S, waits[] = { 1, 2 };
	for (unsigned i = 0; i < 3; i++) {
		if (i)
			EXPECT(r, now, FB_OFMF_ANNOUNCE, PORT, "c");
		reply(r, now, -ECONNRESET, NULL); /* its crawl of us failed: a 404 */
		EXPECT(r, now, FB_OFMF_GET_SOURCE, SRC("c"), NULL);
		reply(r, now, 200, source("c", BASE, CM));
		if (i < 2)
			now += waits[i] * S;
	}
	/* Announced (and dropped), and the core knows us, but refused for less
	 * than refuse_min_ns (3 s here): it also fails while it crawls. */
	CHECK_EQ(fb_ofmf_reg_delivery_failed(r, 1 * S + 3 * S - 1, 7, PORT, 1), 0);
	/* ... and then: it never will. */
	CHECK_EQ(fb_ofmf_reg_delivery_failed(r, now, 7, PORT, 1), 1);
	struct fb_ofmf_reg_stats st;
	fb_ofmf_reg_get_stats(r, &st);
	CHECK_EQ(st.undeliverable, 1);
	CHECK_EQ(st.announce_dropped, 1);
	/* The next event starts afresh; one the core is down for is never dropped. */
	CHECK_EQ(fb_ofmf_reg_delivery_failed(r, now, 8, "", 1), 0);
	for (unsigned i = 0; i < 10; i++)
		CHECK_EQ(fb_ofmf_reg_delivery_failed(r, now, 9, PORT, 0), 0);
	fb_ofmf_reg_free(r);
}

/* A refusal while the core has forgotten us is not the event's fault: the
 * new registration starts the count again. */
static void ofmf_refusal_before_a_reregistration_is_forgotten(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	REGISTER(r, 0, "c");
	CHECK_EQ(fb_ofmf_reg_delivery_failed(r, 1 * S, 7, "", 1), 0);
	EXPECT(r, 1 * S, FB_OFMF_GET_SOURCE, SRC("c"), NULL);
	reply(r, 1 * S, 404, "{}"); /* the core restarted */
	EXPECT(r, 1 * S, FB_OFMF_SAVE, NULL, "");
	HELD(r, 1 * S, "");
	CHECK_EQ(fb_ofmf_reg_delivery_failed(r, 1 * S, 7, "", 1), 0); /* not registered */
	REGISTER(r, 1 * S, "d");
	CHECK_EQ(fb_ofmf_reg_delivery_failed(r, 2 * S, 7, "", 1), 0); /* a first refusal again */
	fb_ofmf_reg_free(r);
}

static void ofmf_unasked_patch_is_checked(void)
{
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&opts, NULL, 0);
	HELD(r, 0, "");
	REGISTER(r, 0, "c");
	fb_ofmf_reg_context_patched(r, 1 * S, "bad value"); /* refused: a space */
	fb_ofmf_reg_context_patched(r, 1 * S, "d");
	EXPECT(r, 1 * S, FB_OFMF_SAVE, NULL, "d");
	HELD(r, 1 * S, "d"); /* until the core confirms */
	EXPECT(r, 1 * S, FB_OFMF_GET_SOURCE, SRC("d"), NULL);
	reply(r, 1 * S, 200, source("d", BASE, CM));
	EXPECT(r, 1 * S, FB_OFMF_ANNOUNCE, FABRIC, "d");
	reply(r, 1 * S, 200, "[]");
	LIVE(r, 1 * S, "d");
	fb_ofmf_reg_free(r);
}

/* ---- the state file ----------------------------------------------------- */

static const struct fb_ofmf_state sample = { "http://127.0.0.1:5000", CM, BASE, "3f2b-uuid" };

static void ofmf_state_round_trip(void)
{
	char buf[4096], err[256];
	int n = fb_ofmf_state_format(&sample, buf, sizeof(buf));
	CHECK(n > 0);
	struct fb_ofmf_state s;
	CHECK_EQ(fb_ofmf_state_parse(buf, (size_t)n, &s, err, sizeof(err)), 0);
	CHECK(memcmp(&s, &sample, sizeof(s)) == 0 || (strcmp(s.core, sample.core) == 0 &&
		strcmp(s.connection_method, sample.connection_method) == 0 &&
		strcmp(s.base, sample.base) == 0 && strcmp(s.context, sample.context) == 0));
	/* Not registered: an empty context is a state too. */
	struct fb_ofmf_state e = sample;
	e.context[0] = '\0';
	n = fb_ofmf_state_format(&e, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK_EQ(fb_ofmf_state_parse(buf, (size_t)n, &s, err, sizeof(err)), 0);
	CHECK_STR(s.context, "");
	/* A field the file could not hold is refused at format time. */
	snprintf(e.context, sizeof(e.context), "two words");
	CHECK_EQ(fb_ofmf_state_format(&e, buf, sizeof(buf)), FB_EMALFORMED);
	CHECK_EQ(fb_ofmf_state_format(&sample, buf, 16), FB_ETOOBIG);

	/* On disk, crash-safe. */
	char path[256];
	snprintf(path, sizeof(path), "%s/ofmf.state", fbt_dir());
	CHECK_EQ(fb_ofmf_state_load(path, &s, err, sizeof(err)), -ENOENT);
	CHECK_EQ(fb_ofmf_state_save(path, &sample, NULL), 0);
	memset(&s, 0, sizeof(s));
	CHECK_EQ(fb_ofmf_state_load(path, &s, err, sizeof(err)), 0);
	CHECK_STR(s.context, "3f2b-uuid");
	CHECK_STR(s.core, "http://127.0.0.1:5000");
}

static void ofmf_state_refuses_damage(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "core=a\nconnection_method=b\nbase=c\ncontext=d\n", "no version line" },
		{ "version=2\ncore=a\nconnection_method=b\nbase=c\ncontext=d\n", "line 1: unknown version" },
		{ "version=1\ncore=a\nconnection_method=b\nbase=c\n", "context is missing" },
		{ "version=1\ncore=a\ncore=a\nconnection_method=b\nbase=c\ncontext=\n", "line 3: core given twice" },
		{ "version=1\ncore=\nconnection_method=b\nbase=c\ncontext=\n", "line 2: core must be" },
		{ "version=1\ncore=a b\nconnection_method=b\nbase=c\ncontext=\n", "line 2: the value holds" },
		{ "version=1\ncore=a\nconnection_method=b\nbase=c\ncontext=\nfoo=1\n", "line 6: unknown key 'foo'" },
		{ "version=1\ncore\n", "line 2: expected key=value" },
		{ "version=1\ncore=a\r\nconnection_method=b\nbase=c\ncontext=\n", "line 2: the value holds" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		struct fb_ofmf_state s = sample;
		int rc = fb_ofmf_state_parse(bad[i].text, strlen(bad[i].text), &s, err, sizeof(err));
		if (rc != FB_EMALFORMED || !strstr(err, bad[i].why))
			FB_TEST_FAIL_("  case %u: rc %d, err '%s', expected '%s'\n", i, rc, err, bad[i].why);
		CHECK_STR(s.context, sample.context); /* untouched */
	}
	/* Comments and blank lines are fine; a missing last newline too. */
	const char *ok = "# x\n\nversion=1\ncore=a\nconnection_method=b\nbase=c\ncontext=d";
	struct fb_ofmf_state s;
	char err[256];
	CHECK_EQ(fb_ofmf_state_parse(ok, strlen(ok), &s, err, sizeof(err)), 0);
	CHECK_STR(s.context, "d");
}

int main(void)
{
	RUN(ofmf_first_registration);
	RUN(ofmf_patch_after_the_200);
	RUN(ofmf_409_adopts_our_source);
	RUN(ofmf_409_for_another_agent_is_a_conflict);
	RUN(ofmf_core_restart_found_by_the_periodic_check);
	RUN(ofmf_core_restart_found_by_an_announce);
	RUN(ofmf_broker_restart_core_remembers);
	RUN(ofmf_broker_restart_core_forgot);
	RUN(ofmf_core_down_backs_off_and_keeps_the_context);
	RUN(ofmf_origins_announced_once_in_order);
	RUN(ofmf_what_the_crawl_reached_is_not_announced);
	RUN(ofmf_refused_origin_dropped_after_tries);
	RUN(ofmf_new_origin_waits_for_our_tree);
	RUN(ofmf_failed_delivery_checks_soon);
	RUN(ofmf_refused_event_dropped_after_announce_and_check);
	RUN(ofmf_refusal_before_a_reregistration_is_forgotten);
	RUN(ofmf_unasked_patch_is_checked);
	RUN(ofmf_state_round_trip);
	RUN(ofmf_state_refuses_damage);
	return TEST_DONE();
}

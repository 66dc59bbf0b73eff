/* test_ib_resync.c - the IB agent's resync diff (agents/ib/ib_resync.c):
 * which differences between its fresh view and the broker's map become
 * events, and what those events carry. */
#include "fb_test.h"
#include "ib_resync.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EV 16

struct sink {
	struct fb_event ev[MAX_EV];
	size_t n;
};

static void collect(void *arg, const struct fb_event *ev)
{
	struct sink *s = arg;
	if (s->n < MAX_EV)
		s->ev[s->n++] = *ev;
}

/* One agent's view, and what it emitted. */
struct rig {
	struct ib_topo t;
	struct ib_switch sw;
	struct ib_port ports[5];
	struct sink s;
	struct ib_poll_ctx c;
};

/* leaf1 (GUID 0x100, 4 ports) as discovery left it: 1 up, 2 down with no
 * known peer, 3 up, 4 down. */
static void leaf1(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	struct ib_switch *sw = &r->sw;
	struct ib_port *ports = r->ports;
	sw->guid = 0x100;
	strcpy(sw->desc, "leaf1");
	sw->nports = 4;
	sw->ports = ports;
	sw->assigned = 1;
	const uint8_t phys[5] = { 0, IB_PHYS_LINKUP, IB_PHYS_POLLING, IB_PHYS_LINKUP, IB_PHYS_POLLING };
	for (unsigned p = 1; p <= 4; p++) {
		ports[p].have_pi = 1;
		ports[p].pi.phys = phys[p];
		ports[p].pi.state = phys[p] == IB_PHYS_LINKUP ? 4 : 1;
	}
	ports[1].peer = (struct ib_peer){ .guid = 0xa1, .port = 1, .type = IB_NT_CA, .desc = "h1" };
	r->t.sw = sw;
	r->t.n = 1;
	r->c = (struct ib_poll_ctx){ .topo = &r->t, .fabric = "IB", .emit = collect, .emit_arg = &r->s };
}

static const char *MAP =
	"{\"Fabric\":\"IB\",\"LastEventId\":99,"
	"\"Nodes\":{\"node002\":{\"Jobs\":[],\"Ports\":[{\"Device\":\"ibsim0\",\"LinkState\":\"up\","
	"\"NodeGUID\":\"0x00000000000000a2\",\"Port\":1,\"SwitchGUID\":\"0x0000000000000100\","
	"\"SwitchPort\":2}]}},"
	"\"Switches\":{"
	"\"0x0000000000000100\":{\"Agent\":\"ib-a\",\"Hosts\":[\"node002\"],\"Name\":\"leaf1\","
	"\"Ports\":[{\"LinkState\":\"down\",\"Port\":1},{\"LinkState\":\"up\",\"Port\":2},"
	"{\"LinkState\":\"up\",\"Port\":3},{\"LinkState\":\"unknown\",\"Port\":4},"
	"{\"LinkState\":\"up\",\"Port\":9}],\"Reachable\":%s},"
	"\"0x0000000000000200\":{\"Agent\":\"ib-a\",\"Hosts\":[],\"Name\":\"leaf2\",\"Ports\":[],"
	"\"Reachable\":true},"
	"\"0x0000000000000300\":{\"Agent\":\"ib-b\",\"Hosts\":[],\"Name\":\"leaf3\",\"Ports\":[],"
	"\"Reachable\":true}}}";

static json_t *map(const char *leaf1_reachable)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), MAP, leaf1_reachable);
	return json_loads(buf, 0, NULL);
}

static void every_difference_is_one_marked_event(void)
{
	static struct rig r;
	leaf1(&r);
	json_t *m = map("true");
	CHECK(m);
	struct ib_gone gone = { 0 };
	size_t n = ib_resync_diff(&r.c, m, "ib-a", &gone);
	json_decref(m);
	/* port 1 down -> up, port 2 up -> down, leaf2 (ours) gone; port 3 the
	 * same, port 4 never reported, port 9 beyond the switch, leaf3 another
	 * agent's: nothing. */
	CHECK_EQ(n, 3);
	CHECK_EQ(r.s.n, 3);
	for (size_t i = 0; i < r.s.n; i++)
		CHECK_EQ(fb_event_counter(&r.s.ev[i], FB_CTR_RESYNC, 0), 1);
	CHECK_EQ(r.s.ev[0].kind, FB_KIND_LINK_UP);
	CHECK_EQ(r.s.ev[0].subj.port, 1);
	CHECK_EQ(r.s.ev[0].subj.peer_guid, 0xa1);
	CHECK_EQ(r.s.ev[0].severity, FB_SEV_OK);
	CHECK_EQ(r.s.ev[1].kind, FB_KIND_LINK_DOWN);
	CHECK_EQ(r.s.ev[1].subj.port, 2);
	CHECK_EQ(r.s.ev[1].severity, FB_SEV_WARNING);
	/* no peer known to the agent: named from the map, as a live event is */
	CHECK_STR(r.s.ev[1].subj.node, "node002");
	CHECK_EQ(r.s.ev[1].subj.peer_guid, 0xa2);
	CHECK_EQ(r.s.ev[1].subj.peer_port, 1);
	CHECK_EQ(r.s.ev[1].link_class, FB_LINK_HOST);
	CHECK_EQ(r.s.ev[2].kind, FB_KIND_SWITCH_UNREACHABLE);
	CHECK_EQ(r.s.ev[2].subj.switch_guid, 0x200);
	CHECK_STR(r.s.ev[2].subj.switch_name, "leaf2");
	CHECK_EQ(r.s.ev[2].severity, FB_SEV_CRITICAL);
	/* handed back, to be looked for again */
	CHECK_EQ(gone.n, 1);
	CHECK_EQ(gone.guid[0], 0x200);
	ib_gone_free(&gone);
}

static void a_switch_the_map_thinks_dead_is_reachable_again(void)
{
	static struct rig r;
	leaf1(&r);
	json_t *m = map("false");
	CHECK(m);
	/* another agent id: leaf2 is not ours to declare gone */
	size_t n = ib_resync_diff(&r.c, m, "ib-c", NULL);
	json_decref(m);
	CHECK_EQ(n, 3);
	CHECK_EQ(r.s.ev[0].kind, FB_KIND_SWITCH_REACHABLE);
	CHECK_EQ(r.s.ev[0].subj.switch_guid, 0x100);
	CHECK_EQ(r.s.ev[1].kind, FB_KIND_LINK_UP);
	CHECK_EQ(r.s.ev[2].kind, FB_KIND_LINK_DOWN);

	/* a switch we cannot reach now that the map shows reachable */
	r.s.n = 0;
	r.sw.unreachable = 1;
	CHECK((m = map("true")));
	n = ib_resync_diff(&r.c, m, "ib-c", NULL);
	json_decref(m);
	CHECK_EQ(n, 1);
	CHECK_EQ(r.s.ev[0].kind, FB_KIND_SWITCH_UNREACHABLE);
	CHECK_EQ(r.s.ev[0].subj.switch_guid, 0x100);
}

static void an_unassigned_switch_is_left_alone(void)
{
	static struct rig r;
	leaf1(&r);
	r.sw.assigned = 0; /* another shard's */
	json_t *m = map("false");
	CHECK(m);
	CHECK_EQ(ib_resync_diff(&r.c, m, "ib-c", NULL), 0);
	json_decref(m);
}

/* A live event went out about port 2 and leaf1 since the resync began: it
 * is newer than the map, which only lags (the second pass's case). */
static void what_went_out_live_is_left_alone(void)
{
	static struct rig r;
	leaf1(&r);
	r.ports[2].live = 1;
	r.sw.live = 1;
	json_t *m = map("false");
	CHECK(m);
	size_t n = ib_resync_diff(&r.c, m, "ib-c", NULL);
	json_decref(m);
	CHECK_EQ(n, 1); /* port 1 only: no switch_reachable, nothing for port 2 */
	CHECK_EQ(r.s.ev[0].kind, FB_KIND_LINK_UP);
	CHECK_EQ(r.s.ev[0].subj.port, 1);
}

int main(void)
{
	RUN(every_difference_is_one_marked_event);
	RUN(a_switch_the_map_thinks_dead_is_reachable_again);
	RUN(an_unassigned_switch_is_left_alone);
	RUN(what_went_out_live_is_left_alone);
	return TEST_DONE();
}

/* fb_test_event.h - the one event fixture of the C tests: a port event with
 * every field set, each to a value that catches a mistake somewhere (a GUID
 * with the top bit set: not an int64; a counter above INT64_MAX: a string in
 * JSON; a counter id with no name; text with UTF-8, quotes, a backslash and a
 * control byte; the largest LID and ifindex). A test that needs other values
 * sets them after fbt_event_full(). fbt_event_head: the header alone. */
#ifndef FB_TEST_EVENT_H
#define FB_TEST_EVENT_H

#include "fb_event.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* An event with only its header set (who sent it as which sequence number,
 * when, what happened and how bad): a test sets the subject it needs. */
static inline void fbt_event_head(struct fb_event *ev, const char *agent_id, uint64_t seq,
				  uint64_t ts_ns, uint8_t kind, uint8_t severity)
{
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->agent_id, sizeof(ev->agent_id), "%s", agent_id);
	ev->seq = seq;
	ev->ts_ns = ts_ns;
	ev->kind = kind;
	ev->severity = severity;
}

static inline void fbt_event_full(struct fb_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	strcpy(ev->agent_id, "ib-agent-1");
	ev->seq = 42;
	ev->ts_ns = 1795341141123456789ull;
	ev->kind = FB_KIND_FLAP;
	ev->severity = FB_SEV_CRITICAL;
	ev->link_class = FB_LINK_HOST;
	ev->tech = FB_TECH_IB;
	ev->port_state = 4;
	ev->phys_state = 5;
	strcpy(ev->subj.fabric, "ib0");
	strcpy(ev->subj.switch_name, "MF0;leaf3");
	ev->subj.switch_guid = 0xf452140300411a08ull; /* top bit set: not an int64 */
	ev->subj.port = 17;
	ev->subj.port_guid = 0x0002c90300a1b2c3ull;
	ev->subj.lid = 65535;
	strcpy(ev->subj.node, "node003");
	strcpy(ev->subj.device, "mlx5_0");
	strcpy(ev->subj.addr, "02:00:00:00:00:03");
	ev->subj.ifindex = UINT32_MAX;
	ev->subj.peer_guid = 1;
	ev->subj.peer_port = 1;
	strcpy(ev->subj.peer_name, "node003 HCA-1");
	strcpy(ev->text, "caf\xc3\xa9 \"quoted\" \\ \x01");
	fb_event_add_counter(ev, FB_CTR_FLAP_COUNT, 6);
	fb_event_add_counter(ev, FB_CTR_FLAP_WINDOW_S, 300);
	fb_event_add_counter(ev, FB_CTR_XMIT_DATA, UINT64_MAX); /* above INT64_MAX */
	fb_event_add_counter(ev, 999, 5);                        /* an id with no name */
	fb_event_add_counter(ev, FB_CTR_CAUSE_EVENT_ID, 4242);
	strcpy(ev->jobs, "123,124");
}

#endif

/* emit.c - the broker's own events (root causes: storm.c) take the path an
 * agent's event takes after it is decoded: the next EventId, the journal,
 * the pending batch, and every output once the commit made it durable. */
#include "broker.h"

#include "fb_err.h"
#include "fb_log.h"
#include "journal.h"
#include "rc_event.h"

#include <errno.h>
#include <string.h>

int fb_broker_emit(struct fb_broker *b, struct fb_event *ev, uint64_t *event_id)
{
	if (b->exit_code)
		return -ESHUTDOWN;
	/* Its entry keeps the sequence across restarts (rebuilt from the
	 * journal like an agent's); ingest refuses the id to agents. */
	struct fb_agent *a = fb_agent_get(b->agents, FB_BROKER_AGENT_ID);
	if (!a)
		return -ENOMEM;
	memcpy(ev->agent_id, FB_BROKER_AGENT_ID, sizeof(FB_BROKER_AGENT_ID));
	ev->seq = a->stored_seq + 1;
	if (!ev->ts_ns)
		ev->ts_ns = fb_now_ns();
	const char *why = NULL;
	if (fb_event_check(ev, &why)) {
		fb_log_err("the broker's own %s event is malformed (%s): not emitted; a bug, please report it",
			   fb_kind_name(ev->kind), why ? why : "?");
		return -EINVAL;
	}
	struct fb_record *slot = fb_commit_slot(b);
	if (!slot)
		return -ENOMEM;
	slot->ev = *ev;
	slot->event_id = b->last_event_id + 1;
	int rc = fb_journal_append(b->journal, slot->event_id, &slot->ev, NULL, 0);
	if (rc) {
		fb_broker_fatal(b, "journal append", rc);
		return rc;
	}
	b->last_event_id++;
	a->stored_seq = a->durable_seq = ev->seq;
	a->events++;
	a->last_seen_ns = fb_now_ns();
	fb_commit_add(b);
	event_active(b->commit_ev, 0, 0);
	if (event_id)
		*event_id = slot->event_id;
	return 0;
}

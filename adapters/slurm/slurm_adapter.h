/* slurm_adapter.h - fabricbus-slurm's loop thread: events in, decisions,
 * state file, actions out.
 *
 * Everything here runs on the libevent loop thread and owns the policy, the
 * state and the map; the actuator thread (slurm_actuator.h) makes the
 * libslurm calls, and the event source (slurm_source.h: the WebSocket
 * client's thread, or a Kafka consumer polled from the loop) reads the
 * broker's events. They hand over through queues and event_active.
 *
 * Start-up (slurm_startup.c) goes through phases, each retried every
 * RetryInterval until it succeeds:
 *   RECONCILE  read every Slurm node: forget recorded drains Slurm no longer
 *              holds, adopt drains with our ReasonPrefix we did not record,
 *              learn the cap base; then requeue the pending actions
 *   MAP        GET /fabric/map: seed conditions from link states
 *   RUNNING    reading events: /ws/events from LastEventId, or Kafka from
 *              the consumer group's committed offsets (Source=)
 * The order of one event: classify, route to nodes, update the policy,
 * decide, save the state (LastEventId included), and only then hand the
 * new actions to the actuator.
 */
#ifndef FBS_ADAPTER_H
#define FBS_ADAPTER_H

#include "fb_http_auth.h"
#include "fb_session.h"
#include "slurm_actuator.h"
#include "slurm_conf.h"
#include "slurm_map.h"
#include "slurm_policy.h"
#include "slurm_state.h"

#include <event2/event.h>
#include <stdint.h>

enum fbs_phase { FBS_P_RECONCILE = 0, FBS_P_MAP, FBS_P_RUNNING, FBS_P_STOPPING };

struct fbs_adapter {
	const struct fbs_config *cfg;
	struct event_base *base;
	enum fbs_phase phase;
	struct fb_http_auth http;      /* BrokerTokenFile, BrokerTlsCa: for Broker */

	struct fbs_policy *pol;
	struct fbs_state st;
	struct fbs_classify_cfg ccfg;
	struct fbs_mapfile *mapfile;   /* NULL without MapFile */
	struct fbs_fabmap fabmap;      /* the broker's map, when fetched */
	int have_map;
	uint64_t map_fetched_ms;
	unsigned map_attempts;

	struct fb_session *sess;
	struct fb_source *src;         /* Source=: slurm_source.h; NULL until RUNNING */
	struct fbs_actuator *act;

	struct event *flush_ev;        /* decide + save + submit, after the current callback */
	struct event *due_ev;          /* the policy's next timer */
	struct event *retry_ev;        /* start-up phases and failed saves */
	struct event *resync_ev;       /* converge with the map after an agent's resync */
	uint64_t resync_id;            /* the newest resync event seen (0: none pending) */
	unsigned resync_tries;

	uint64_t seen_id;              /* saved as LastEventId: the newest EventId processed
	                                * (WebSocket), or the first start's (Kafka) */
	int dirty;                     /* state changed since the last save */
	int save_failing;              /* the last save failed (logged once) */
	uint64_t last_save_ms;
	struct fbs_batch *queued;      /* decided, saved, not yet handed to the actuator */
	size_t n_queued;
	char (*route)[FB_NAME_MAX];    /* scratch: the nodes of the event being handled */

	uint64_t events, ignored, unrouted, published, publish_drops;
	struct fbs_jobrec *jobrec;     /* slurm_reconcile.h; NULL when JobReconcileInterval=0 */
	uint64_t jobs_reconciled;      /* registrations of ended jobs deleted */
	struct fbs_metrics *metrics;   /* slurm_metrics.h; NULL without --metrics */
};

/* Load MapFile and StateFile (a damaged state file refuses: see
 * slurm_state.h) and prove StateFile writable. 0, FB_ECONFIG for a bad
 * MapFile, or -1; with "file: why" in err. */
int fbs_adapter_init(struct fbs_adapter *a, const struct fbs_config *cfg, struct event_base *base,
		     char *err, size_t errsz);
/* Start the session, the actuator and the first start-up phase. 0 or -1 (logged). */
int fbs_adapter_start(struct fbs_adapter *a);
/* Stop reading events, save the state, stop the actuator (waiting up to
 * wait_ms for a libslurm call in progress). Returns 0, or -ETIMEDOUT when
 * the actuator is still in a call (the process should exit without freeing). */
int fbs_adapter_stop(struct fbs_adapter *a, int wait_ms);
void fbs_adapter_free(struct fbs_adapter *a);

/* Milliseconds of the policy clock (CLOCK_REALTIME). */
uint64_t fbs_now_ms(void);

/* Internal to the adapter's files. */
struct fb_source;
void fbs_adapter_kick(struct fbs_adapter *a);   /* schedule a flush */
void fbs_arm(struct event *ev, uint64_t ms);    /* event_add in ms from now */
/* Now, not after the current callback: decide, save, hand the new actions
 * to Slurm (stopping: save only). 0 when the state file holds the effects
 * of every event handled so far, -1 when the save failed (it is retried). */
int fbs_adapter_sync(struct fbs_adapter *a);
void fbs_adapter_on_message(void *arg, const char *json, size_t len, uint64_t event_id);
void fbs_adapter_on_result(void *arg, struct fbs_result *r);
void fbs_adapter_publish(struct fbs_adapter *a, const struct fb_event *ev);
/* The nodes slurmctld knows now, for the policy (only they are drained and
 * counted against the cap); sn without nodes (a failed read) changes nothing. */
struct fbs_snodes;
void fbs_adapter_slurm_nodes(struct fbs_adapter *a, const struct fbs_snodes *sn);
/* slurm_startup.c */
void fbs_startup_reconciled(struct fbs_adapter *a, const struct fbs_result *r);
void fbs_startup_retry(evutil_socket_t fd, short what, void *arg);
/* An event found at an agent's resync (Oem.Fabricbus.Resync): once the
 * resync is over (RESYNC_QUIET_MS without another), fetch the map and seed
 * from it as at start, so every node we hold drained is compared with it. */
void fbs_resync_note(struct fbs_adapter *a, uint64_t event_id);
void fbs_resync_cb(evutil_socket_t fd, short what, void *arg);
/* GET /fabric/map now; 0 and a->fabmap replaced, or -1 (logged at level). */
int fbs_map_fetch(struct fbs_adapter *a, int level);

#endif

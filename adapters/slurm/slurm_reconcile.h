/* slurm_reconcile.h - job registrations reconciled with Slurm.
 *
 * The SPANK plugin registers a job with the broker at its start (POST
 * /fabric/jobs) and removes it in its epilog. When the epilog never runs (a
 * node crashed, slurmstepd was killed) the registration would stay until
 * the broker's JobTtl. Every JobReconcileInterval (0: never) the adapter
 * lists the jobs the broker has registered (Nodes.*.Jobs of GET
 * /fabric/map), asks slurmctld about each (slurm_load_job, on a thread of
 * its own: it blocks ~9 s while slurmctld is down), and deletes (DELETE
 * /fabric/jobs/<id>, one log line each) the registrations of jobs that
 *   - slurmctld says have ended (completed, cancelled, failed, ...), or
 *   - slurmctld does not know, in two rounds in a row (so the registration
 *     is at least one interval old: Slurm forgets a job MinJobAge after it
 *     ended, and a registration is only made for a job slurmctld has).
 * Pending, running and suspended jobs are kept. Any slurmctld error ends
 * the round with nothing deleted. Job ids beyond Slurm's 32-bit job
 * numbers (the broker takes up to 20 digits) are left alone.
 *
 * Loop thread, except the thread it starts for the slurmctld queries.
 */
#ifndef FBS_RECONCILE_H
#define FBS_RECONCILE_H

#include <stdint.h>

struct fbs_adapter;
struct fbs_jobrec;

/* Start the rounds (first one an interval from now). 0, or -ENOMEM. */
int fbs_jobrec_start(struct fbs_adapter *a, uint64_t interval_ms, struct fbs_jobrec **out);
/* Stop: no more rounds; waits for a slurmctld query in progress (at most
 * one, ~9 s while slurmctld is down). NULL is fine. */
void fbs_jobrec_free(struct fbs_jobrec *r);

#endif

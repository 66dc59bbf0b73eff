/* pmix_notify.h - one fbp_note as one PMIx event (PMIx_Notify_event).
 *
 * Runs in whichever process holds a PMIx session: inside slurmstepd, where
 * Slurm's mpi/pmix plugin is the PMIx server (the SPANK plugin), or in
 * fabricbus-pmix attached as a tool to a server that accepts tools
 * (Delivery=server). Every event carries PMIX_EVENT_NON_DEFAULT (Slurm's
 * catch-all handler SIGKILLs a step on any event that reaches it),
 * PMIX_EVENT_TEXT_MESSAGE, PMIX_EVENT_TIMESTAMP, the fabricbus.* keys and,
 * when the affected nodes hold processes of nspace, PMIX_EVENT_AFFECTED_PROCS
 * (found with PMIx_Resolve_peers). FBP_RANGE_NODES sends to exactly those
 * processes (PMIX_RANGE_CUSTOM + PMIX_EVENT_CUSTOM_RANGE).
 *
 * Blocking: waits up to timeout_ms for the PMIx library's completion
 * callback (one callback: a server's notify), or, with FBP_NOTIFY_BLOCKING,
 * makes PMIx's own blocking call (a tool's notify, whose callback OpenPMIx
 * 4.2.2 runs twice). Any thread (the PMIx library thread-shifts).
 */
#ifndef FBP_NOTIFY_H
#define FBP_NOTIFY_H

#include "pmix_note.h"

#include <stddef.h>

#define FBP_NOTIFY_BLOCKING (-1)

/* 0, or a negative status with a one-line reason in err. nspace may be
 * NULL or "" (then no affected procs are named, and FBP_RANGE_NODES falls
 * back to no delivery: -ENOENT). *nprocs gets the number of affected procs
 * found (may be NULL). */
int fbp_notify(const struct fbp_note *n, const char *nspace, int timeout_ms, size_t *nprocs,
	       char *err, size_t errsz);

#endif

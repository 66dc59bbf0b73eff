/* pmix_attach.h - Delivery=server: fabricbus-pmix attached as a PMIx tool to a
 * server that accepts tools (a PRRTE DVM, or any host that calls
 * PMIx_server_init with PMIX_SERVER_TOOL_SUPPORT), for as long as it runs.
 * NEVER a slurmstepd: a tool leaving a Slurm step kills it (docs/pmix.md).
 * Loop thread only. */
#ifndef FBP_TOOL_H
#define FBP_TOOL_H

#include "pmix_conf.h"
#include "pmix_note.h"

#include <stddef.h>

/* PMIx_tool_init with PMIX_SERVER_URI=cfg->server_uri and an identity of
 * its own (fabricbus-pmix.<node>, rank 0). 0 or < 0 with the reason. */
int fbp_tool_start(const struct fbp_config *cfg, char *err, size_t errsz);
/* One note through the server; affected procs of cfg->server_nspace. */
int fbp_tool_notify(const struct fbp_config *cfg, const struct fbp_note *n, size_t *nprocs,
		    char *err, size_t errsz);
void fbp_tool_stop(void);

#endif

/* pmix_attach.c - the PMIx tool connection of Delivery=server (pmix_attach.h).
 * The PMIx library holds the connection state itself (one per process). */
#include "pmix_attach.h"
#include "pmix_notify.h"

#include "fb_err.h"

#include <errno.h>
#include <pmix_tool.h>
#include <stdio.h>
#include <string.h>

int fbp_tool_start(const struct fbp_config *cfg, char *err, size_t errsz)
{
	pmix_proc_t me;
	pmix_info_t info[3];
	char nspace[PMIX_MAX_NSLEN + 1];
	uint32_t rank = 0;
	snprintf(nspace, sizeof(nspace), "fabricbus-pmix.%s", cfg->node);
	PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, cfg->server_uri, PMIX_STRING);
	PMIX_INFO_LOAD(&info[1], PMIX_TOOL_NSPACE, nspace, PMIX_STRING);
	PMIX_INFO_LOAD(&info[2], PMIX_TOOL_RANK, &rank, PMIX_UINT32);
	pmix_status_t rc = PMIx_tool_init(&me, info, 3);
	for (int i = 0; i < 3; i++)
		PMIX_INFO_DESTRUCT(&info[i]);
	if (rc != PMIX_SUCCESS)
		return fb_err_set(err, errsz, -ECONNREFUSED,
				  "cannot attach to the PMIx server at %s: %s (ServerUri)",
				  cfg->server_uri, PMIx_Error_string(rc));
	return 0;
}

int fbp_tool_notify(const struct fbp_config *cfg, const struct fbp_note *n, size_t *nprocs,
		    char *err, size_t errsz)
{
	return fbp_notify(n, cfg->server_nspace, FBP_NOTIFY_BLOCKING, nprocs, err, errsz);
}

void fbp_tool_stop(void)
{
	PMIx_tool_finalize();
}

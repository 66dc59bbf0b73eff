/* rf_version.c - see rf_version.h. */
#include "rf_version.h"

int fb_rf_version_get(struct fb_rf_ctx *c)
{
	json_t *doc = json_pack("{s:s}", "v1", "/redfish/v1/");
	int rc = doc ? fb_rf_reply_json(c->rep, 200, doc) : -1;
	json_decref(doc);
	return rc ? -1 : 0;
}

/* fb_map_get.c - GET /fabric/map for an agent's resync (fb_map_get.h). */
#include "fb_err.h"
#include "fb_map_get.h"

#include "fb_http.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAP_MAX_BYTES (64u << 20)

int fb_map_get(const struct fb_http_client *cl, const char *host, int port, const char *target,
	       int timeout_ms, json_t **map, char *err, size_t errsz)
{
	struct fb_http_resp r;
	char why[256];
	*map = NULL;
	const char *scheme = cl && cl->transport ? "https" : "http";
	if (fb_http_request_as(cl, host, (uint16_t)port, "GET", target, NULL, NULL, 0, timeout_ms,
			       MAP_MAX_BYTES, &r, why, sizeof(why)) != 0) {
		return fb_err_set(err, errsz, -1, "GET %s: %s", target, why);
	}
	int rc = 0;
	if (r.status == 404) {
		rc = 1;
	} else if (r.status != 200) {
		int login = r.status == 401 || r.status == 403;
		rc = fb_err_set(err, errsz, -1,
				"GET %s://%s:%d%s: HTTP %d%s", scheme, host, port, target,
				r.status, !login ? "" : cl && cl->token && cl->token[0]
				? " (is --broker-token-file a token of the broker's HttpTokens?)"
				: " (the broker wants a login: give --broker-token-file)");
	} else {
		json_error_t je;
		*map = json_loadb((const char *)r.body.data, r.body.len, 0, &je);
		if (!*map || !json_is_object(json_object_get(*map, "Switches")) ||
		    !json_is_object(json_object_get(*map, "Nodes"))) {
			fb_err_set(err, errsz, -1,
				   "GET %s://%s:%d%s: not a fabric map: %s", scheme, host,
				   port, target, *map ? "no Nodes and Switches objects" : je.text);
			json_decref(*map);
			*map = NULL;
			rc = -1;
		}
	}
	fb_http_resp_free(&r);
	return rc;
}

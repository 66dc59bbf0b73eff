/* fb_map_get.h - an agent reads the broker's GET /fabric/map for its resync
 * (proto/PROTOCOL.md, "Resync"), with the blocking client of
 * fb_http.c. Any thread; the call blocks for at most
 * timeout_ms (name resolution aside: give an address).
 */
#ifndef FB_MAP_GET_H
#define FB_MAP_GET_H

#include "fb_http.h"

#include <jansson.h>
#include <stddef.h>

/* GET <target> ("/fabric/map" or "/fabric/map?nodes=...") from host:port.
 * 0 with *map (the caller's; a JSON object with "Nodes" and "Switches"),
 * 1 when the broker has no /fabric/map (HTTP 404: nothing to resync
 * against), or -1 with a one-line reason in err. cl: the token and TLS
 * (fb_http_auth.h; NULL: plain HTTP, no token); a 401 or 403 says to give
 * --broker-token-file. */
int fb_map_get(const struct fb_http_client *cl, const char *host, int port, const char *target,
	       int timeout_ms, json_t **map, char *err, size_t errsz);

#endif

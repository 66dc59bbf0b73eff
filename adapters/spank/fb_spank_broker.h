/* fb_spank_broker.h - the plugin's three requests to fabricbusd.
 *
 *   GET    /fabric/map          the fabric, for the job's environment
 *   POST   /fabric/jobs         {"JobId":"12","User":"alice","Nodes":[...]}
 *   DELETE /fabric/jobs/<id>    at the end of the job
 *
 * Every request is bounded by conf->timeout_ms and its answer by a size
 * limit; all bytes go through fb_http's checked response parser. Errors come
 * back as one line of printable ASCII in err (the peer's bytes quoted in it
 * have '?' for anything else) that names the broker and the reason, e.g.
 *   "127.0.0.1:7412: connection refused"
 *   "127.0.0.1:7412: GET /fabric/map: HTTP 503: busy"
 */
#ifndef FB_SPANK_BROKER_H
#define FB_SPANK_BROKER_H

#include "fb_http.h"
#include "fb_spank_conf.h"

#include <stddef.h>

/* GET /fabric/map. Returns 0 with the 200 response in *r (caller frees with
 * fb_http_resp_free), a negative errno or fb_err from fb_http when the broker
 * cannot be reached or its bytes are not HTTP, or FB_EPROTO for another
 * status. *r is empty on failure. */
int fb_spank_fetch_map(const struct fb_spank_conf *c, struct fb_http_resp *r, char *err,
		       size_t errsz);

/* POST /fabric/jobs: 0 on 200 or 201, else negative with err. Idempotent on
 * the broker's side: the same JobId replaces the earlier registration. */
int fb_spank_register(const struct fb_spank_conf *c, const char *job_id, const char *user,
		      const char *const *nodes, size_t n, char *err, size_t errsz);

/* DELETE /fabric/jobs/<job_id>: 0 on 2xx or 404 (already gone), else
 * negative with err. */
int fb_spank_unregister(const struct fb_spank_conf *c, const char *job_id, char *err,
			size_t errsz);

#endif

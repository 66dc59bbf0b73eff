/* fb_spank_broker.h - the plugin's three requests to fabricbusd.
 *
 *   GET    /fabric/map?nodes=<SLURM_JOB_NODELIST>
 *                               the job's part of the fabric, for its
 *                               environment (the whole map as a fallback)
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

/* Longest request path sent with ?nodes=: the broker's lws takes at most
 * 4096 bytes of request line and headers together and drops a request
 * over that without an answer. A longer (percent-encoded) list gets the
 * whole map instead. */
#define FB_SPANK_QUERY_PATH_MAX 3072

/* GET /fabric/map?nodes=<nodelist> (percent-encoded here), so that the
 * broker sends only the job's nodes and their switches; the whole map when
 * nodelist is NULL or too long, and once more without the query when the
 * broker answers the query with 400 (it takes a hostlist Slurm accepts and
 * it does not, e.g. "a,,b"). A broker older than ?nodes= ignores the query
 * and sends the whole map, which the caller reads the same way. Returns 0
 * with the 200 response in *r (caller frees with fb_http_resp_free), a
 * negative errno or fb_err from fb_http when the broker cannot be reached
 * or its bytes are not HTTP, or FB_EPROTO for another status. *r is empty
 * on failure. *filtered (may be NULL) says whether the query was used. */
int fb_spank_fetch_map(const struct fb_spank_conf *c, const char *nodelist, struct fb_http_resp *r,
		       int *filtered, char *err, size_t errsz);

/* POST /fabric/jobs: 0 on 200 or 201, else negative with err. Idempotent on
 * the broker's side: the same JobId replaces the earlier registration. */
int fb_spank_register(const struct fb_spank_conf *c, const char *job_id, const char *user,
		      const char *const *nodes, size_t n, char *err, size_t errsz);

/* DELETE /fabric/jobs/<job_id>: 0 on 2xx or 404 (already gone), else
 * negative with err. */
int fb_spank_unregister(const struct fb_spank_conf *c, const char *job_id, char *err,
			size_t errsz);

#endif

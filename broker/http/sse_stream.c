/* sse_stream.c - reading an SSE request and answering it (sse_stream.h). */
#include "sse_stream.h"

#include "fb_err.h"
#include "fb_log.h"
#include "rf_filter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ARG_MAX (FB_RF_FILTER_MAX + 64) /* "$filter=" and the longest filter */

static int refuse(struct fb_sse_refusal *no, unsigned status, const char *message, const char *token,
		  const char *param, const char *detail)
{
	no->status = status;
	no->message = message;
	snprintf(no->token, sizeof(no->token), "%s", token ? token : "");
	no->arg1 = token ? no->token : NULL;
	no->arg2 = param;
	snprintf(no->detail, sizeof(no->detail), "%s", detail ? detail : "");
	return 1;
}

struct sse_req {
	char filter[FB_RF_FILTER_MAX + 1];
	int has_filter;
	char last_id[32];
	int has_last_id;
	char quiet[16]; /* "quiet=" and the value of quiet= / all=, as on /ws/events (filter.h) */
};

/* The query: lws hands each '&'-separated argument already %-decoded. */
static int read_query(struct lws *wsi, struct sse_req *q, char *arg, const char **bad)
{
	for (int i = 0; i < 64; i++) {
		int n = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i);
		if (n <= 0)
			return 0;
		if (n >= ARG_MAX || lws_hdr_copy_fragment(wsi, arg, ARG_MAX, WSI_TOKEN_HTTP_URI_ARGS, i) < 0) {
			*bad = "$filter";
			return -1;
		}
		const char *eq = strchr(arg, '=');
		size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
		const char *v = eq ? eq + 1 : "";
		if (nl == 7 && memcmp(arg, "$filter", 7) == 0) {
			snprintf(q->filter, sizeof(q->filter), "%s", v);
			q->has_filter = 1;
		} else if ((nl == 5 && memcmp(arg, "quiet", 5) == 0) || (nl == 3 && memcmp(arg, "all", 3) == 0)) {
			if (strlen(v) >= sizeof(q->quiet) - 6) {
				*bad = "quiet";
				return -1;
			}
			memcpy(q->quiet, "quiet=", 6);
			memcpy(q->quiet + 6, v, strlen(v) + 1);
		} else if ((nl == 13 && strncasecmp(arg, "Last-Event-ID", 13) == 0) ||
			   (nl == 11 && memcmp(arg, "lastEventId", 11) == 0)) {
			if (strlen(v) >= sizeof(q->last_id)) {
				*bad = "Last-Event-ID";
				return -1;
			}
			snprintf(q->last_id, sizeof(q->last_id), "%s", v);
			q->has_last_id = 1;
		}
	}
	return 0;
}

int fb_sse_prepare(struct lws *wsi, struct fb_ws_sub *s, uint64_t head_id, struct fb_sse_refusal *no)
{
	struct sse_req *q = calloc(1, sizeof(*q));
	char *arg = malloc(ARG_MAX);
	int rc = 0;
	if (!q || !arg) {
		rc = refuse(no, 500, "InternalError", NULL, NULL, "out of memory opening a stream");
		goto out;
	}
	const char *bad = NULL;
	if (read_query(wsi, q, arg, &bad)) {
		rc = refuse(no, 400, "QueryParameterValueFormatError", "(too long)", bad,
			    "the query parameter is too long");
		goto out;
	}
	/* The header wins over the query parameter (EventSource sends it). */
	int hl = lws_hdr_custom_length(wsi, "last-event-id:", 14);
	if (hl > 0) {
		if (hl >= (int)sizeof(q->last_id) ||
		    lws_hdr_custom_copy(wsi, q->last_id, sizeof(q->last_id), "last-event-id:", 14) < 0)
			snprintf(q->last_id, sizeof(q->last_id), "(too long)"); /* refused below */
		q->has_last_id = 1;
	}
	/* Last-Event-ID is the WebSocket's since=: the same position, parsed
	 * by the same rules (filter.c). */
	struct fb_filter pos;
	fb_filter_init(&pos);
	if (q->has_last_id && q->last_id[0]) {
		char since[6 + sizeof(q->last_id)];
		const char *why;
		snprintf(since, sizeof(since), "since=%s", q->last_id);
		if (fb_filter_arg(&pos, since, &why)) {
			rc = refuse(no, 400, "QueryParameterValueTypeError", q->last_id, "Last-Event-ID",
				    "Last-Event-ID: expected the EventId of the last event received (decimal)");
			goto out;
		}
	}
	if (q->quiet[0]) {
		const char *why;
		if (fb_filter_arg(&pos, q->quiet, &why)) {
			rc = refuse(no, 400, "QueryParameterValueTypeError", q->quiet + 6, "quiet", why);
			goto out;
		}
	}
	struct fb_rf_filter *f = NULL;
	if (q->has_filter) {
		struct fb_rf_filter_err err;
		int c = fb_rf_filter_compile(q->filter, strlen(q->filter), &f, &err);
		if (c) {
			rc = refuse(no, c == -ENOMEM ? 500 : 400, err.message, err.token, "$filter", err.detail);
			goto out;
		}
	}
	fb_ws_sub_init(s, &pos, head_id);
	s->kind = FB_WS_SUB_SSE;
	s->rf = f;
out:
	free(q);
	free(arg);
	return rc;
}

int fb_sse_start(struct lws *wsi)
{
	uint8_t buf[LWS_PRE + 512];
	uint8_t *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf) - 1;
	if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, "text/event-stream",
					LWS_ILLEGAL_HTTP_CONTENT_LEN, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const uint8_t *)"cache-control:",
					(const uint8_t *)"no-cache", 8, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const uint8_t *)"x-accel-buffering:",
					(const uint8_t *)"no", 2, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const uint8_t *)"odata-version:",
					(const uint8_t *)"4.0", 3, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	/* no idle timeout: heartbeats keep it alive, the stall cut ends it
	 * (lws_http_mark_sse is for h2 streams only in 4.1) */
	lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
	return 0;
}

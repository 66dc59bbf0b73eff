/* sse_stream.h - the HTTP side of Redfish Server-Sent Event streams
 * (EventService.ServerSentEventUri, DSP0266 "Server-sent events").
 *
 * A stream is an ordinary subscriber of the WebSocket fan-out (ws_sub.h,
 * kind FB_WS_SUB_SSE): the same ring of events rendered once, the same
 * cursor, catch-up from the journal and stall cut (ws_server.c). What is
 * SSE-only lives here: reading the request ($filter, Last-Event-ID),
 * refusing it the Redfish way, and the 200 text/event-stream head.
 *
 * Lws thread only.
 */
#ifndef FB_SSE_STREAM_H
#define FB_SSE_STREAM_H

#include "fb_buf.h"
#include "ws_sub.h"

#include <libwebsockets.h>

#include <stdint.h>

#define FB_SSE_PATH "/redfish/v1/EventService/SSE"
#define FB_SSE_HEARTBEAT ": keep-alive\n\n"

/* Why a stream was refused: the status and Base registry message to answer
 * with (rf_sse.c renders it with the router's Base table), its two args
 * (NULL: none) and a sentence for error.message. */
struct fb_sse_refusal {
	unsigned status;
	const char *message; /* "QueryParameterValueFormatError" ... */
	const char *arg1, *arg2;
	char detail[320];
	char token[64];      /* storage for arg1 */
};

/* Read the request on wsi into s: kind SSE, the compiled $filter, next_id
 * from Last-Event-ID (header, or the Last-Event-ID / lastEventId query
 * parameter) or the live head. 0: call fb_sse_start; 1: refused, *no says
 * why (nothing sent); -1: close the connection. */
int fb_sse_prepare(struct lws *wsi, struct fb_ws_sub *s, uint64_t head_id, struct fb_sse_refusal *no);

/* Send the 200 text/event-stream head and keep the connection open for
 * events (lws times it out no more). 0 or -1 (close). */
int fb_sse_start(struct lws *wsi);


#endif

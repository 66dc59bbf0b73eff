/* rf_sse.h - the EventService's ServerSentEventUri in the Redfish router
 * (rf_routes.c). The streams themselves are subscribers of the WebSocket
 * fan-out (broker/http/ws_server.h, sse_stream.h): this only answers the
 * request the router hands over. */
#ifndef FB_RF_SSE_H
#define FB_RF_SSE_H

#include "rf_route.h"

/* GET /redfish/v1/EventService/SSE[?$filter=...] (Last-Event-ID header or
 * query parameter): 200 text/event-stream and the stream, or a Redfish 400
 * naming the bad token, or 503 EventSubscriptionLimitExceeded. */
int fb_rf_sse_get(struct fb_rf_ctx *c);

#endif

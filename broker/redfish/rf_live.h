/* rf_live.h - EventDestinations that live only as long as a connection (the
 * SSE streams of rf_sse), listed in /redfish/v1/EventService/Subscriptions
 * beside the stored subscriptions (rf_sub_store.h).
 *
 * The stream's owner adds an entry when a stream opens and removes it when the
 * stream ends. A DELETE of the destination (rf_event_service.c) calls
 * fb_rf_live_close: the entry is gone at once and the owner's close callback
 * runs, outside the registry's lock, on the thread that handled the DELETE;
 * the callback must only ask the stream's thread to close it (a flag plus
 * lws_cancel_service, say). Removing an id that is not there is a no-op, so
 * the owner may call fb_rf_live_remove from its own close path afterwards.
 *
 * Threads: every function is safe from any thread (one mutex).
 */
#ifndef FB_RF_LIVE_H
#define FB_RF_LIVE_H

#include "fb_buf.h"

#include <stddef.h>

#define FB_RF_LIVE_ID_MAX 32 /* "SSE-<n>", NUL included */

struct fb_rf_live;

/* Called with the id of the destination being deleted. */
typedef void (*fb_rf_live_close_fn)(void *arg, const char *id);

struct fb_rf_live_entry {
	const char *destination; /* "redfish-sse://127.0.0.1:40312" */
	const char *context;     /* service-made Context, or "" */
	const char *filter;      /* the stream's $filter as sent, or "" */
	fb_rf_live_close_fn close;
	void *arg;
};

struct fb_rf_live *fb_rf_live_new(void);
void fb_rf_live_free(struct fb_rf_live *r);

/* Add a destination (the strings are copied) and write its Id ("SSE-<n>",
 * never reused while the broker runs) into id. 0 or -ENOMEM. */
int fb_rf_live_add(struct fb_rf_live *r, const struct fb_rf_live_entry *e,
		   char id[FB_RF_LIVE_ID_MAX]);
/* The stream ended on its own. No-op for an unknown id. */
void fb_rf_live_remove(struct fb_rf_live *r, const char *id);
/* DELETE: remove and call the owner's close callback. 0 or -ENOENT. */
int fb_rf_live_close(struct fb_rf_live *r, const char *id);

/* 1 if id names a live destination. */
int fb_rf_live_has(struct fb_rf_live *r, const char *id);
/* Append the EventDestination JSON of id (the member GET). 0, -ENOENT or
 * -ENOMEM. */
int fb_rf_live_member_json(struct fb_rf_live *r, const char *id, struct fb_buf *out);
/* Append ",{"@odata.id":".../Subscriptions/<id>"}" for every live
 * destination (sep_first: start with "" instead of "," for the first one);
 * returns the number appended, or -ENOMEM. */
int fb_rf_live_members(struct fb_rf_live *r, int sep_first, struct fb_buf *out);

#endif

/* status.h - the broker part of GET /status, rebuilt once a second on the
 * loop (which owns the state) and handed to the WebSocket thread as a string. */
#ifndef FB_STATUS_H
#define FB_STATUS_H

#include "broker.h"

struct fb_status;

struct fb_status *fb_status_new(void);
void fb_status_free(struct fb_status *s);
/* Take a rate sample (once a second). */
void fb_status_sample(struct fb_status *s, const struct fb_broker *b, uint64_t now_ns);
/* The status JSON (caller frees), or NULL. */
char *fb_status_json(struct fb_status *s, struct fb_broker *b, uint64_t now_ns);

#endif

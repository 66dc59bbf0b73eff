/* rf_etag.h - entity tags for Redfish resources and the conditional
 * headers (If-Match, If-None-Match).
 *
 * A resource's ETag is a weak tag over its JSON as served without the
 * "@odata.etag" member: W/"<16 hex digits of FNV-1a 64>". The same state
 * always gives the same tag, so a client's If-Match compares states.
 * Pure functions.
 */
#ifndef FB_RF_ETAG_H
#define FB_RF_ETAG_H

#include <stddef.h>

#define FB_RF_ETAG_MAX 24 /* W/"0123456789abcdef" + NUL */

/* Write the tag of bytes [p, p+n) into out (FB_RF_ETAG_MAX bytes). */
void fb_rf_etag(const void *p, size_t n, char out[FB_RF_ETAG_MAX]);
/* 1 if the header value (a list of tags, or "*") names etag, weak or
 * strong form alike; 0 if not. A NULL header matches nothing. */
int fb_rf_etag_listed(const char *header, const char *etag);

#endif

/* fb_addr.h - "host:port" parsing shared by the daemon's config and the CLI. */
#ifndef FB_ADDR_H
#define FB_ADDR_H

#include <stddef.h>

/* Parse "HOST:PORT", "[IPV6]:PORT" or, when default_host is not NULL,
 * ":PORT" (meaning default_host). A bare IPv6 address without brackets is
 * refused as ambiguous; the port must be 1..65535. Returns 0, or
 * FB_EMALFORMED for the form, FB_ETOOBIG when host does not fit hostsz. */
int fb_addr_parse(const char *s, const char *default_host, char *host, size_t hostsz, int *port);

#endif

#include "fb_addr.h"

#include "fb_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fb_addr_parse(const char *s, const char *default_host, char *host, size_t hostsz, int *port)
{
	const char *h = s, *colon;
	size_t hlen;
	if (!s || !*s)
		return FB_EMALFORMED;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':' || close == s + 1)
			return FB_EMALFORMED;
		h = s + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return FB_EMALFORMED;
		hlen = (size_t)(colon - s);
	}
	char *end;
	errno = 0;
	long p = strtol(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end || errno || p < 1 || p > 65535)
		return FB_EMALFORMED;
	if (hlen == 0) {
		if (!default_host)
			return FB_EMALFORMED;
		h = default_host;
		hlen = strlen(h);
	}
	if (hlen + 1 > hostsz)
		return FB_ETOOBIG;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	*port = (int)p;
	return 0;
}

#include "fb_err.h"

#include <stdio.h>
#include <string.h>

const char *fb_strerror(int err)
{
	switch (err) {
	case FB_OK: return "success";
	case FB_EAGAIN: return "incomplete data";
	case FB_ETRUNC: return "truncated: a length points past the end";
	case FB_ETOOBIG: return "too big";
	case FB_EVERSION: return "unsupported protocol version";
	case FB_EMALFORMED: return "malformed message";
	case FB_ECORRUPT: return "corrupt record (CRC mismatch)";
	case FB_ECONFIG: return "bad configuration";
	case FB_EGONE: return "data no longer retained";
	case FB_EFULL: return "queue full";
	case FB_EPROTO: return "protocol violation";
	default: break;
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}

int fb_err_vset(char *err, size_t errsz, int rc, const char *fmt, va_list ap)
{
	if (!err || !errsz)
		return rc;
	vsnprintf(err, errsz, fmt, ap);
	/* Messages quote bytes from the network and end up in logs and on users'
	 * terminals: no control characters (escape sequences) get through. */
	for (char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return rc;
}

int fb_err_set(char *err, size_t errsz, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fb_err_vset(err, errsz, rc, fmt, ap);
	va_end(ap);
	return rc;
}

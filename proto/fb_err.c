#include "fb_err.h"

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

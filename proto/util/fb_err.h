/* fb_err.h - error codes shared by every fabricbus component.
 *
 * Functions return 0 on success and a negative value on failure: either a
 * negative errno (-ENOMEM, -EIO, ...) or one of the FB_E* codes below, which
 * sit far below the errno range so that the two never collide.
 */
#ifndef FB_ERR_H
#define FB_ERR_H

#include <stdarg.h>
#include <stddef.h>

enum fb_err {
	FB_OK = 0,
	FB_EAGAIN = -1000,    /* need more bytes (incomplete frame) */
	FB_ETRUNC = -1001,    /* a length field points past the end */
	FB_ETOOBIG = -1002,   /* frame or field larger than allowed */
	FB_EVERSION = -1003,  /* unsupported protocol version */
	FB_EMALFORMED = -1004,/* bytes do not form a valid message */
	FB_ECORRUPT = -1005,  /* on-disk record failed its CRC */
	FB_ECONFIG = -1006,   /* bad configuration */
	FB_EGONE = -1007,     /* requested data was removed (retention) */
	FB_EFULL = -1008,     /* a bounded queue or buffer is full */
	FB_EPROTO = -1009,    /* valid frame, wrong place in the conversation */
};

/* Human text for an fb_err or a negative errno. Never NULL. */
const char *fb_strerror(int err);

/* A parser's or a client's refusal: the one-line reason into err (when err
 * is not NULL and errsz > 0), and rc returned, so that one statement both
 * explains and fails: `return fb_err_set(err, errsz, FB_EMALFORMED, ...)`. */
int fb_err_set(char *err, size_t errsz, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int fb_err_vset(char *err, size_t errsz, int rc, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#endif

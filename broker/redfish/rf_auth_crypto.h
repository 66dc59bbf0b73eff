/* rf_auth_crypto.h - the few primitives Redfish auth needs: random bytes
 * from the kernel's CSPRNG, SHA-256, a comparison whose time does not depend
 * on where two buffers differ, and hex. Used by rf_account (the verified
 * password cache) and rf_session (tokens are kept only as digests). */
#ifndef FB_RF_AUTH_CRYPTO_H
#define FB_RF_AUTH_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define FB_RF_DIGEST_LEN 32

/* n bytes from getrandom(2) (blocking until the pool is seeded). 0 or -errno. */
int fb_rf_random(void *buf, size_t n);
/* SHA-256 of a then b (b may be NULL). 0, or -ENOMEM when OpenSSL could
 * not allocate its context. */
int fb_rf_digest(const void *a, size_t alen, const void *b, size_t blen,
		 uint8_t out[FB_RF_DIGEST_LEN]);
/* 1 when the n bytes are equal; time depends on n only. */
int fb_rf_equal(const void *a, const void *b, size_t n);
/* 2n lower-case hex digits and a NUL into out (2n+1 bytes). */
void fb_rf_hex(const uint8_t *in, size_t n, char *out);

#endif

/* rf_auth_crypto.c - CSPRNG, SHA-256, constant-time compare (see the .h). */
#include "rf_auth_crypto.h"

#include <errno.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/random.h>

int fb_rf_random(void *buf, size_t n)
{
	uint8_t *p = buf;
	while (n > 0) {
		ssize_t r = getrandom(p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int fb_rf_digest(const void *a, size_t alen, const void *b, size_t blen,
		 uint8_t out[FB_RF_DIGEST_LEN])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned n = 0;
	int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) && EVP_DigestUpdate(c, a, alen) &&
		 (!b || EVP_DigestUpdate(c, b, blen)) && EVP_DigestFinal_ex(c, out, &n) &&
		 n == FB_RF_DIGEST_LEN;
	EVP_MD_CTX_free(c);
	return ok ? 0 : -ENOMEM;
}

int fb_rf_equal(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

void fb_rf_hex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

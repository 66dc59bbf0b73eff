/* fuzz_rf_tokens.c - libFuzzer target for the bearer tokens file parser
 * (broker/redfish/rf_token.c, HttpTokens). Accepted entries must keep the
 * promises of rf_token.h (a valid name and role, at most FB_RF_TOKENS_MAX),
 * a refusal leaves nothing allocated and names its line, and a lookup of
 * any prefix of the input never matches unless its digest is listed. */
#include "fb_err.h"
#include "rf_auth_priv.h"
#include "rf_token.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

static int name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > FB_RF_USER_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.@", s[i]))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_rf_bearers b;
	char err[256];
	int rc = fb_rf_bearers_parse((const char *)data, size, "fuzz", &b, err, sizeof(err));
	if (rc) {
		if (b.v || b.n || !memchr(err, '\0', sizeof(err)) || strncmp(err, "fuzz:", 5) != 0)
			__builtin_trap();
		return 0;
	}
	if (b.n > FB_RF_TOKENS_MAX)
		__builtin_trap();
	for (size_t i = 0; i < b.n; i++)
		if (!name_ok(b.v[i].name) || !fb_rf_role_name(b.v[i].role))
			__builtin_trap();
	const struct fb_rf_bearer *e = fb_rf_bearer_find(&b, (const char *)data,
							 size > FB_RF_TOKEN_TEXT_MAX ? FB_RF_TOKEN_TEXT_MAX : size);
	if (e && (e < b.v || e >= b.v + b.n))
		__builtin_trap();
	fb_rf_bearers_free(&b);
	return 0;
}

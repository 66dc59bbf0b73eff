/* fuzz_http_headers.c - libFuzzer target for the broker's reading of the
 * Content-Length and Content-Type of POST /fabric/jobs and the Redfish
 * writes (broker/http/ws_http.c), on the header value as lws_hdr_copy hands
 * it over (NUL-terminated; -1 when it does not fit). Each answer is checked
 * against a plain oracle: Content-Length is 1..19 decimal digits, nothing
 * else; Content-Type is application/json, any case, alone or followed by
 * ';', space or tab. */
#include "ws_http.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void content_length(const uint8_t *data, size_t size)
{
	char v[24];
	int n = size < sizeof(v) ? (int)size : -1;
	if (n >= 0) {
		memcpy(v, data, size);
		v[size] = '\0';
	}
	unsigned long long got = 0;
	int rc = fb_ws_http_parse_content_length(v, n, &got);
	int digits = n >= 1 && n <= 19;
	for (int i = 0; digits && i < n; i++)
		digits = v[i] >= '0' && v[i] <= '9';
	if (digits != (rc == 0))
		__builtin_trap();
	if (rc == 0 && got != strtoull(v, NULL, 10))
		__builtin_trap();
}

static void content_type(const uint8_t *data, size_t size)
{
	char v[128];
	size_t n = size < sizeof(v) - 1 ? size : sizeof(v) - 1;
	memcpy(v, data, n);
	v[n] = '\0';
	int want = strlen(v) >= 16 && strncasecmp(v, "application/json", 16) == 0 &&
		   (v[16] == '\0' || v[16] == ';' || v[16] == ' ' || v[16] == '\t');
	if (fb_ws_http_ctype_is_json(v) != want)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	content_length(data, size);
	content_type(data, size);
	return 0;
}

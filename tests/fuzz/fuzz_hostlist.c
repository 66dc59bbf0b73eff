/* fuzz_hostlist.c - libFuzzer target for proto/fb_hostlist, which expands
 * the ?nodes= query of GET /fabric/map on the broker's lws thread. Any
 * crash, out-of-bounds read or leak is a bug, and so is a broken promise:
 * every name 1..63 bytes of name bytes, as many names as counted, at most
 * the limit, and none at all before a refusal. */
#include "fb_hostlist.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAX_NAMES 4096 /* the broker's is 65536; smaller keeps runs fast */

struct seen {
	size_t n;
};

static int check_name(void *arg, const char *name, size_t len)
{
	struct seen *s = arg;
	if (len == 0 || len > FB_HOSTLIST_NAME_MAX || strlen(name) != len)
		__builtin_trap();
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c <= 0x20 || c >= 0x7f || c == ',' || c == '[' || c == ']')
			__builtin_trap();
	}
	if (++s->n > MAX_NAMES)
		__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen s = { 0 };
	size_t count = 0, count2 = 0;
	char err[160];
	err[0] = 'x';
	int rc = fb_hostlist_expand((const char *)data, size, MAX_NAMES, check_name, &s, &count, err,
				    sizeof(err));
	if (rc == 0) {
		/* the counting pass agrees with the expansion */
		if (count != s.n || count == 0 ||
		    fb_hostlist_expand((const char *)data, size, MAX_NAMES, NULL, NULL, &count2, NULL,
				       0) != 0 || count2 != count)
			__builtin_trap();
	} else if (s.n != 0 || memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0') {
		__builtin_trap(); /* a refusal hands out no name and says why */
	}
	return 0;
}

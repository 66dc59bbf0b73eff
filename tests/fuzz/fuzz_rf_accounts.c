/* fuzz_rf_accounts.c - libFuzzer target for the Redfish accounts file parser
 * (broker/redfish/rf_account.c). The file is a secret the operator writes,
 * but a parser that crashes or accepts what it promises to refuse would
 * let one bad line open the service. Accepted accounts must keep the
 * promises of rf_account.h, and writing them back with
 * fb_rf_accounts_upsert must parse to the same accounts. */
#include "fb_err.h"
#include "rf_account.h"
#include "rf_auth_priv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_accepted(const struct fb_rf_accounts *a)
{
	char *text = NULL, *next;
	size_t len = 0, nlen;
	for (size_t i = 0; i < a->n; i++) {
		const struct fb_rf_account *x = &a->v[i];
		if (!fb_rf_user_valid(x->user) || !fb_rf_role_name(x->role) || x->hash[0] != '$' ||
		    strchr(x->hash, ':') || strchr(x->hash, '\n'))
			__builtin_trap();
		for (size_t j = 0; j < i; j++)
			if (strcmp(a->v[j].user, x->user) == 0)
				__builtin_trap();
		if (fb_rf_accounts_upsert(text, len, x->user, fb_rf_role_name(x->role), x->hash, x->enabled, &next,
					  &nlen))
			__builtin_trap();
		free(text);
		text = next;
		len = nlen;
	}
	struct fb_rf_accounts b;
	char err[256];
	if (fb_rf_accounts_parse(text ? text : "", len, "again", &b, err, sizeof(err)) || b.n != a->n)
		__builtin_trap();
	for (size_t i = 0; i < b.n; i++)
		if (strcmp(b.v[i].user, a->v[i].user) || b.v[i].role != a->v[i].role ||
		    strcmp(b.v[i].hash, a->v[i].hash) || b.v[i].enabled != a->v[i].enabled)
			__builtin_trap();
	/* and removing them all again leaves no account */
	for (size_t i = 0; i < a->n; i++) {
		if (fb_rf_accounts_remove(text, len, a->v[i].user, &next, &nlen))
			__builtin_trap();
		free(text);
		text = next;
		len = nlen;
	}
	fb_rf_accounts_free(&b);
	if (fb_rf_accounts_parse(text, len, "empty", &b, err, sizeof(err)) || b.n != 0)
		__builtin_trap();
	fb_rf_accounts_free(&b);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_rf_accounts a;
	char err[256];
	int rc = fb_rf_accounts_parse((const char *)data, size, "fuzz", &a, err, sizeof(err));
	if (rc == 0) {
		check_accepted(&a);
		fb_rf_accounts_free(&a);
	} else if (a.v || a.n || memchr(err, '\0', sizeof(err)) == NULL) {
		__builtin_trap();
	}
	return 0;
}

/* rf_account_store.c - account changes through the file (see the .h). */
#include "rf_account_store.h"

#include "fb_err.h"
#include "fb_file.h"
#include "fb_secret_file.h"
#include "rf_auth_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The new text: parse it, write it, then adopt it. */
static int commit(struct fb_rf_auth_core *c, char *text, size_t len, char *err, size_t errsz)
{
	struct fb_rf_accounts next;
	const char *step = NULL;
	int rc = fb_rf_accounts_parse(text, len, c->accounts_path, &next, err, errsz);
	if (rc)
		return rc;
	rc = fb_file_replace(c->accounts_path, text, len, 0600, &step);
	if (rc) {
		fb_rf_accounts_free(&next);
		return fb_err_set(err, errsz, rc, "%s: cannot %s it: %s", c->accounts_path,
				  step ? step : "write", fb_strerror(rc));
	}
	fb_rf_accounts_free(&c->accounts);
	c->accounts = next;
	return 0;
}

static int read_file(struct fb_rf_auth_core *c, char **text, size_t *len, char *err,
		     size_t errsz)
{
	return fb_secret_file_read(c->accounts_path, "password hashes", FB_RF_ACCOUNTS_FILE_MAX, text,
				   len, err, errsz);
}

/* Read the file, change user's line (remove, or set role/hash/flags),
 * then commit. */
static int change(struct fb_rf_auth_core *c, const char *user, int remove, int role,
		  const char *hash, int flags, char *err, size_t errsz)
{
	char *old, *text = NULL;
	size_t len, n;
	int rc = read_file(c, &old, &len, err, errsz);
	if (rc)
		return rc;
	rc = remove ? fb_rf_accounts_remove(old, len, user, &text, &n)
		    : fb_rf_accounts_upsert(old, len, user, fb_rf_role_name(role), hash, flags, &text,
					    &n);
	free(old);
	if (rc)
		return fb_err_set(err, errsz, rc, "%s: %s", c->accounts_path, fb_strerror(rc));
	rc = commit(c, text, n, err, errsz);
	free(text);
	return rc;
}

int fb_rf_account_store_set(struct fb_rf_auth_core *c, const char *user, int role,
			    const char *hash, int flags, char *err, size_t errsz)
{
	return change(c, user, 0, role, hash, flags, err, errsz);
}

int fb_rf_account_store_remove(struct fb_rf_auth_core *c, const char *user, char *err,
			       size_t errsz)
{
	return change(c, user, 1, 0, NULL, 0, err, errsz);
}

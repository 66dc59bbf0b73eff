/* rf_account_store.h - changing Redfish accounts over HTTP (POST, PATCH,
 * DELETE of /redfish/v1/AccountService/Accounts) writes the accounts file
 * as `fabricbus passwd` does: the file is read again (so an edit made by
 * hand meanwhile is kept), the one line is replaced, added or removed, the
 * result is parsed (nothing unparseable is ever written), the file is
 * replaced crash-safely with mode 0600, and only then do the accounts in
 * memory change. On any error nothing changes, on disk or in memory.
 *
 * Lws thread (the accounts' owner); the write is a few ms of fsync.
 */
#ifndef FB_RF_ACCOUNT_STORE_H
#define FB_RF_ACCOUNT_STORE_H

#include "rf_auth_core.h"

#include <stddef.h>

/* Make or replace user's line (hash: a crypt(3) hash, rf_account.h). 0, or
 * a negative error with "path: why" in err. */
int fb_rf_account_store_set(struct fb_rf_auth_core *c, const char *user, int role,
			    const char *hash, int flags, char *err, size_t errsz);
/* Remove user's line. 0 or a negative error with the reason in err. */
int fb_rf_account_store_remove(struct fb_rf_auth_core *c, const char *user, char *err,
			       size_t errsz);

#endif

/* fb_secret_file.h - files that hold secrets (SNMP communities and USM
 * passphrases, Redfish password hashes): refused unless only their owner can
 * read them, and the owner is this process's user or root.
 *
 * A daemon that read such a file while others could read it would be
 * vouching for secrets anyone on the machine may already have; refusing
 * to start names the file and the chmod/chown that fixes it.
 */
#ifndef FB_SECRET_FILE_H
#define FB_SECRET_FILE_H

#include <stddef.h>

/* 0, or -errno / FB_ECONFIG with "path: why; what to do" in err. what
 * names the secrets in the message ("SNMP secrets", "password hashes"). */
int fb_secret_file_check(const char *path, const char *what, char *err, size_t errsz);

/* Open path, check the opened file as above (fstat: no race between the
 * check and the read) and read it whole, up to max bytes, into *data
 * (malloc'd, NUL-terminated; the caller frees it). 0, or -errno, FB_ECONFIG
 * or FB_ETOOBIG with the reason in err. */
int fb_secret_file_read(const char *path, const char *what, size_t max, char **data,
			size_t *len, char *err, size_t errsz);

#endif

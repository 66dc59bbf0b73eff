/* fb_spank_conf.h - the SPANK plugin's arguments from plugstack.conf.
 *
 *   required /usr/lib/.../spank_fabricbus.so broker=10.0.0.5:7412 fail_on_down=yes
 *
 * Pure (no Slurm, no I/O) so that the unit test can run it.
 */
#ifndef FB_SPANK_CONF_H
#define FB_SPANK_CONF_H

#include <stddef.h>
#include <stdint.h>

#define FB_SPANK_DEFAULT_HOST "127.0.0.1"
#define FB_SPANK_DEFAULT_PORT 7412
#define FB_SPANK_DEFAULT_TIMEOUT_MS 2000
#define FB_SPANK_MAX_TIMEOUT_MS 60000  /* a step start waits for every request */
#define FB_SPANK_DEFAULT_MAPDIR "/tmp"
#define FB_SPANK_MAPDIR_MAX 1024       /* bytes of mapdir, NUL included */
#define FB_SPANK_PATH_MAX 1024         /* bytes of token_file and tls_ca, NUL included */

struct fb_http_client;

struct fb_spank_conf {
	char host[256];        /* broker= host part (no brackets for IPv6) */
	uint16_t port;         /* broker= port part */
	char broker[272];      /* broker= as given, for messages: "10.0.0.5:7412" */
	int timeout_ms;        /* timeout=, per request */
	int fail_on_down;      /* fail_on_down=yes */
	int fail_unreachable;  /* on_unreachable=fail */
	int do_register;       /* register=yes */
	char mapdir[FB_SPANK_MAPDIR_MAX]; /* mapdir=, absolute, no trailing '/' */
	char token_file[FB_SPANK_PATH_MAX]; /* token_file=, absolute; "" = no token */
	char tls_ca[FB_SPANK_PATH_MAX];     /* tls_ca=, absolute; "" = plain HTTP */
	/* Set by the plugin from token_file and tls_ca (fb_http_auth_init, which
	 * reads files, so not here); NULL = plain HTTP, no token. */
	const struct fb_http_client *client;
};

void fb_spank_conf_defaults(struct fb_spank_conf *c);

/* Apply the arguments argv[0..argc-1] (each "key=value") over the defaults.
 * Returns 0, or FB_ECONFIG with err naming the argument and what is wrong,
 * e.g. "unknown argument 'timout=500' (known: broker, timeout, ...)".
 * A key given twice is refused too. On failure *c holds the defaults: nothing
 * half-applied that a caller could mistake for the configuration. */
int fb_spank_conf_parse(struct fb_spank_conf *c, int argc, char *const argv[], char *err,
			size_t errsz);

#endif

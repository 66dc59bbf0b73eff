/* cli_tail.h - private to `fabricbus tail`: its options, shared by the
 * option parser (cli_tail_opts.c) and the stream client (cli_tail.c), so the
 * client never sees getopt and the parser never sees libwebsockets.
 */
#ifndef FB_CLI_TAIL_H
#define FB_CLI_TAIL_H

#include "cli_opts.h"
#include "fb_buf.h"

#include <stdint.h>

/* Exit statuses; docs/cli.md and `fabricbus tail --help` list them. */
enum { TAIL_OK = 0, TAIL_RUNTIME = 1, TAIL_USAGE = 2, TAIL_MISSED = 3 };

struct fb_tail_opts {
	char host[256];
	int port;
	uint64_t since;
	int have_since;
	const char *http;                       /* --http, before the split; borrowed */
	const char *prefix, *severity, *origin; /* borrowed from argv */
	struct fb_cli_stream_opts s;            /* --count --timeout --idle-exit --quiet --stats */
	int reconnect, events_only, validate;
	int all;                                /* --all: quiet events too (quiet=1) */
	const char *token_file, *tls_ca;        /* --token-file, --tls-ca (or the env) */
};

/* Fill o (zeroed by the caller) from the arguments after "tail". Returns 0 to
 * run, -1 when --help was printed (exit 0), or TAIL_USAGE after printing
 * the problem and the usage on stderr. */
int fb_tail_opts_parse(int argc, char **argv, struct fb_tail_opts *o);

/* Append the filter options to b as "&prefix=..&severity=..&origin=..&quiet=1",
 * percent-encoded and NUL-terminated (the NUL not counted in b->len).
 * 0, or -1 when out of memory. */
int fb_tail_opts_filters(const struct fb_tail_opts *o, struct fb_buf *b);

#endif

/* cli_opts.h - one option parser for the commands that read an event stream
 * (`fabricbus tail` and `fabricbus consume`): the getopt loop, the options
 * both take (--count, --timeout, --idle-exit, --quiet, --stats, --help) and
 * the wording of every usage error, so that the two commands refuse the same
 * mistake with the same line.
 */
#ifndef FB_CLI_OPTS_H
#define FB_CLI_OPTS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#define FB_CLI_USAGE 2  /* the exit status of a usage error (every command) */

/* A command: its name for messages ("tail": "fabricbus tail: ..."), its
 * usage (to stderr after an error) and --help text (stdout). */
struct fb_cli_cmd {
	const char *name;
	void (*usage)(FILE *f);
	void (*help)(void);
};

/* What both stream readers take. */
struct fb_cli_stream_opts {
	uint64_t count;          /* --count N; 0: unbounded */
	double timeout_s, idle_s; /* --timeout, --idle-exit; 0: none */
	int quiet, stats;
};

/* "fabricbus NAME: " and fmt with arg, a newline, then the usage on stderr.
 * Returns FB_CLI_USAGE. */
int fb_cli_bad(const struct fb_cli_cmd *c, const char *fmt, const char *arg);

/* *dst = val when val is not empty; else fb_cli_bad(c, "%s", what). 0 or
 * FB_CLI_USAGE. */
int fb_cli_nonempty(const struct fb_cli_cmd *c, const char *val, const char *what,
		    const char **dst);

/* getopt_long over the command's own options (own, NULL-terminated, codes
 * 256..511) and the common ones. Each own option goes to on_opt(arg, code,
 * optarg), which returns 0 or FB_CLI_USAGE (after fb_cli_bad). Returns 0 to
 * run, -1 when --help was printed (exit 0), or FB_CLI_USAGE after printing
 * the problem and the usage on stderr. Arguments that are not options are
 * refused. */
int fb_cli_parse(const struct fb_cli_cmd *c, int argc, char **argv, const struct option *own,
		 int (*on_opt)(void *arg, int code, const char *val), void *arg,
		 struct fb_cli_stream_opts *s);

#endif

/* cli_opts.h - the CLI's options: one table of every command's long options
 * (which command takes which), and one parser for the commands that read an
 * event stream (`fabricbus tail` and `fabricbus consume`): the getopt loop,
 * the options both take (--count, --timeout, --idle-exit, --quiet, --stats,
 * --help) and the wording of every usage error, so that the two commands
 * refuse the same mistake with the same line.
 */
#ifndef FB_CLI_OPTS_H
#define FB_CLI_OPTS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#define FB_CLI_USAGE 2  /* the exit status of a usage error (every command) */

/* The commands, as bits of the CLI's one option table (cli_opts.c), which
 * says what each command takes. */
enum {
	FB_CLI_TAIL = 1, FB_CLI_CONSUME = 2, FB_CLI_PUBLISH = 4, FB_CLI_STATUS = 8,
	FB_CLI_TOPOLOGY = 16, FB_CLI_PASSWD = 32,
};

/* getopt codes of tail's and consume's options (publish, status, topology
 * and passwd use their short letters). */
enum {
	FB_OPT_HTTP = 256, FB_OPT_SINCE, FB_OPT_PREFIX, FB_OPT_SEVERITY, FB_OPT_ORIGIN,
	FB_OPT_RECONNECT, FB_OPT_EVONLY, FB_OPT_VALIDATE, FB_OPT_TOKEN, FB_OPT_CA, FB_OPT_ALL,
	FB_OPT_KAFKA, FB_OPT_GROUP, FB_OPT_TOPICS, FB_OPT_BEGIN, FB_OPT_SET, FB_OPT_META,
	/* handled by fb_cli_parse */
	FB_OPT_COUNT = 512, FB_OPT_TIMEOUT, FB_OPT_IDLE, FB_OPT_QUIET, FB_OPT_STATS,
};

#define FB_CLI_OPTS_MAX 24 /* room for one command's table, the terminator included */

/* The getopt_long table of command cmd (one FB_CLI_* bit), terminated, in
 * out[FB_CLI_OPTS_MAX], and getopt reset for a new scan of argv (optind 0:
 * the dispatcher may have run getopt already) with its own messages off
 * (opterr 0: the command words its errors). Returns out. */
const struct option *fb_cli_options(unsigned cmd, struct option *out);

/* A command: its name for messages ("tail": "fabricbus tail: ..."), its
 * usage (to stderr after an error) and --help text (stdout). */
struct fb_cli_cmd {
	const char *name;
	unsigned bit;                 /* FB_CLI_TAIL or FB_CLI_CONSUME */
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

/* getopt_long over the options of c->bit (tail or consume). --count,
 * --timeout, --idle-exit, --quiet and --stats fill s; --help prints c->help;
 * every other option goes to on_opt(arg, code, optarg), which returns 0 or
 * FB_CLI_USAGE (after fb_cli_bad). Returns 0 to run, -1 when --help was
 * printed (exit 0), or FB_CLI_USAGE after printing the problem and the usage
 * on stderr. Arguments that are not options are refused. */
int fb_cli_parse(const struct fb_cli_cmd *c, int argc, char **argv,
		 int (*on_opt)(void *arg, int code, const char *val), void *arg,
		 struct fb_cli_stream_opts *s);

#endif

/* cli_opts.c - the stream readers' option parser (cli_opts.h). */
#include "cli_opts.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Codes of the common options: above any command's own (256..511). */
enum { O_COUNT = 512, O_TIMEOUT, O_IDLE, O_QUIET, O_STATS, O_HELP = 'h' };

static const struct option common[] = {
	{ "count", required_argument, NULL, O_COUNT },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "idle-exit", required_argument, NULL, O_IDLE },
	{ "quiet", no_argument, NULL, O_QUIET },
	{ "stats", no_argument, NULL, O_STATS },
	{ "help", no_argument, NULL, O_HELP },
};
#define N_COMMON (sizeof(common) / sizeof(common[0]))
#define OWN_MAX 32

int fb_cli_bad(const struct fb_cli_cmd *c, const char *fmt, const char *arg)
{
	fprintf(stderr, "fabricbus %s: ", c->name);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	c->usage(stderr);
	return FB_CLI_USAGE;
}

int fb_cli_nonempty(const struct fb_cli_cmd *c, const char *val, const char *what,
		    const char **dst)
{
	if (!*val)
		return fb_cli_bad(c, "%s", what);
	*dst = val;
	return 0;
}

static int common_opt(const struct fb_cli_cmd *c, int code, const char *val,
		      struct fb_cli_stream_opts *s)
{
	switch (code) {
	case O_COUNT:
		if (fb_cli_parse_u64(val, &s->count) || !s->count)
			return fb_cli_bad(c, "--count wants a positive number, not '%s'", val);
		return 0;
	case O_TIMEOUT:
		if (fb_cli_parse_secs(val, &s->timeout_s))
			return fb_cli_bad(c, "--timeout wants seconds > 0, not '%s'", val);
		return 0;
	case O_IDLE:
		if (fb_cli_parse_secs(val, &s->idle_s))
			return fb_cli_bad(c, "--idle-exit wants seconds > 0, not '%s'", val);
		return 0;
	case O_QUIET: s->quiet = 1; return 0;
	default: s->stats = 1; return 0; /* O_STATS */
	}
}

int fb_cli_parse(const struct fb_cli_cmd *c, int argc, char **argv, const struct option *own,
		 int (*on_opt)(void *arg, int code, const char *val), void *arg,
		 struct fb_cli_stream_opts *s)
{
	struct option lo[OWN_MAX + N_COMMON + 1];
	size_t n = 0;
	int code, r;

	while (own[n].name && n < OWN_MAX) {
		lo[n] = own[n];
		n++;
	}
	memcpy(lo + n, common, sizeof(common));
	memset(lo + n + N_COMMON, 0, sizeof(lo[0]));

	optind = 0; /* full rescan: the dispatcher may have run getopt already */
	opterr = 0;
	while ((code = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		if (code == O_HELP) {
			c->help();
			return -1;
		}
		if (code == ':')
			return fb_cli_bad(c, "%s needs a value", argv[optind - 1]);
		if (code == '?') {
			if (optopt && optopt < 256) {
				char one[2] = { (char)optopt, 0 };

				return fb_cli_bad(c, "unknown option -%s", one);
			}
			return fb_cli_bad(c, "unknown option or missing value: %s", argv[optind - 1]);
		}
		r = code >= O_COUNT ? common_opt(c, code, optarg, s) : on_opt(arg, code, optarg);
		if (r)
			return r;
	}
	if (optind < argc)
		return fb_cli_bad(c, "unexpected argument '%s'", argv[optind]);
	return 0;
}

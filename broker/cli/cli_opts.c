/* cli_opts.c - the stream readers' option parser (cli_opts.h). */
#include "cli_opts.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define STREAM (FB_CLI_TAIL | FB_CLI_CONSUME)
#define ALL 63u

/* Every command's long options, and which commands take them. */
static const struct row {
	struct option o;
	unsigned cmds;
} rows[] = {
	{ { "help", no_argument, NULL, 'h' }, ALL },
	/* tail and consume */
	{ { "count", required_argument, NULL, FB_OPT_COUNT }, STREAM },
	{ { "timeout", required_argument, NULL, FB_OPT_TIMEOUT }, STREAM },
	{ { "idle-exit", required_argument, NULL, FB_OPT_IDLE }, STREAM },
	{ { "quiet", no_argument, NULL, FB_OPT_QUIET }, STREAM },
	{ { "stats", no_argument, NULL, FB_OPT_STATS }, STREAM },
	{ { "http", required_argument, NULL, FB_OPT_HTTP }, FB_CLI_TAIL },
	{ { "since", required_argument, NULL, FB_OPT_SINCE }, FB_CLI_TAIL },
	{ { "prefix", required_argument, NULL, FB_OPT_PREFIX }, FB_CLI_TAIL },
	{ { "severity", required_argument, NULL, FB_OPT_SEVERITY }, FB_CLI_TAIL },
	{ { "origin", required_argument, NULL, FB_OPT_ORIGIN }, FB_CLI_TAIL },
	{ { "reconnect", no_argument, NULL, FB_OPT_RECONNECT }, FB_CLI_TAIL },
	{ { "events-only", no_argument, NULL, FB_OPT_EVONLY }, FB_CLI_TAIL },
	{ { "validate", no_argument, NULL, FB_OPT_VALIDATE }, FB_CLI_TAIL },
	{ { "token-file", required_argument, NULL, FB_OPT_TOKEN }, FB_CLI_TAIL },
	{ { "tls-ca", required_argument, NULL, FB_OPT_CA }, FB_CLI_TAIL },
	{ { "all", no_argument, NULL, FB_OPT_ALL }, FB_CLI_TAIL },
	{ { "kafka", required_argument, NULL, FB_OPT_KAFKA }, FB_CLI_CONSUME },
	{ { "group", required_argument, NULL, FB_OPT_GROUP }, FB_CLI_CONSUME },
	{ { "topics", required_argument, NULL, FB_OPT_TOPICS }, FB_CLI_CONSUME },
	{ { "from-beginning", no_argument, NULL, FB_OPT_BEGIN }, FB_CLI_CONSUME },
	{ { "set", required_argument, NULL, FB_OPT_SET }, FB_CLI_CONSUME },
	{ { "with-meta", no_argument, NULL, FB_OPT_META }, FB_CLI_CONSUME },
	/* publish */
	{ { "broker", required_argument, NULL, 'b' }, FB_CLI_PUBLISH },
	{ { "agent-id", required_argument, NULL, 'a' }, FB_CLI_PUBLISH },
	{ { "timeout", required_argument, NULL, 't' }, FB_CLI_PUBLISH },
	{ { "file", required_argument, NULL, 'f' }, FB_CLI_PUBLISH | FB_CLI_PASSWD },
	{ { "count", required_argument, NULL, 'n' }, FB_CLI_PUBLISH },
	{ { "generate", required_argument, NULL, 'g' }, FB_CLI_PUBLISH },
	{ { "template", required_argument, NULL, 'T' }, FB_CLI_PUBLISH },
	{ { "quiet", no_argument, NULL, 'q' }, FB_CLI_PUBLISH },
	{ { "verbose", no_argument, NULL, 'v' }, FB_CLI_PUBLISH },
	{ { "tls-ca", required_argument, NULL, 'C' }, FB_CLI_PUBLISH },
	{ { "tls-cert", required_argument, NULL, 'E' }, FB_CLI_PUBLISH },
	{ { "tls-key", required_argument, NULL, 'K' }, FB_CLI_PUBLISH },
	/* status and topology */
	{ { "http", required_argument, NULL, 'H' }, FB_CLI_STATUS | FB_CLI_TOPOLOGY },
	{ { "json", no_argument, NULL, 'j' }, FB_CLI_STATUS },
	{ { "color", required_argument, NULL, 'C' }, FB_CLI_STATUS },
	{ { "token-file", required_argument, NULL, 'T' }, FB_CLI_STATUS | FB_CLI_TOPOLOGY },
	{ { "tls-ca", required_argument, NULL, 'A' }, FB_CLI_STATUS | FB_CLI_TOPOLOGY },
	{ { "map", required_argument, NULL, 'm' }, FB_CLI_TOPOLOGY },
	{ { "format", required_argument, NULL, 'f' }, FB_CLI_TOPOLOGY },
	{ { "output", required_argument, NULL, 'o' }, FB_CLI_TOPOLOGY },
	{ { "diff", required_argument, NULL, 'd' }, FB_CLI_TOPOLOGY },
	{ { "blast", required_argument, NULL, 'b' }, FB_CLI_TOPOLOGY },
	/* passwd */
	{ { "sha512", no_argument, NULL, 's' }, FB_CLI_PASSWD },
	{ { "change-required", no_argument, NULL, 'c' }, FB_CLI_PASSWD },
};

const struct option *fb_cli_options(unsigned cmd, struct option *out)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && n < FB_CLI_OPTS_MAX - 1; i++)
		if (rows[i].cmds & cmd)
			out[n++] = rows[i].o;
	memset(&out[n], 0, sizeof(out[n]));
	optind = 0;
	opterr = 0;
	return out;
}

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
	case FB_OPT_COUNT:
		if (fb_cli_parse_u64(val, &s->count) || !s->count)
			return fb_cli_bad(c, "--count wants a positive number, not '%s'", val);
		return 0;
	case FB_OPT_TIMEOUT:
		if (fb_cli_parse_secs(val, &s->timeout_s))
			return fb_cli_bad(c, "--timeout wants seconds > 0, not '%s'", val);
		return 0;
	case FB_OPT_IDLE:
		if (fb_cli_parse_secs(val, &s->idle_s))
			return fb_cli_bad(c, "--idle-exit wants seconds > 0, not '%s'", val);
		return 0;
	case FB_OPT_QUIET: s->quiet = 1; return 0;
	default: s->stats = 1; return 0; /* FB_OPT_STATS */
	}
}

int fb_cli_parse(const struct fb_cli_cmd *c, int argc, char **argv,
		 int (*on_opt)(void *arg, int code, const char *val), void *arg,
		 struct fb_cli_stream_opts *s)
{
	struct option lo[FB_CLI_OPTS_MAX];
	int code, r;

	fb_cli_options(c->bit, lo);
	while ((code = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		if (code == 'h') {
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
		r = code >= FB_OPT_COUNT ? common_opt(c, code, optarg, s) : on_opt(arg, code, optarg);
		if (r)
			return r;
	}
	if (optind < argc)
		return fb_cli_bad(c, "unexpected argument '%s'", argv[optind]);
	return 0;
}

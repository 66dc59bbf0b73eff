/* fabricbus.c - the `fabricbus` command-line tool: top-level options, the
 * subcommand table, and helpers every subcommand shares. */
#include "cli.h"

#include "fb_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "publish", fb_cli_publish, "send events (JSON) to fabricbusd over the agent protocol" },
	{ "tail", fb_cli_tail, "follow the event stream from fabricbusd's websocket" },
	{ "status", fb_cli_status, "show broker, journal, agent and subscriber status" },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    fabricbus - command-line client for the fabricbus event broker\n"
		"\n"
		"SYNOPSIS\n"
		"    fabricbus [--help | --version] <command> [options]\n"
		"    fabricbus help <command>\n"
		"\n"
		"COMMANDS\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "    %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"    Every command takes --help for its options, defaults and examples.\n"
		"\n"
		"OPTIONS\n"
		"    -h, --help      show this help and exit\n"
		"    -V, --version   print the version and exit\n"
		"\n"
		"DEFAULTS\n"
		"    agent protocol  %s (publish --broker)\n"
		"    HTTP/websocket  %s (status --http, tail)\n"
		"\n"
		"EXIT STATUS\n"
		"    0 success, 1 runtime failure (broker unreachable, not acked in time),\n"
		"    2 usage error or bad input.\n",
		FB_CLI_DEFAULT_AGENT_ADDR, FB_CLI_DEFAULT_HTTP_ADDR);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int fb_cli_parse_addr(const char *s, char *host, unsigned hostsz, int *port)
{
	const char *h, *colon;
	size_t hlen;
	if (!s || !*s)
		goto bad;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			goto bad;
		h = s + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
		if (hlen == 0)
			goto bad;
	} else {
		colon = strrchr(s, ':');
		/* A bare IPv6 address without brackets is ambiguous: refuse it. */
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			goto bad;
		h = s;
		hlen = (size_t)(colon - s);
	}
	char *end;
	errno = 0;
	long p = strtol(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end || errno || p < 1 || p > 65535) {
		fprintf(stderr, "fabricbus: bad port in address '%s': want 1..65535\n", s);
		return -1;
	}
	if (hlen == 0) { /* ":port" means this host */
		h = "127.0.0.1";
		hlen = strlen(h);
	}
	if (hlen + 1 > hostsz) {
		fprintf(stderr, "fabricbus: host name too long in address '%s'\n", s);
		return -1;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	*port = (int)p;
	return 0;
bad:
	fprintf(stderr, "fabricbus: bad address '%s': want HOST:PORT, [IPV6]:PORT or :PORT\n",
		s ? s : "");
	return -1;
}

int main(int argc, char **argv)
{
	fb_log_init("fabricbus", 0, FB_LOG_WARN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *a = argv[1];
	if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
		printf("fabricbus %s\n", FB_VERSION);
		return 0;
	}
	if (strcmp(a, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		const struct command *c = find_command(argv[2]);
		if (!c) {
			fprintf(stderr, "fabricbus: unknown command '%s' (try: fabricbus --help)\n",
				argv[2]);
			return 2;
		}
		char *hargv[] = { argv[2], (char *)"--help", NULL };
		return c->run(2, hargv);
	}
	if (a[0] == '-') {
		fprintf(stderr, "fabricbus: unknown option '%s' (try: fabricbus --help)\n", a);
		return 2;
	}
	const struct command *c = find_command(a);
	if (!c) {
		fprintf(stderr, "fabricbus: unknown command '%s' (try: fabricbus --help)\n", a);
		return 2;
	}
	return c->run(argc - 1, argv + 1);
}

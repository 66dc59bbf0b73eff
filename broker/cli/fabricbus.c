/* fabricbus.c - the `fabricbus` command-line tool: top-level options, the
 * subcommand table, and helpers every subcommand shares. */
#include "cli.h"

#include "fb_addr.h"
#include "fb_err.h"

#include "fb_log.h"

#include <errno.h>
#include <math.h>
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
	{ "consume", fb_cli_consume, "read events from Kafka as a consumer-group member" },
	{ "topology", fb_cli_topology, "the fabric's switch tree as Slurm topology.conf or JSON" },
	{ "passwd", fb_cli_passwd, "add or change a Redfish account (hashed) in an accounts file" },
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

int fb_cli_parse_u64(const char *s, uint64_t *out)
{
	char *e;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &e, 10);
	return *e || errno ? -1 : 0;
}

int fb_cli_parse_secs(const char *s, double *out)
{
	char *e;
	errno = 0;
	*out = strtod(s, &e);
	return e == s || *e || errno || !isfinite(*out) || *out <= 0 || *out > 1e7 ? -1 : 0;
}

int fb_cli_parse_addr(const char *s, char *host, unsigned hostsz, int *port)
{
	int rc = fb_addr_parse(s, "127.0.0.1", host, hostsz, port);
	if (rc == FB_ETOOBIG)
		fprintf(stderr, "fabricbus: host name too long in address '%s'\n", s);
	else if (rc)
		fprintf(stderr, "fabricbus: bad address '%s': want HOST:PORT, [IPV6]:PORT or :PORT "
			"with a port 1..65535\n", s ? s : "");
	return rc ? -1 : 0;
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

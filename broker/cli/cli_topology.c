/* cli_topology.c - `fabricbus topology`: the switch tree of GET /fabric/map
 * as a Slurm topology.conf or JSON (topo_export.c), written only when it
 * changed, with the difference shown. */
#include "cli.h"
#include "cli_opts.h"
#include "fb_err.h"
#include "fb_file.h"
#include "fb_http.h"
#include "fb_http_auth.h"
#include "fb_usage.h"
#include "topo_export.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_TIMEOUT_MS 30000
#define MAX_MAP (256u << 20)    /* the map of 100k nodes is about 40 MB */
#define MAX_OLD_FILE (64u << 20)
#define EXIT_CHANGED 3          /* --diff: the fabric's tree is not OLD's */

static void help(void)
{
	printf("NAME\n"
	       "    fabricbus topology - the fabric's switch tree for schedulers\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    fabricbus topology [--http HOST:PORT [--token-file FILE] [--tls-ca FILE] | --map FILE]\n"
	       "                       [--format slurm|json]\n"
	       "                       [--output FILE | --diff OLD]\n"
	       "    fabricbus topology [--http HOST:PORT | --map FILE] --blast now|SWITCH|SWITCH:PORT\n"
	       "\n"
	       "DESCRIPTION\n"
	       "    Reads the fabric map (GET /fabric/map) and prints the switch tree the\n"
	       "    switch agents reported: as a Slurm topology.conf for TopologyPlugin=\n"
	       "    topology/tree (SwitchName=... Nodes=<hostlist> for the switches nodes are\n"
	       "    cabled to, SwitchName=... Switches=<hostlist> above them), or as JSON\n"
	       "    with the switches, the inter-switch links and each node's switch port.\n"
	       "    Node names are the Slurm names fabricbus-agent-node reported; a host\n"
	       "    port with no node agent behind it is left out (counted on stderr).\n"
	       "    --blast prints the blast radius instead: the named nodes with no path\n"
	       "    into the fabric and those with fewer paths (degraded), now ('now') or if\n"
	       "    SWITCH (its name or GUID) or the cable or host port at SWITCH:PORT failed\n"
	       "    on top of today's state. See docs/topology.md.\n"
	       "\n"
	       "OPTIONS\n"
	       "    -H, --http HOST:PORT  broker HTTP address (default %s)\n"
	       "        --token-file FILE send the bearer token in FILE (mode 0600; one of\n"
	       "                          fabricbusd's HttpTokens); default $FABRICBUS_TOKEN_FILE\n"
	       "        --tls-ca FILE     talk HTTPS and verify the broker's certificate\n"
	       "                          against this CA; default $FABRICBUS_TLS_CA\n"
	       "    -m, --map FILE        read a saved map instead ('-': standard input)\n"
	       "    -f, --format FMT      slurm (default) or json\n"
	       "    -o, --output FILE     write FILE (crash-safe replace) only if the content\n"
	       "                          changed; print the changed lines (-old, +new)\n"
	       "    -d, --diff OLD        print the lines that differ from OLD, write nothing\n"
	       "    -b, --blast WHAT      the blast radius (JSON) of now, SWITCH or SWITCH:PORT\n"
	       "    -h, --help            show this help\n"
	       "\n"
	       "EXAMPLES\n"
	       "    fabricbus topology > /etc/slurm/topology.conf\n"
	       "    fabricbus topology -o /etc/slurm/topology.conf && scontrol reconfigure\n"
	       "    fabricbus topology --diff /etc/slurm/topology.conf\n"
	       "    fabricbus topology --format json | jq '.Links[] | select(.LinkState != \"up\")'\n"
	       "    fabricbus topology --blast spine1\n"
	       "\n"
	       "EXIT STATUS\n"
	       "    0  printed or written (or, with --diff, the same as OLD)\n"
	       "    1  broker unreachable, not a fabric map, a file not readable or writable\n"
	       "    2  usage error\n"
	       "    3  --diff: the fabric's tree differs from OLD\n",
	       FB_CLI_DEFAULT_HTTP_ADDR);
}

static json_t *map_from_http(const char *addr, const char *token_file, const char *tls_ca)
{
	char host[256], err[600];
	int port;
	struct fb_http_resp r;
	struct fb_http_auth auth;
	if (fb_cli_parse_addr(addr, host, sizeof(host), &port))
		return NULL;
	if (fb_http_auth_init(&auth, token_file, tls_ca, err, sizeof(err))) {
		fprintf(stderr, "fabricbus topology: %s\n", err);
		return NULL;
	}
	int rc = fb_http_request_as(&auth.client, host, (uint16_t)port, "GET", "/fabric/map", NULL,
				    NULL, 0, TOPO_TIMEOUT_MS, MAX_MAP, &r, err, sizeof(err));
	fb_http_auth_free(&auth);
	if (rc) {
		fprintf(stderr, "fabricbus topology: %sfabricbusd at %s\n", rc > FB_EAGAIN ? "cannot reach " : "",
			err);
		return NULL;
	}
	json_t *j = NULL;
	if (r.status != 200) {
		fprintf(stderr, "fabricbus topology: GET /fabric/map at %s answered %d%s\n", addr, r.status,
			r.status == 503	  ? " (the first map is not rendered yet: try again)"
			: r.status == 401 ? " (give --token-file with a token of its HttpTokens)"
			: r.status == 301 ? " (it takes HTTPS: give --tls-ca)" : "");
	} else {
		json_error_t je;
		j = json_loadb((const char *)r.body.data, r.body.len, 0, &je);
		if (!j)
			fprintf(stderr, "fabricbus topology: GET /fabric/map at %s: not JSON: %s\n", addr, je.text);
	}
	fb_http_resp_free(&r);
	return j;
}

static json_t *map_from_file(const char *path)
{
	json_error_t je;
	json_t *j = strcmp(path, "-") == 0 ? json_loadf(stdin, 0, &je) : json_load_file(path, 0, &je);
	if (!j)
		fprintf(stderr, "fabricbus topology: %s: %s (line %d)\n", path, je.text, je.line);
	return j;
}

/* The whole of path, NUL-terminated, or "" when it does not exist (a
 * first run). NULL after saying why on stderr. */
static char *read_old(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (errno == ENOENT)
			return strdup("");
		fprintf(stderr, "fabricbus topology: cannot read %s: %s\n", path, strerror(errno));
		return NULL;
	}
	char *buf = malloc(MAX_OLD_FILE + 1);
	size_t n = buf ? fread(buf, 1, MAX_OLD_FILE + 1, f) : 0;
	int bad = !buf || ferror(f) || n > MAX_OLD_FILE;
	fclose(f);
	if (bad) {
		fprintf(stderr, "fabricbus topology: cannot read %s: %s\n", path,
			buf ? "larger than 64 MiB or a read error" : "out of memory");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

static char *render(json_t *map, int json, struct fb_topo_export_stats *st)
{
	char err[200] = "";
	char *text = NULL;
	if (json) {
		json_t *j = fb_topo_export_json(map, st, err, sizeof(err));
		if (j) {
			char *s = json_dumps(j, JSON_INDENT(1) | JSON_SORT_KEYS);
			json_decref(j);
			size_t n = s ? strlen(s) : 0;
			text = s ? realloc(s, n + 2) : NULL;
			if (text)
				memcpy(text + n, "\n", 2);
			else
				free(s);
		}
	} else {
		text = fb_topo_export_slurm(map, st, err, sizeof(err));
	}
	if (!text)
		fprintf(stderr, "fabricbus topology: %s\n", *err ? err : "out of memory");
	return text;
}

/* --output / --diff: compare with the old file; write when asked and
 * changed. Returns the exit status. */
static int compare(const char *path, const char *text, int write)
{
	char *old = read_old(path);
	if (!old)
		return 1;
	int same = strcmp(old, text) == 0, rc = 0;
	char *d = same ? NULL : fb_topo_line_diff(old, text);
	if (!same && !d) {
		fprintf(stderr, "fabricbus topology: out of memory\n");
		rc = 1;
	} else if (!same) {
		fputs(d, stdout);
		rc = write ? 0 : EXIT_CHANGED;
	}
	if (!same && write && !rc) {
		const char *step = NULL;
		int w = fb_file_replace(path, text, strlen(text), 0644, &step);
		if (w) {
			fprintf(stderr, "fabricbus topology: cannot %s %s: %s\n", step ? step : "write", path,
				strerror(-w));
			rc = 1;
		}
	}
	if (same)
		fprintf(stderr, "fabricbus topology: %s is up to date\n", path);
	free(old);
	free(d);
	return rc;
}

/* --blast: takes map. */
static int print_blast(json_t *map, const char *what)
{
	char err[300] = "";
	json_t *b = fb_topo_blast_json(map, what, err, sizeof(err));
	json_decref(map);
	if (!b) {
		fprintf(stderr, "fabricbus topology: --blast: %s\n", err);
		return 1;
	}
	int rc = json_dumpf(b, stdout, JSON_SORT_KEYS) || fputc('\n', stdout) == EOF || fflush(stdout);
	json_decref(b);
	return rc ? 1 : 0;
}

int fb_cli_topology(int argc, char **argv)
{
	struct option lo[FB_CLI_OPTS_MAX];
	const char *P = "fabricbus topology";
	const char *token_file = getenv("FABRICBUS_TOKEN_FILE"), *tls_ca = getenv("FABRICBUS_TLS_CA");
	const char *addr = FB_CLI_DEFAULT_HTTP_ADDR, *file = NULL, *output = NULL, *diff = NULL, *blast = NULL;
	int json = 0, c;
	fb_cli_options(FB_CLI_TOPOLOGY, lo);
	while ((c = getopt_long(argc, argv, ":H:m:f:o:d:b:h", lo, NULL)) != -1) {
		switch (c) {
		case 'H': addr = optarg; break;
		case 'm': file = optarg; break;
		case 'f':
			if (strcmp(optarg, "json") && strcmp(optarg, "slurm"))
				return fb_usage_error(P, "--format takes slurm or json, not '%s'", optarg);
			json = strcmp(optarg, "json") == 0;
			break;
		case 'o': output = optarg; break;
		case 'd': diff = optarg; break;
		case 'b': blast = optarg; break;
		case 'T': token_file = optarg; break;
		case 'A': tls_ca = optarg; break;
		case 'h': help(); return 0;
		case ':': return fb_usage_error(P, "%s needs a value", argv[optind - 1]);
		default: return fb_usage_error(P, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fb_usage_error(P, "unexpected argument '%s'", argv[optind]);
	if (output && diff)
		return fb_usage_error(P, "--output and --diff do not go together");
	if (blast && (output || diff || json))
		return fb_usage_error(P, "--blast prints JSON and goes with no --format, --output or --diff");
	json_t *map = file ? map_from_file(file) : map_from_http(addr, token_file, tls_ca);
	if (!map)
		return 1;
	if (blast)
		return print_blast(map, strcmp(blast, "now") ? blast : NULL);
	struct fb_topo_export_stats st;
	char *text = render(map, json, &st);
	json_decref(map);
	if (!text)
		return 1;
	if (st.unnamed_hosts)
		fprintf(stderr, "fabricbus topology: %zu switch ports have no named node and no switch behind "
			"them (left out: run fabricbus-agent-node on those hosts)\n", st.unnamed_hosts);
	int rc = 0;
	if (output || diff)
		rc = compare(output ? output : diff, text, output != NULL);
	else if (fputs(text, stdout) == EOF || fflush(stdout))
		rc = 1;
	free(text);
	return rc;
}

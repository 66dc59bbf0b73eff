/* cli.h - subcommands of the `fabricbus` command-line tool.
 * Each takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit status: 0 ok, 1 runtime failure
 * (broker unreachable, not acked in time), 2 usage or bad input. */
#ifndef FB_CLI_H
#define FB_CLI_H

#include <stdint.h>

int fb_cli_publish(int argc, char **argv);
int fb_cli_tail(int argc, char **argv);
int fb_cli_status(int argc, char **argv);
int fb_cli_consume(int argc, char **argv);
int fb_cli_topology(int argc, char **argv);
int fb_cli_passwd(int argc, char **argv);

/* Defaults shared by every subcommand (match fabricbusd's embedded config). */
#define FB_CLI_DEFAULT_AGENT_ADDR "127.0.0.1:7411"
#define FB_CLI_DEFAULT_HTTP_ADDR "127.0.0.1:7412"

/* A whole decimal number (digits only, no sign); 0 or -1. */
int fb_cli_parse_u64(const char *s, uint64_t *out);
/* Seconds: a finite number > 0 and at most 1e7; 0 or -1. */
int fb_cli_parse_secs(const char *s, double *out);

/* Split "host:port" (or "[v6]:port"); 0 or -1 with a message on stderr. */
int fb_cli_parse_addr(const char *s, char *host, unsigned hostsz, int *port);

#endif

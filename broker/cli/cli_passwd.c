/* cli_passwd.c - `fabricbus passwd`: make or change a Redfish account line
 * (USER:ROLE:crypt hash) so that an administrator never hashes by hand.
 * The password is read from the terminal without echo (twice), or as one
 * line from stdin when stdin is not a terminal (scripts, tests). */
#include "cli.h"
#include "cli_opts.h"
#include "fb_err.h"
#include "fb_file.h"
#include "fb_secret_file.h"
#include "rf_account.h"
#include "rf_auth_priv.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static void help(void)
{
	printf("NAME\n"
	       "    fabricbus passwd - add or change a Redfish account of fabricbusd\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    fabricbus passwd [-f ACCOUNTS_FILE] [--sha512] [--change-required] USER ROLE\n"
	       "\n"
	       "DESCRIPTION\n"
	       "    Reads USER's new password (from the terminal without echo, twice; or one\n"
	       "    line from stdin when it is not a terminal), hashes it with crypt(3)\n"
	       "    (yescrypt, or SHA-512 with --sha512) and writes the line USER:ROLE:HASH.\n"
	       "    ROLE is Administrator, Operator or ReadOnly. Passwords have %d to %d bytes.\n"
	       "\n"
	       "    With -f, the line replaces USER's line in ACCOUNTS_FILE (the file named by\n"
	       "    fabricbusd's RedfishAccounts key) or is appended to it; the file is created\n"
	       "    with mode 0600 if missing, refused if group or others may read it, and\n"
	       "    replaced crash-safely. Reload fabricbusd to apply (systemctl reload\n"
	       "    fabricbusd, or kill -HUP its pid: it re-reads RedfishAccounts, no restart;\n"
	       "    only a RedfishAccounts key new since it started needs one). Without -f,\n"
	       "    the line is printed on stdout.\n"
	       "\n"
	       "OPTIONS\n"
	       "    -f, --file PATH   update this accounts file\n"
	       "        --sha512      hash with SHA-512 ($6$) instead of yescrypt ($y$)\n"
	       "        --change-required\n"
	       "                      an initial password: the account must change it (PATCH its\n"
	       "                      Password) before anything else works (USER:ROLE:HASH:0,\n"
	       "                      Redfish PasswordChangeRequired)\n"
	       "    -h, --help        show this help\n"
	       "\n"
	       "EXAMPLES\n"
	       "    fabricbus passwd -f /etc/fabricbus/redfish-accounts admin Administrator\n"
	       "    printf '%%s\\n' \"$PW\" | fabricbus passwd -f accounts ops Operator\n"
	       "\n"
	       "EXIT STATUS\n"
	       "    0  written\n"
	       "    1  the file could not be read or written\n"
	       "    2  usage error, bad user name, role or password\n",
	       FB_RF_PASSWORD_MIN, FB_RF_PASSWORD_MAX);
}

/* One line from f without its newline into buf. 0, or -1 at EOF/too long. */
static int read_line(FILE *f, char *buf, size_t sz)
{
	if (!fgets(buf, (int)sz, f))
		return -1;
	size_t n = strcspn(buf, "\r\n");
	if (buf[n] == '\0' && n == sz - 1)
		return -1; /* longer than the buffer */
	buf[n] = '\0';
	return 0;
}

static int prompt(FILE *tty, const char *what, char *buf, size_t sz)
{
	struct termios old, quiet;
	fprintf(tty, "%s", what);
	fflush(tty);
	int fd = fileno(tty), echo_off = tcgetattr(fd, &old) == 0;
	if (echo_off) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		echo_off = tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
	}
	int rc = read_line(tty, buf, sz);
	if (echo_off)
		tcsetattr(fd, TCSAFLUSH, &old);
	fprintf(tty, "\n");
	return rc;
}

static int read_password(const char *user, char *pw, size_t sz)
{
	if (!isatty(STDIN_FILENO)) {
		if (read_line(stdin, pw, sz) == 0)
			return 0;
		fprintf(stderr, "fabricbus passwd: no password line on stdin (or longer than %d bytes)\n",
			FB_RF_PASSWORD_MAX);
		return 2;
	}
	FILE *tty = fopen("/dev/tty", "r+");
	char again[FB_RF_PASSWORD_MAX + 2], q[96];
	int rc = 2;
	if (!tty) {
		fprintf(stderr, "fabricbus passwd: /dev/tty: %s\n", strerror(errno));
		return 1;
	}
	snprintf(q, sizeof(q), "New password for %s: ", user);
	if (prompt(tty, q, pw, sz) == 0 && prompt(tty, "Again: ", again, sizeof(again)) == 0) {
		rc = strcmp(pw, again) == 0 ? 0 : 2;
		if (rc)
			fprintf(stderr, "fabricbus passwd: the two passwords differ\n");
	}
	memset(again, 0, sizeof(again));
	fclose(tty);
	return rc;
}

/* USER:ROLE:HASH into path, keeping its other lines. 0 or 1. */
static int update_file(const char *path, const char *user, const char *role, const char *hash,
		       int flags)
{
	char err[512], *old = NULL, *text;
	size_t len = 0, n;
	const char *step = NULL;
	int rc = fb_secret_file_read(path, "password hashes", FB_RF_ACCOUNTS_FILE_MAX, &old, &len,
				     err, sizeof(err));
	if (rc && rc != -ENOENT) {
		fprintf(stderr, "fabricbus passwd: %s\n", err);
		return 1;
	}
	rc = fb_rf_accounts_upsert(old, len, user, role, hash, flags, &text, &n);
	free(old);
	if (rc) {
		fprintf(stderr, "fabricbus passwd: cannot update %s: %s\n", path, fb_strerror(rc));
		return 1;
	}
	rc = fb_file_replace(path, text, n, 0600, &step);
	free(text);
	if (rc) {
		fprintf(stderr, "fabricbus passwd: cannot %s %s: %s\n", step ? step : "write", path,
			fb_strerror(rc));
		return 1;
	}
	return 0;
}

int fb_cli_passwd(int argc, char **argv)
{
	struct option opts[FB_CLI_OPTS_MAX];
	const char *path = NULL, *prefix = "$y$";
	int c, flags = FB_RF_ACCT_ENABLED;
	fb_cli_options(FB_CLI_PASSWD, opts);
	opterr = 1; /* getopt names a bad option; we point to --help */
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		if (c == 'f')
			path = optarg;
		else if (c == 's')
			prefix = "$6$";
		else if (c == 'c')
			flags |= FB_RF_ACCT_PW_CHANGE;
		else if (c == 'h') {
			help();
			return 0;
		} else {
			fprintf(stderr, "fabricbus passwd: see fabricbus passwd --help\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "fabricbus passwd: want USER ROLE (see fabricbus passwd --help)\n");
		return 2;
	}
	const char *user = argv[optind], *role = argv[optind + 1];
	if (!fb_rf_user_valid(user)) {
		fprintf(stderr, "fabricbus passwd: bad user name '%s': want 1 to %d of A-Z a-z 0-9 . _ - "
			"(not starting with . or -)\n", user, FB_RF_USER_MAX);
		return 2;
	}
	if (fb_rf_role_parse(role) < 0) {
		fprintf(stderr, "fabricbus passwd: bad role '%s': want Administrator, Operator or "
			"ReadOnly\n", role);
		return 2;
	}
	char pw[FB_RF_PASSWORD_MAX + 2], hash[FB_RF_HASH_MAX + 1];
	int rc = read_password(user, pw, sizeof(pw));
	if (rc == 0 && (rc = fb_rf_password_hash(pw, prefix, hash, sizeof(hash))) != 0) {
		fprintf(stderr, "fabricbus passwd: %s\n",
			rc == -EINVAL ? "the password must have 8 to 255 bytes" : fb_strerror(rc));
		rc = 2;
	}
	memset(pw, 0, sizeof(pw));
	if (rc)
		return rc;
	if (!path) {
		printf("%s:%s:%s%s\n", user, role, hash, flags & FB_RF_ACCT_PW_CHANGE ? ":0" : "");
		return 0;
	}
	return update_file(path, user, role, hash, flags);
}

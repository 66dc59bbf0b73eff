/* agent_identity.h - which agent ids a client certificate may speak for.
 *
 * A TLS client on the agent port (AgentTls=optional|required) is known by
 * the names of its verified certificate: the subject CN and every DNS SAN.
 * It may send HELLO for an agent id when
 *   - the id equals one of those names (the default rule: make the agent's
 *     certificate for CN=ib@leaf01), or
 *   - an AgentIdentity rule whose name pattern matches one of the names lists
 *     a pattern that matches the id:
 *         AgentIdentity=CN:leaf-agents -> ib@leaf* ib@spine*
 *         AgentIdentity=SAN:*.nodes.example.org -> node@*
 * Patterns are fnmatch(3) globs (`*`, `?`, `[...]`), matched whole.
 * CN: matches the subject CN only, SAN: a DNS subjectAltName only.
 *
 * Pure functions over strings: no OpenSSL here (agent_tls.c extracts the
 * names), so the rules are unit-tested without certificates.
 */
#ifndef FB_AGENT_IDENTITY_H
#define FB_AGENT_IDENTITY_H

#include <stddef.h>

#define FB_IDENT_RULES_MAX 64
#define FB_IDENT_NAME_MAX 128 /* a name pattern, with the NUL */
#define FB_IDENT_IDS_MAX 256  /* the id patterns, space-separated, with the NUL */
#define FB_IDENT_NAMES_MAX 512 /* a certificate's names, "\n"-separated, with the NUL */

struct fb_ident_rule {
	char kind;                     /* 'C' subject CN, 'S' DNS SAN */
	char name[FB_IDENT_NAME_MAX];  /* glob */
	char ids[FB_IDENT_IDS_MAX];    /* globs separated by single spaces */
};

struct fb_ident_rules {
	unsigned n;
	struct fb_ident_rule r[FB_IDENT_RULES_MAX];
};

/* A certificate's names: the CN (empty if none) and its DNS SANs, each a
 * line of "CN:<cn>" or "SAN:<name>" in one buffer. */
struct fb_ident_names {
	char text[FB_IDENT_NAMES_MAX];
};

/* Parse "CN:<glob> -> <glob> [<glob>...]" (or SAN:) and append it to rules.
 * 0, or FB_ECONFIG with what was expected in why. */
int fb_ident_rule_parse(struct fb_ident_rules *rules, const char *v, char *why, size_t whysz);
/* The rule as a file takes it back. */
void fb_ident_rule_format(const struct fb_ident_rule *r, char *out, size_t outsz);

/* Append a name of kind 'C' or 'S'; names that do not fit are dropped (a
 * certificate with more names than that is refused nothing it may do with
 * its first names). */
void fb_ident_names_add(struct fb_ident_names *n, char kind, const char *name);
/* "CN=x, SAN=y, ..." for log lines. */
void fb_ident_names_show(const struct fb_ident_names *n, char *out, size_t outsz);

/* 1 if a client with these names may use agent_id, else 0. */
int fb_ident_allows(const struct fb_ident_rules *rules, const struct fb_ident_names *n,
		    const char *agent_id);

#endif

/* snmp_conf.c - fabricbus-agent-snmp's configuration file. */
#include "snmp_conf.h"

#include "fb_conf.h"
#include "fb_err.h"
#include "fb_secret_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Grow *arr (of *n items of size sz) by one zeroed item; NULL on ENOMEM. */
static void *push(void *arr_p, size_t *n, size_t sz)
{
	void **arr = arr_p;
	void *p = realloc(*arr, (*n + 1) * sz);
	if (!p)
		return NULL;
	*arr = p;
	memset((char *)p + *n * sz, 0, sz);
	return (char *)p + (*n)++ * sz;
}

int snmp_conf_parse_oid(const char *s, uint32_t *oid, size_t max, size_t *len)
{
	size_t n = 0;
	if (*s == '.')
		s++;
	while (*s) {
		if (*s < '0' || *s > '9' || n == max)
			return -EINVAL;
		char *end;
		errno = 0;
		unsigned long v = strtoul(s, &end, 10);
		if (errno || v > UINT32_MAX || (*end && *end != '.') || (*end == '.' && !end[1]))
			return -EINVAL;
		oid[n++] = (uint32_t)v;
		s = *end ? end + 1 : end;
	}
	if (n < 2)
		return -EINVAL;
	*len = n;
	return 0;
}

static int parse_class(const char *s)
{
	int v = fb_link_class_parse(s);
	return v == FB_LINK_NODE ? -1 : v; /* a switch port is never a node's own port */
}

/* Split val into at most max white-space separated words (in place). */
static size_t words(char *val, char **w, size_t max)
{
	size_t n = 0;
	for (char *save = NULL, *t = strtok_r(val, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return max + 1;
		w[n++] = t;
	}
	return n;
}

static int valid_word(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= SNMP_CONF_STR_MAX)
		return 0;
	for (; *s; s++)
		if (*s == '"' || *s == '\'' || *s == '\\' || (unsigned char)*s < 0x21)
			return 0;
	return 1;
}

static int user_line(struct snmp_conf *c, char **w, size_t n, const char *origin, char *err,
		     size_t errsz)
{
	static const char *const auths[] = { "MD5", "SHA", "SHA-224", "SHA-256", "SHA-384", "SHA-512" };
	static const char *const privs[] = { "DES", "AES", "AES-192", "AES-256" };
	int a = 0, p = 0;
	if (n < 5 || n > 6)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: User wants NAME AUTH AUTHPASS PRIV "
				  "PRIVPASS [ENGINEID], got %zu words", origin, n);
	for (size_t i = 0; i < sizeof(auths) / sizeof(auths[0]); i++)
		a |= strcasecmp(w[1], auths[i]) == 0;
	for (size_t i = 0; i < sizeof(privs) / sizeof(privs[0]); i++)
		p |= strcasecmp(w[3], privs[i]) == 0;
	if (!a || !p)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: User %s: AUTH must be MD5, SHA or "
				  "SHA-224..SHA-512 and PRIV DES, AES, AES-192 or AES-256 (got %s, %s)",
				  origin, w[0], w[1], w[3]);
	for (size_t i = 0; i < n; i++)
		if (!valid_word(w[i]))
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: User %s: word %zu is empty, too "
					  "long or holds quotes or backslashes", origin, w[0], i + 1);
	if (strlen(w[2]) < 8 || strlen(w[4]) < 8)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: User %s: passphrases need at least "
				  "8 characters (RFC 3414)", origin, w[0]);
	if (n == 6 && (strncasecmp(w[5], "0x", 2) || strlen(w[5]) < 12 || strlen(w[5]) > 66 ||
		       strspn(w[5] + 2, "0123456789abcdefABCDEF") != strlen(w[5]) - 2))
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: User %s: ENGINEID must be 0x and "
				  "10..64 hex digits", origin, w[0]);
	struct snmp_conf_user *u = push(&c->users, &c->n_users, sizeof(*u));
	if (!u)
		return -ENOMEM;
	snprintf(u->name, sizeof(u->name), "%s", w[0]);
	snprintf(u->auth, sizeof(u->auth), "%s", w[1]);
	snprintf(u->authpass, sizeof(u->authpass), "%s", w[2]);
	snprintf(u->priv, sizeof(u->priv), "%s", w[3]);
	snprintf(u->privpass, sizeof(u->privpass), "%s", w[4]);
	snprintf(u->engine, sizeof(u->engine), "%s", n == 6 ? w[5] : "");
	/* no leading blank: net-snmp's createUser parser would take it for an
	 * empty user name ("unknown authProtocol") */
	snprintf(u->line, sizeof(u->line), "%s%s%s%s %s %s %s %s", n == 6 ? "-e " : "",
		 n == 6 ? w[5] : "", n == 6 ? " " : "", w[0], w[1], w[2], w[3], w[4]);
	return 0;
}

static int poll_line(struct snmp_conf *c, char **w, size_t n, const char *origin, char *err,
		     size_t errsz)
{
	int v3 = n == 3 && strcmp(w[1], "v3") == 0;
	if ((n != 2 && !v3) || !valid_word(w[n - 1]) || strlen(w[0]) >= FB_ADDR_MAX)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: Poll wants ADDRESS[:PORT] COMMUNITY, "
				  "or ADDRESS[:PORT] v3 USER (a User= name)", origin);
	struct snmp_conf_poll *p = push(&c->polls, &c->n_polls, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->addr, sizeof(p->addr), "%s", w[0]);
	char *colon = strrchr(p->addr, ':');
	if (colon && !strchr(p->addr, '[') && strchr(p->addr, ':') == colon)
		*colon = '\0'; /* a.b.c.d:port */
	snprintf(p->peer, sizeof(p->peer), "udp:%s%s", w[0], colon ? "" : ":161");
	if (v3)
		snprintf(p->user, sizeof(p->user), "%s", w[2]);
	else
		snprintf(p->community, sizeof(p->community), "%s", w[1]);
	return 0;
}

int snmp_conf_line(struct snmp_conf *c, const char *key, const char *val_in, const char *origin,
		   char *err, size_t errsz)
{
	char val[FB_CONF_LINE_MAX], *w[8];
	snprintf(val, sizeof(val), "%s", val_in);
	size_t n = words(val, w, 7);
	if (strcasecmp(key, "Community") == 0) {
		if (n != 1 || !valid_word(w[0]))
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: Community wants one word of "
					  "1..%d characters", origin, SNMP_CONF_STR_MAX - 1);
		char(*s)[SNMP_CONF_STR_MAX] = push(&c->communities, &c->n_communities, sizeof(*s));
		if (!s)
			return -ENOMEM;
		snprintf(*s, sizeof(*s), "%s", w[0]);
		return 0;
	}
	if (strcasecmp(key, "User") == 0)
		return user_line(c, w, n, origin, err, errsz);
	if (strcasecmp(key, "Poll") == 0)
		return poll_line(c, w, n, origin, err, errsz);
	if (strcasecmp(key, "EngineID") == 0) {
		if (n != 1 || strncasecmp(w[0], "0x", 2) || strlen(w[0]) < 12 ||
		    strlen(w[0]) >= sizeof(c->engine_id) ||
		    strspn(w[0] + 2, "0123456789abcdefABCDEF") != strlen(w[0]) - 2)
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: EngineID wants 0x and 10..64 "
					  "hex digits", origin);
		snprintf(c->engine_id, sizeof(c->engine_id), "%s", w[0]);
		return 0;
	}
	if (strcasecmp(key, "LinkClass") == 0) {
		int cls = n == 1 ? parse_class(w[0]) : -1;
		if (cls < 0)
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: LinkClass wants host, isl, uplink "
					  "or unknown", origin);
		c->link_class = (uint8_t)cls;
		return 0;
	}
	if (strcasecmp(key, "Switch") == 0) {
		int cls = n == 3 ? parse_class(w[2]) : -2;
		if (n < 2 || n > 3 || cls == -1 || strlen(w[0]) >= FB_ADDR_MAX ||
		    strlen(w[1]) >= FB_NAME_MAX)
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: Switch wants ADDRESS NAME "
					  "[host|isl|uplink|unknown], NAME < %d characters", origin,
					  FB_NAME_MAX);
		struct snmp_conf_switch *s = push(&c->switches, &c->n_switches, sizeof(*s));
		if (!s)
			return -ENOMEM;
		snprintf(s->addr, sizeof(s->addr), "%s", w[0]);
		snprintf(s->name, sizeof(s->name), "%s", w[1]);
		s->link_class = cls >= 0 ? (uint8_t)cls : 0xff; /* 0xff: the default class */
		return 0;
	}
	if (strcasecmp(key, "Trap") == 0) {
		struct snmp_conf_trap t = { 0 };
		int sev = n >= 2 ? fb_severity_parse(w[1]) : -1;
		int kind = n == 3 ? fb_kind_parse(w[2]) : FB_KIND_PORT_STATE;
		if (n < 2 || n > 3 || sev < 0 || kind <= 0 ||
		    snmp_conf_parse_oid(w[0], t.oid, SNMP_CONF_OID_MAX, &t.oid_len))
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: Trap wants a numeric OID, a "
					  "severity (OK, Warning, Critical) and optionally an event kind "
					  "(port_state, link_down, ...)", origin);
		t.severity = (uint8_t)sev;
		t.kind = (uint8_t)kind;
		struct snmp_conf_trap *p = push(&c->traps, &c->n_traps, sizeof(*p));
		if (!p)
			return -ENOMEM;
		*p = t;
		return 0;
	}
	return fb_err_set(err, errsz, FB_ECONFIG, "%s: unknown key '%s' (want Community, User, "
			  "EngineID, Switch, LinkClass, Trap or Poll)", origin, key);
}

static int on_line(void *arg, const char *key, const char *val, const char *origin, int lineno,
		   char *err, size_t errsz)
{
	(void)lineno;
	return snmp_conf_line(arg, key, val, origin, err, errsz);
}

int snmp_conf_load(struct snmp_conf *c, const char *path, char *err, size_t errsz)
{
	memset(c, 0, sizeof(*c));
	/* It holds communities and USM passphrases. */
	int rc = fb_secret_file_check(path, "SNMP secrets", err, errsz);
	if (rc)
		return rc;
	rc = fb_conf_read_file(path, on_line, c, err, errsz);
	if (rc)
		snmp_conf_free(c);
	return rc;
}

void snmp_conf_free(struct snmp_conf *c)
{
	free(c->communities);
	if (c->users) /* passphrases */
		memset(c->users, 0, c->n_users * sizeof(*c->users));
	free(c->users);
	free(c->switches);
	free(c->traps);
	free(c->polls);
	memset(c, 0, sizeof(*c));
}

const struct snmp_conf_switch *snmp_conf_switch(const struct snmp_conf *c, const char *addr)
{
	for (size_t i = 0; i < c->n_switches; i++)
		if (strcmp(c->switches[i].addr, addr) == 0)
			return &c->switches[i];
	return NULL;
}

const struct snmp_conf_user *snmp_conf_user(const struct snmp_conf *c, const char *name)
{
	for (size_t i = 0; i < c->n_users; i++)
		if (strcmp(c->users[i].name, name) == 0)
			return &c->users[i];
	return NULL;
}

const struct snmp_conf_trap *snmp_conf_trap(const struct snmp_conf *c, const uint32_t *oid,
					    size_t len)
{
	for (size_t i = 0; i < c->n_traps; i++)
		if (c->traps[i].oid_len == len && memcmp(c->traps[i].oid, oid, len * sizeof(*oid)) == 0)
			return &c->traps[i];
	return NULL;
}

int snmp_conf_community_ok(const struct snmp_conf *c, const char *s, size_t len)
{
	for (size_t i = 0; i < c->n_communities; i++)
		if (strlen(c->communities[i]) == len && memcmp(c->communities[i], s, len) == 0)
			return 1;
	return 0;
}

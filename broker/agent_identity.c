/* agent_identity.c - see agent_identity.h. */
#include "agent_identity.h"

#include "fb_err.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int fb_ident_rule_parse(struct fb_ident_rules *rules, const char *v, char *why, size_t whysz)
{
	if (rules->n == FB_IDENT_RULES_MAX)
		return fb_err_set(why, whysz, FB_ECONFIG, "at most %d AgentIdentity rules",
				  FB_IDENT_RULES_MAX);
	struct fb_ident_rule r = { 0 };
	v = skip_ws(v);
	if (strncasecmp(v, "CN:", 3) == 0)
		r.kind = 'C';
	else if (strncasecmp(v, "SAN:", 4) == 0)
		r.kind = 'S';
	else
		return fb_err_set(why, whysz, FB_ECONFIG,
				  "expected CN:<name> -> <agent-id> [...] or SAN:<name> -> ...");
	v += r.kind == 'C' ? 3 : 4;
	const char *arrow = strstr(v, "->");
	if (!arrow)
		return fb_err_set(why, whysz, FB_ECONFIG, "expected '->' between the name and the ids");
	size_t nlen = (size_t)(arrow - v);
	while (nlen && (v[nlen - 1] == ' ' || v[nlen - 1] == '\t'))
		nlen--;
	if (!nlen || nlen >= sizeof(r.name))
		return fb_err_set(why, whysz, FB_ECONFIG, "expected a name of 1..%zu bytes before '->'",
				  sizeof(r.name) - 1);
	memcpy(r.name, v, nlen);
	/* The ids, normalized to single spaces. */
	size_t o = 0;
	for (const char *p = skip_ws(arrow + 2); *p; p = skip_ws(p)) {
		size_t len = strcspn(p, " \t");
		if (o + len + 2 > sizeof(r.ids))
			return fb_err_set(why, whysz, FB_ECONFIG, "agent id patterns longer than %zu bytes",
					  sizeof(r.ids) - 1);
		for (size_t i = 0; i < len; i++)
			if (!strchr("*?[]!", p[i]) && !strchr("._:@-", p[i]) &&
			    !((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
			      (p[i] >= '0' && p[i] <= '9')))
				return fb_err_set(why, whysz, FB_ECONFIG,
						  "bad agent id pattern '%.*s': want [A-Za-z0-9._:@-] and *?[]",
						  (int)len, p);
		if (o)
			r.ids[o++] = ' ';
		memcpy(r.ids + o, p, len);
		o += len;
		p += len;
	}
	if (!o)
		return fb_err_set(why, whysz, FB_ECONFIG, "expected at least one agent id pattern after '->'");
	rules->r[rules->n++] = r;
	return 0;
}

void fb_ident_rule_format(const struct fb_ident_rule *r, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s:%s -> %s", r->kind == 'C' ? "CN" : "SAN", r->name, r->ids);
}

void fb_ident_names_add(struct fb_ident_names *n, char kind, const char *name)
{
	size_t used = strlen(n->text);
	size_t need = strlen(name) + (kind == 'C' ? 3 : 4) + 1;
	if (!*name || used + need + 1 > sizeof(n->text))
		return;
	snprintf(n->text + used, sizeof(n->text) - used, "%s%s\n", kind == 'C' ? "CN:" : "SAN:", name);
}

void fb_ident_names_show(const struct fb_ident_names *n, char *out, size_t outsz)
{
	size_t o = 0;
	out[0] = '\0';
	for (const char *p = n->text; *p && o + 1 < outsz;) {
		size_t len = strcspn(p, "\n");
		const char *colon = memchr(p, ':', len);
		int w = snprintf(out + o, outsz - o, "%s%.*s=%.*s", o ? ", " : "", (int)(colon - p), p,
				 (int)(len - (size_t)(colon - p) - 1), colon + 1);
		if (w < 0 || (size_t)w >= outsz - o)
			break;
		o += (size_t)w;
		p += len + (p[len] == '\n');
	}
	if (!o)
		snprintf(out, outsz, "(no CN or DNS name)");
}

/* Each name at *pos of the given kind ('C', 'S', or 0 for both), copied out in turn. */
static int each_name(char kind, const char **pos, char *name, size_t namesz)
{
	while (**pos) {
		const char *p = *pos;
		size_t len = strcspn(p, "\n");
		*pos = p + len + (p[len] == '\n');
		char k = p[0] == 'C' ? 'C' : 'S';
		size_t skip = k == 'C' ? 3 : 4;
		if ((kind && k != kind) || len - skip >= namesz)
			continue;
		memcpy(name, p + skip, len - skip);
		name[len - skip] = '\0';
		return 1;
	}
	return 0;
}

static int ids_match(const char *ids, const char *agent_id)
{
	char pat[FB_IDENT_IDS_MAX];
	for (const char *p = ids; *p;) {
		size_t len = strcspn(p, " ");
		memcpy(pat, p, len);
		pat[len] = '\0';
		if (fnmatch(pat, agent_id, 0) == 0)
			return 1;
		p += len + (p[len] == ' ');
	}
	return 0;
}

int fb_ident_allows(const struct fb_ident_rules *rules, const struct fb_ident_names *n,
		    const char *agent_id)
{
	char name[FB_IDENT_NAMES_MAX];
	const char *pos = n->text;
	while (each_name(0, &pos, name, sizeof(name)))
		if (strcmp(name, agent_id) == 0)
			return 1;
	for (unsigned i = 0; rules && i < rules->n; i++) {
		const struct fb_ident_rule *r = &rules->r[i];
		pos = n->text;
		while (each_name(r->kind, &pos, name, sizeof(name)))
			if (fnmatch(r->name, name, 0) == 0 && ids_match(r->ids, agent_id))
				return 1;
	}
	return 0;
}

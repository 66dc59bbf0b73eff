/* rf_filter.c - $filter: a recursive-descent parser that emits a postfix
 * program of comparisons, and its evaluator.
 *
 * The program is compiled once when a stream opens and then runs for every
 * event that stream could get, so it does no parsing, no allocation and no
 * string scanning beyond one comparison per term: literals are checked and
 * normalized at compile time (MessageId split into prefix, version and key;
 * OriginResource without a trailing slash; ResourceType as a schema name),
 * and each event's parts are split once by fb_rf_attrs_init.
 */
#include "rf_filter.h"

#include "fb_err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum prop { P_FORMAT, P_EVENT_TYPE, P_MESSAGE_ID, P_REGISTRY, P_ORIGIN, P_RESOURCE_TYPE, P_SUBORDINATE };

static const char *const prop_names[] = {
	[P_FORMAT] = "EventFormatType",   [P_EVENT_TYPE] = "EventType",
	[P_MESSAGE_ID] = "MessageId",     [P_REGISTRY] = "RegistryPrefix",
	[P_ORIGIN] = "OriginResource",    [P_RESOURCE_TYPE] = "ResourceType",
	[P_SUBORDINATE] = "SubordinateResources",
};
#define N_PROPS (sizeof(prop_names) / sizeof(prop_names[0]))

struct term {
	uint8_t prop, ne;
	uint8_t prefix_len, version_len, key_off; /* MessageId literals */
	uint8_t boolean;                          /* SubordinateResources */
	uint16_t len;                             /* of lit */
	const char *lit;                          /* in the filter's pool, NUL-terminated */
};

enum op { OP_TERM, OP_NOT, OP_AND, OP_OR };

struct ins {
	uint8_t op, term;
};

struct fb_rf_filter {
	int subordinate; /* OriginResource terms also match resources below */
	unsigned n_prog, n_terms;
	struct ins prog[2 * FB_RF_FILTER_TERMS];
	struct term terms[FB_RF_FILTER_TERMS];
	char *text;                          /* as given */
	char pool[];                         /* literals */
};

/* ---- event side ---------------------------------------------------------- */

static int is_digits(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* Split "Prefix.Major.Minor.Key" (or "Prefix.Key") into its parts. Returns
 * 0, or -1 when s has no prefix and key. */
static int split_message_id(const char *s, size_t n, uint8_t *prefix_len, uint8_t *version_len,
			    uint8_t *key_off)
{
	const char *d1 = memchr(s, '.', n);
	if (!d1 || d1 == s || n > 255)
		return -1;
	size_t p = (size_t)(d1 - s);
	*prefix_len = (uint8_t)p;
	*version_len = 0;
	*key_off = (uint8_t)(p + 1);
	const char *rest = d1 + 1, *end = s + n;
	const char *d2 = memchr(rest, '.', (size_t)(end - rest));
	if (d2 && is_digits(rest, (size_t)(d2 - rest))) {
		const char *v2 = d2 + 1;
		const char *d3 = memchr(v2, '.', (size_t)(end - v2));
		if (d3 && is_digits(v2, (size_t)(d3 - v2))) {
			*version_len = (uint8_t)(d3 - rest);
			*key_off = (uint8_t)(d3 + 1 - s);
		}
	}
	return *key_off < n ? 0 : -1;
}

void fb_rf_attrs_init(struct fb_rf_attrs *a, const char *message_id, const char *event_type,
		      const char *origin)
{
	a->message_id = message_id ? message_id : "";
	a->event_type = event_type ? event_type : "";
	a->origin = origin ? origin : "";
	a->resource_type = fb_rf_origin_type(a->origin);
	a->format = "Event";
	if (split_message_id(a->message_id, strlen(a->message_id), &a->prefix_len, &a->version_len,
			     &a->key_off)) {
		a->prefix_len = a->version_len = 0;
		a->key_off = 0;
	}
}

const char *fb_rf_origin_type(const char *path)
{
	/* collection segment -> the schema of its members */
	static const char *const types[][2] = {
		{ "Fabrics", "Fabric" },
		{ "Switches", "Switch" },
		{ "Ports", "Port" },
		{ "Endpoints", "Endpoint" },
		{ "Zones", "Zone" },
		{ "Connections", "Connection" },
		{ "Systems", "ComputerSystem" },
		{ "NetworkInterfaces", "NetworkInterface" },
		{ "NetworkAdapters", "NetworkAdapter" },
		{ "NetworkDeviceFunctions", "NetworkDeviceFunction" },
		{ "Chassis", "Chassis" },
		{ "Managers", "Manager" },
		{ "ConnectionMethods", "ConnectionMethod" },
		{ "AggregationSources", "AggregationSource" },
		{ "Subscriptions", "EventDestination" },
	};
	if (!path || !*path)
		return "";
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	const char *last = path + n; /* the last segment */
	while (last > path && last[-1] != '/')
		last--;
	if (last == path)
		return "";
	const char *coll_end = last - 1, *coll = coll_end;
	while (coll > path && coll[-1] != '/')
		coll--;
	size_t cl = (size_t)(coll_end - coll);
	/* ".../Ports/17/Metrics": the port's PortMetrics */
	if ((size_t)(path + n - last) == 7 && memcmp(last, "Metrics", 7) == 0) {
		const char *pc = coll;
		if (pc > path + 1) {
			const char *pe = pc - 1, *ps = pe;
			while (ps > path && ps[-1] != '/')
				ps--;
			if (pe - ps == 5 && memcmp(ps, "Ports", 5) == 0)
				return "PortMetrics";
		}
		return "";
	}
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i][0]) == cl && memcmp(coll, types[i][0], cl) == 0)
			return types[i][1];
	return "";
}

/* ---- lexer ------------------------------------------------------------- */

enum tok { T_END, T_LPAREN, T_RPAREN, T_WORD, T_QUOTED, T_BAD };

struct lexer {
	const char *s, *end;
	const char *tok; /* start of the current token in s */
	size_t tok_len;
	enum tok t;
	char *val;       /* the token's value (quotes resolved), in the pool */
	size_t val_len;
	char *pool, *pool_end;
	struct fb_rf_filter_err *err;
};

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static int fail(struct lexer *lx, const char *message, const char *tok, size_t tok_len, int rc,
		const char *fmt, const char *a)
{
	struct fb_rf_filter_err *e = lx->err;
	e->message = message;
	snprintf(e->token, sizeof(e->token), "%.*s", (int)(tok_len > 63 ? 63 : tok_len), tok);
	return fb_err_set(e->detail, sizeof(e->detail), rc, fmt, a ? a : e->token);
}

static int fail_here(struct lexer *lx, const char *fmt)
{
	if (lx->t == T_END)
		return fail(lx, "QueryParameterValueFormatError", "$filter", 7, FB_EMALFORMED, fmt,
			    "the end of the filter");
	return fail(lx, "QueryParameterValueFormatError", lx->tok, lx->tok_len, FB_EMALFORMED, fmt,
		    NULL);
}

/* Read a quoted literal starting at p (the quote); a doubled quote inside
 * stands for one. */
static int lex_quoted(struct lexer *lx, const char *p)
{
	char q = *p++;
	char *o = lx->pool;
	for (;;) {
		if (p == lx->end) {
			lx->t = T_BAD;
			lx->tok_len = (size_t)(p - lx->tok);
			return fail(lx, "QueryParameterValueFormatError", lx->tok, lx->tok_len,
				    FB_EMALFORMED, "$filter: the quoted value %s has no closing quote",
				    NULL);
		}
		if (*p == q) {
			if (p + 1 < lx->end && p[1] == q) {
				*o++ = q;
				p += 2;
				continue;
			}
			p++;
			break;
		}
		*o++ = *p++;
	}
	*o = '\0';
	lx->val = lx->pool;
	lx->val_len = (size_t)(o - lx->pool);
	lx->tok_len = (size_t)(p - lx->tok);
	lx->t = T_QUOTED;
	return 0;
}

static int next(struct lexer *lx)
{
	const char *p = lx->s;
	while (p < lx->end && is_space(*p))
		p++;
	lx->tok = p;
	lx->val = NULL;
	int rc = 0;
	if (p == lx->end) {
		lx->t = T_END;
		lx->tok_len = 0;
	} else if (*p == '(' || *p == ')') {
		lx->t = *p == '(' ? T_LPAREN : T_RPAREN;
		lx->tok_len = 1;
	} else if (*p == '\'' || *p == '"') {
		rc = lex_quoted(lx, p);
	} else {
		const char *w = p;
		while (w < lx->end && !is_space(*w) && *w != '(' && *w != ')' && *w != '\'' && *w != '"')
			w++;
		lx->t = T_WORD;
		lx->tok_len = (size_t)(w - p);
		memcpy(lx->pool, p, lx->tok_len);
		lx->pool[lx->tok_len] = '\0';
		lx->val = lx->pool;
		lx->val_len = lx->tok_len;
	}
	lx->s = lx->tok + lx->tok_len;
	return rc;
}

static int is_kw(const struct lexer *lx, const char *kw)
{
	return lx->t == T_WORD && lx->tok_len == strlen(kw) && strncasecmp(lx->tok, kw, lx->tok_len) == 0;
}

/* Keep the current token's value: it becomes a literal of the program. */
static const char *keep(struct lexer *lx)
{
	const char *v = lx->val;
	lx->pool += lx->val_len + 1;
	return v;
}

/* ---- literals ----------------------------------------------------------- */

static int all_alnum(const char *s, size_t n, const char *extra)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      (extra && c && strchr(extra, c))))
			return 0;
	}
	return 1;
}

static int in_list(const char *v, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(v, *list) == 0)
			return 1;
	return 0;
}

/* "#Port.v1_11_0.Port" -> "Port" (in place). */
static void schema_name(char *v, size_t *len)
{
	if (v[0] != '#')
		return;
	char *dot = strrchr(v, '.');
	if (!dot)
		return;
	size_t n = strlen(dot + 1);
	memmove(v, dot + 1, n + 1);
	*len = n;
}

static int bad_value(struct lexer *lx, const char *prop, const char *why)
{
	char fmt[160];
	snprintf(fmt, sizeof(fmt), "$filter: %%s is not a valid %s (%s)", prop, why);
	/* fmt is built from constant strings only: no '%' from the input */
	return fail(lx, "QueryParameterValueFormatError", lx->tok, lx->tok_len, FB_EMALFORMED, fmt, NULL);
}

static int check_literal(struct lexer *lx, struct term *t, char *v, size_t *len)
{
	static const char *const event_types[] = { "StatusChange", "ResourceUpdated", "ResourceAdded",
						   "ResourceRemoved", "Alert", "MetricReport", "Other", NULL };
	static const char *const formats[] = { "Event", "MetricReport", NULL };
	const char *name = prop_names[t->prop];
	switch (t->prop) {
	case P_FORMAT:
		return in_list(v, formats) ? 0 : bad_value(lx, name, "Event or MetricReport");
	case P_EVENT_TYPE:
		return in_list(v, event_types) ? 0
		       : bad_value(lx, name, "StatusChange, ResourceUpdated, ResourceAdded, "
					     "ResourceRemoved, Alert, MetricReport or Other");
	case P_MESSAGE_ID:
		if (!all_alnum(v, *len, ".") ||
		    split_message_id(v, *len, &t->prefix_len, &t->version_len, &t->key_off))
			return bad_value(lx, name, "Prefix.Major.Minor.Key or Prefix.Key");
		return 0;
	case P_REGISTRY:
		return all_alnum(v, *len, NULL) ? 0 : bad_value(lx, name, "letters and digits, e.g. Fabric");
	case P_ORIGIN:
		if (strncmp(v, "/redfish/v1", 11) != 0 || (v[11] && v[11] != '/'))
			return bad_value(lx, name, "a path that starts with /redfish/v1");
		while (*len > 1 && v[*len - 1] == '/')
			v[--*len] = '\0';
		return 0;
	case P_RESOURCE_TYPE:
		schema_name(v, len);
		return all_alnum(v, *len, NULL) ? 0 : bad_value(lx, name, "a schema name, e.g. Port");
	default: /* P_SUBORDINATE */
		if (lx->t == T_WORD && (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)) {
			t->boolean = v[0] == 't';
			return 0;
		}
		return fail(lx, "QueryParameterValueTypeError", lx->tok, lx->tok_len, FB_EMALFORMED,
			    "$filter: SubordinateResources takes true or false, not %s", NULL);
	}
}

/* ---- parser ------------------------------------------------------------- */

struct parser {
	struct lexer lx;
	struct fb_rf_filter *f;
	int depth;
};

/* The program holds 2 * FB_RF_FILTER_TERMS instructions: 64 comparisons
 * and their and/or fit, but a "not" before each of them does not. */
static int emit(struct parser *ps, enum op op, unsigned term)
{
	struct fb_rf_filter *f = ps->f;
	if (f->n_prog >= sizeof(f->prog) / sizeof(f->prog[0]))
		return fail_here(&ps->lx, "$filter: too many comparisons and operators (at most "
					  "128 in all) at %s");
	f->prog[f->n_prog++] = (struct ins){ .op = (uint8_t)op, .term = (uint8_t)term };
	return 0;
}

static int parse_or(struct parser *ps);

static int parse_comparison(struct parser *ps)
{
	struct lexer *lx = &ps->lx;
	if (lx->t != T_WORD)
		return fail_here(lx, "$filter: expected a property name, found %s");
	unsigned p;
	for (p = 0; p < N_PROPS; p++)
		if (strlen(prop_names[p]) == lx->tok_len && memcmp(lx->tok, prop_names[p], lx->tok_len) == 0)
			break;
	if (p == N_PROPS)
		return fail_here(lx, "$filter: %s is not a property an event can be filtered on "
				     "(EventFormatType, EventType, MessageId, RegistryPrefix, "
				     "OriginResource, ResourceType, SubordinateResources)");
	struct fb_rf_filter *f = ps->f;
	if (f->n_terms == FB_RF_FILTER_TERMS)
		return fail(lx, "QueryParameterValueFormatError", lx->tok, lx->tok_len, FB_ETOOBIG,
			    "$filter: more than 64 comparisons (at %s)", NULL);
	struct term *t = &f->terms[f->n_terms];
	memset(t, 0, sizeof(*t));
	t->prop = (uint8_t)p;
	int rc = next(lx);
	if (rc)
		return rc;
	if (!is_kw(lx, "eq") && !is_kw(lx, "ne"))
		return fail_here(lx, lx->t == T_WORD ? "$filter: %s is not supported here; use eq or ne"
						     : "$filter: expected eq or ne, found %s");
	t->ne = is_kw(lx, "ne");
	if ((rc = next(lx)))
		return rc;
	if (lx->t != T_WORD && lx->t != T_QUOTED)
		return fail_here(lx, "$filter: expected a value, found %s");
	if (lx->t == T_WORD && (is_kw(lx, "and") || is_kw(lx, "or") || is_kw(lx, "not")))
		return fail_here(lx, "$filter: expected a value, found the keyword %s (quote it if it is the value)");
	size_t len = lx->val_len;
	if (len > 1023)
		return fail(lx, "QueryParameterValueFormatError", lx->tok, lx->tok_len, FB_ETOOBIG,
			    "$filter: the value %s... is longer than 1023 bytes", NULL);
	if ((rc = check_literal(lx, t, lx->val, &len)))
		return rc;
	lx->val_len = len;
	t->len = (uint16_t)len;
	t->lit = keep(lx);
	if (t->prop == P_SUBORDINATE && t->boolean != t->ne)
		f->subordinate = 1;
	if ((rc = emit(ps, OP_TERM, f->n_terms++)))
		return rc;
	return next(lx);
}

static int parse_unary(struct parser *ps)
{
	struct lexer *lx = &ps->lx;
	if (++ps->depth > FB_RF_FILTER_DEPTH)
		return fail_here(lx, "$filter: nested deeper than 32 levels at %s");
	int rc;
	if (is_kw(lx, "not")) {
		if (!(rc = next(lx)) && !(rc = parse_unary(ps)))
			rc = emit(ps, OP_NOT, 0);
	} else if (lx->t == T_LPAREN) {
		const char *open = lx->tok;
		if (!(rc = next(lx)) && !(rc = parse_or(ps))) {
			if (lx->t != T_RPAREN)
				rc = lx->t == T_END ? fail(lx, "QueryParameterValueFormatError", open,
							   1, FB_EMALFORMED,
							   "$filter: a parenthesis (%s) is never closed", NULL)
						    : fail_here(lx, "$filter: expected ) or and/or, found %s");
			else
				rc = next(lx);
		}
	} else {
		rc = parse_comparison(ps);
	}
	ps->depth--;
	return rc;
}

static int parse_and(struct parser *ps)
{
	int rc = parse_unary(ps);
	while (!rc && is_kw(&ps->lx, "and")) {
		if (!(rc = next(&ps->lx)) && !(rc = parse_unary(ps)))
			rc = emit(ps, OP_AND, 0);
	}
	return rc;
}

static int parse_or(struct parser *ps)
{
	int rc = parse_and(ps);
	while (!rc && is_kw(&ps->lx, "or")) {
		if (!(rc = next(&ps->lx)) && !(rc = parse_and(ps)))
			rc = emit(ps, OP_OR, 0);
	}
	return rc;
}

int fb_rf_filter_compile(const char *text, size_t len, struct fb_rf_filter **out,
			 struct fb_rf_filter_err *err)
{
	*out = NULL;
	memset(err, 0, sizeof(*err));
	struct lexer lx0 = { .err = err };
	if (len > FB_RF_FILTER_MAX)
		return fail(&lx0, "QueryParameterValueFormatError", text, 32, FB_ETOOBIG,
			    "$filter: longer than 4096 bytes (starts %s)", NULL);
	if (memchr(text, '\0', len))
		return fail(&lx0, "QueryParameterValueFormatError", "$filter", 7, FB_EMALFORMED,
			    "$filter: contains a NUL byte", NULL);
	/* pool: every literal fits in len bytes plus a NUL each */
	struct fb_rf_filter *f = calloc(1, sizeof(*f) + 2 * len + 2);
	char *copy = malloc(len + 1);
	if (!f || !copy) {
		free(f);
		free(copy);
		err->message = "InternalError";
		return fb_err_set(err->detail, sizeof(err->detail), -ENOMEM, "$filter: out of memory");
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	f->text = copy;
	struct parser ps = { .lx = { .s = copy, .end = copy + len, .pool = f->pool,
				     .pool_end = f->pool + 2 * len + 2, .err = err },
			     .f = f };
	int rc = next(&ps.lx);
	if (!rc && ps.lx.t == T_END)
		rc = fail(&ps.lx, "QueryParameterValueFormatError", "$filter", 7, FB_EMALFORMED,
			  "$filter: empty; give a condition such as RegistryPrefix eq Fabric", NULL);
	if (!rc)
		rc = parse_or(&ps);
	if (!rc && ps.lx.t != T_END)
		rc = fail_here(&ps.lx, ps.lx.t == T_RPAREN
					       ? "$filter: %s closes a parenthesis that was never opened"
					       : "$filter: expected and, or or the end, found %s");
	if (rc) {
		fb_rf_filter_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

void fb_rf_filter_free(struct fb_rf_filter *f)
{
	if (!f)
		return;
	free(f->text);
	free(f);
}

const char *fb_rf_filter_text(const struct fb_rf_filter *f) { return f ? f->text : ""; }

/* ---- evaluation --------------------------------------------------------- */

static int origin_match(const struct term *t, const char *origin, int subordinate)
{
	if (strncmp(origin, t->lit, t->len) != 0)
		return 0;
	char c = origin[t->len];
	return c == '\0' || (c == '/' && (subordinate || origin[t->len + 1] == '\0'));
}

static int message_match(const struct term *t, const struct fb_rf_attrs *a)
{
	if (t->prefix_len != a->prefix_len || memcmp(t->lit, a->message_id, t->prefix_len) != 0)
		return 0;
	if (t->version_len && (t->version_len != a->version_len ||
			       memcmp(t->lit + t->prefix_len + 1, a->message_id + a->prefix_len + 1,
				      t->version_len) != 0))
		return 0;
	return strcmp(t->lit + t->key_off, a->message_id + a->key_off) == 0;
}

static int term_match(const struct fb_rf_filter *f, const struct term *t, const struct fb_rf_attrs *a)
{
	int m;
	switch (t->prop) {
	case P_FORMAT:
		m = strcmp(t->lit, a->format) == 0;
		break;
	case P_EVENT_TYPE:
		m = strcmp(t->lit, a->event_type) == 0;
		break;
	case P_MESSAGE_ID:
		m = message_match(t, a);
		break;
	case P_REGISTRY:
		m = t->len == a->prefix_len && memcmp(t->lit, a->message_id, t->len) == 0;
		break;
	case P_ORIGIN:
		m = origin_match(t, a->origin, f->subordinate);
		break;
	case P_RESOURCE_TYPE:
		m = strcmp(t->lit, a->resource_type) == 0;
		break;
	default:
		return 1; /* SubordinateResources changes OriginResource; as a term it is true */
	}
	return m != t->ne;
}

int fb_rf_filter_match(const struct fb_rf_filter *f, const struct fb_rf_attrs *a)
{
	if (!f)
		return 1;
	uint8_t st[FB_RF_FILTER_TERMS + 1];
	unsigned sp = 0;
	for (unsigned i = 0; i < f->n_prog; i++) {
		const struct ins *in = &f->prog[i];
		switch (in->op) {
		case OP_TERM:
			st[sp++] = (uint8_t)term_match(f, &f->terms[in->term], a);
			break;
		case OP_NOT:
			st[sp - 1] = !st[sp - 1];
			break;
		case OP_AND:
			sp--;
			st[sp - 1] = st[sp - 1] && st[sp];
			break;
		default:
			sp--;
			st[sp - 1] = st[sp - 1] || st[sp];
			break;
		}
	}
	return sp == 1 && st[0];
}

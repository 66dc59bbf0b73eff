/* test_hostlist.c - proto/fb_hostlist: Slurm hostlist expressions.
 *
 * Every expected expansion below was checked against Slurm 22.05's own
 * `SLURM_CONF=<minimal> scontrol show hostnames '<expr>'` (the integration
 * test tests/integration/test_fabric_map.py repeats that comparison live
 * through the broker). Where Slurm guesses ("a,,b" -> a b, "n[1-2" -> "n]"),
 * fb_hostlist refuses; the refusals are listed at the end.
 */
#include "fb_test.h"

#include "fb_err.h"
#include "fb_hostlist.h"
#include "fb_hostlist_fmt.h"

#include <stdlib.h>
#include <string.h>

struct collect {
	char out[4096];
	size_t n, stop_after;
};

static int collect_cb(void *arg, const char *name, size_t len)
{
	struct collect *c = arg;
	if (strlen(name) != len)
		return -99;
	size_t used = strlen(c->out);
	snprintf(c->out + used, sizeof(c->out) - used, "%s%s", used ? " " : "", name);
	c->n++;
	return c->stop_after && c->n == c->stop_after ? 7 : 0;
}

/* The names of expr, space-separated, or "ERR: <reason>". */
static const char *expand(const char *expr, size_t max, struct collect *c)
{
	static char why[256];
	size_t count = 0;
	memset(c, 0, sizeof(*c));
	int rc = fb_hostlist_expand(expr, strlen(expr), max, collect_cb, c, &count, why, sizeof(why));
	if (rc) {
		memmove(why + 5, why, sizeof(why) - 5);
		memcpy(why, "ERR: ", 5);
		why[sizeof(why) - 1] = '\0';
		return why;
	}
	if (count != c->n)
		return "count differs from the names given";
	return c->out;
}

static void hostlist_expands_as_scontrol_does(void)
{
	static const char *const cases[][2] = {
		{ "node[001-003,007],gpu[1-2],login1", "node001 node002 node003 node007 gpu1 gpu2 login1" },
		{ "r[1-2]n[01-02]", "r1n01 r1n02 r2n01 r2n02" },
		{ "a[9-11]", "a9 a10 a11" },
		{ "a[09-11]", "a09 a10 a11" },
		{ "b1,a1,b1", "b1 a1 b1" }, /* order and duplicates kept */
		{ "n[1-2]-[3-4]", "n1-3 n1-4 n2-3 n2-4" },
		{ "n[001-2]", "n001 n002" },
		{ "n[7]", "n7" },
		{ "node1-[2-3]", "node1-2 node1-3" },
		{ "n[0-3]x[1-2]", "n0x1 n0x2 n1x1 n1x2 n2x1 n2x2 n3x1 n3x2" },
		{ "n[1,2-3,5]", "n1 n2 n3 n5" },
		{ "n[00-01]", "n00 n01" },
		{ "[1-2]", "1 2" },
		{ "n1-2", "n1-2" },
		{ "n[98-100]", "n98 n99 n100" },
		{ "n[098-100]", "n098 n099 n100" },
		{ "node003", "node003" },
	};
	struct collect c;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = expand(cases[i][0], 65536, &c);
		if (strcmp(got, cases[i][1]) != 0)
			fprintf(stderr, "  '%s' -> '%s'\n", cases[i][0], got);
		CHECK_STR(got, cases[i][1]);
	}
}

static void hostlist_refuses_what_slurm_guesses_at(void)
{
	static const char *const cases[][2] = {
		{ "", "empty list" },
		{ "a,,b", "empty name at byte 2" },
		{ "a[1-2],", "empty name at byte 7" },
		{ ",a", "empty name at byte 0" },
		{ "n[1-2", "'[' at byte 1 is never closed" },
		{ "n]1[", "']' without '[' at byte 1" },
		{ "n[1-2]]", "']' without '[' at byte 6" },
		{ "n[[1-2]]", "'[' inside brackets at byte 2" },
		{ "n[]", "empty range at byte 2" },
		{ "n[1,]", "empty range at byte 4" },
		{ "n[3-1]", "reversed range 3-1 at byte 2" },
		{ "x[010-8]", "reversed range 010-8 at byte 2" },
		{ "n[1-]", "bad range '1-' at byte 2" },
		{ "n[-1]", "bad range '-1' at byte 2" },
		{ "n[1--2]", "bad range '1--2' at byte 2" },
		{ "n[a-b]", "byte 0x61 at byte 2" },
		{ "n[1-3]x", "text after ']' at byte 6" },
		{ "a b", "byte 0x20 at byte 1" },
		{ "a\tb", "byte 0x09 at byte 1" },
		{ "n[1234567890123456789]", "bad range" },
		{ "a[1][1][1][1][1][1][1][1][1]", "more than 8 bracket groups" },
	};
	struct collect c;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = expand(cases[i][0], 65536, &c);
		if (strncmp(got, "ERR: ", 5) != 0 || !strstr(got, cases[i][1]))
			fprintf(stderr, "  '%s' -> '%s', want '%s'\n", cases[i][0], got, cases[i][1]);
		CHECK(strncmp(got, "ERR: ", 5) == 0 && strstr(got, cases[i][1]));
		CHECK_EQ(c.n, 0); /* nothing handed out before the refusal */
	}
}

static void hostlist_bounds_names_and_length(void)
{
	size_t n = 0;
	char why[256];
	CHECK_EQ(fb_hostlist_expand("n[1-65536]", 10, 65536, NULL, NULL, &n, why, sizeof(why)), 0);
	CHECK_EQ(n, 65536);
	CHECK_EQ(fb_hostlist_expand("n[1-65537]", 10, 65536, NULL, NULL, &n, why, sizeof(why)),
		 FB_ETOOBIG);
	CHECK_EQ(fb_hostlist_expand("n[0-999999999999999999]", 23, 65536, NULL, NULL, &n, why,
				    sizeof(why)), FB_ETOOBIG);
	/* 256 x 256 = 65536, one more group is too many: counted, never produced */
	CHECK_EQ(fb_hostlist_expand("a[1-256]b[1-256]", 16, 65536, NULL, NULL, &n, why, sizeof(why)),
		 0);
	CHECK_EQ(fb_hostlist_expand("a[1-256]b[1-256]c[1-2]", 22, 65536, NULL, NULL, &n, why,
				    sizeof(why)), FB_ETOOBIG);
	CHECK_EQ(fb_hostlist_expand("n[1-40000],m[1-40000]", 21, 65536, NULL, NULL, &n, why,
				    sizeof(why)), FB_ETOOBIG);
	CHECK(strstr(why, "more than 65536 names"));
	/* 63 bytes is the longest name */
	char name[80];
	memset(name, 'x', 60);
	memcpy(name + 60, "[1]", 4);
	CHECK_EQ(fb_hostlist_expand(name, strlen(name), 65536, NULL, NULL, &n, why, sizeof(why)), 0);
	memcpy(name + 60, "[001]", 6);
	CHECK_EQ(fb_hostlist_expand(name, strlen(name), 65536, NULL, NULL, &n, why, sizeof(why)), 0);
	memcpy(name + 60, "[0001]", 7);
	CHECK_EQ(fb_hostlist_expand(name, strlen(name), 65536, NULL, NULL, &n, why, sizeof(why)),
		 FB_ETOOBIG);
	CHECK(strstr(why, "64 bytes"));
	/* not NUL-terminated: only len bytes are read */
	CHECK_EQ(fb_hostlist_expand("n[1-2]garbage", 6, 65536, NULL, NULL, &n, why, sizeof(why)), 0);
	CHECK_EQ(n, 2);
}

static void hostlist_callback_can_stop_it(void)
{
	struct collect c;
	memset(&c, 0, sizeof(c));
	c.stop_after = 2;
	CHECK_EQ(fb_hostlist_expand("n[1-5]", 6, 100, collect_cb, &c, NULL, NULL, 0), 7);
	CHECK_STR(c.out, "n1 n2");
}

/* fb_hostlist_format: the inverse, as topology.conf and the root cause
 * print node and switch lists. */
static void check_format(const char *const *names, size_t n, const char *want)
{
	char *s = fb_hostlist_format(names, n);
	CHECK_STR(s, want);
	free(s);
}

static void hostlist_format_ranges_by_prefix_and_padding(void)
{
	const char *a[] = { "node003", "node001", "node002", "node010", "h9", "h10", "login", "login", "node002" };
	check_format(a, sizeof(a) / sizeof(a[0]), "h[9-10],login,node[001-003,010]");
	const char *b[] = { "n1", "n2", "n3", "n5", "n007" };
	check_format(b, 5, "n[1-3,5],n007");
	const char *c[] = { "leaf4", "leaf1", "leaf3", "leaf2" };
	check_format(c, 4, "leaf[1-4]");
	const char *d[] = { "12345678901234567890" }; /* too many digits: kept whole */
	check_format(d, 1, "12345678901234567890");
	check_format(NULL, 0, "");
	char names[100][16];
	const char *v[100];
	for (int i = 0; i < 18; i++) {
		snprintf(names[i], sizeof(names[i]), "leaf%d", 18 - i);
		v[i] = names[i];
	}
	check_format(v, 18, "leaf[1-18]");
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "node%03d", i + 1);
		v[i] = names[i];
	}
	check_format(v, 100, "node[001-100]");
}

int main(void)
{
	RUN(hostlist_expands_as_scontrol_does);
	RUN(hostlist_refuses_what_slurm_guesses_at);
	RUN(hostlist_bounds_names_and_length);
	RUN(hostlist_callback_can_stop_it);
	RUN(hostlist_format_ranges_by_prefix_and_padding);
	return TEST_DONE();
}

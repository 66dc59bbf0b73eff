/* fb_test.h - a tiny unit-test harness: named tests, checks that report
 * file:line and the failed expression, and a closing "N passed, N failed"
 * line. A test function returns early on its first failed check. */
#ifndef FB_TEST_H
#define FB_TEST_H

#include <errno.h> /* program_invocation_short_name */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fb_test_failed_now;
static int fb_test_passed, fb_test_failed;

/* Report a failed check (a printf format and its arguments) and leave the
 * test function. */
#define FB_TEST_FAIL_(...)                                                           \
	do {                                                                         \
		fprintf(stderr, __VA_ARGS__);                                        \
		fb_test_failed_now = 1;                                              \
		return;                                                              \
	} while (0)

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond))                                                         \
			FB_TEST_FAIL_("  %s:%d: check failed: %s\n", __FILE__,      \
				      __LINE__, #cond);                              \
	} while (0)

#define CHECK_EQ(a, b)                                                               \
	do {                                                                         \
		long long fb_a_ = (long long)(a), fb_b_ = (long long)(b);            \
		if (fb_a_ != fb_b_)                                                  \
			FB_TEST_FAIL_("  %s:%d: %s == %s failed: %lld != %lld\n",    \
				      __FILE__, __LINE__, #a, #b, fb_a_, fb_b_);     \
	} while (0)

#define CHECK_STR(a, b)                                                              \
	do {                                                                         \
		const char *fb_a_ = (a), *fb_b_ = (b);                               \
		if (!fb_a_ || !fb_b_ || strcmp(fb_a_, fb_b_) != 0)                   \
			FB_TEST_FAIL_("  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
				      __FILE__, __LINE__, #a, #b,                    \
				      fb_a_ ? fb_a_ : "(null)",                      \
				      fb_b_ ? fb_b_ : "(null)");                     \
	} while (0)

#define RUN(fn)                                                                      \
	do {                                                                         \
		fb_test_failed_now = 0;                                              \
		fn();                                                                \
		if (fb_test_failed_now) {                                            \
			fb_test_failed++;                                            \
			fprintf(stderr, "FAIL %s\n", #fn);                           \
		} else {                                                             \
			fb_test_passed++;                                            \
			fprintf(stderr, "ok   %s\n", #fn);                           \
		}                                                                    \
	} while (0)

static char fb_test_dir_[64];

/* The test program's own directory, /tmp/<program>-XXXXXX, made on first
 * use; TEST_DONE removes it with everything in it. */
static inline const char *fbt_dir(void)
{
	if (!fb_test_dir_[0]) {
		snprintf(fb_test_dir_, sizeof(fb_test_dir_), "/tmp/%.40s-XXXXXX",
			 program_invocation_short_name);
		if (!mkdtemp(fb_test_dir_)) {
			perror(fb_test_dir_);
			exit(1);
		}
	}
	return fb_test_dir_;
}

static inline void fbt_dir_remove_(void)
{
	char cmd[128];
	if (!fb_test_dir_[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fb_test_dir_);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", fb_test_dir_);
}

#define TEST_DONE()                                                                  \
	(fbt_dir_remove_(),                                                          \
	 fprintf(stderr, "%d passed, %d failed\n", fb_test_passed, fb_test_failed),   \
	 fb_test_failed ? 1 : 0)

#endif

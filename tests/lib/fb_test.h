/* fb_test.h - a tiny unit-test harness: named tests, checks that report
 * file:line and the failed expression, and a closing "N passed, N failed"
 * line. A test function returns early on its first failed check. */
#ifndef FB_TEST_H
#define FB_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int fb_test_failed_now;
static int fb_test_passed, fb_test_failed;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__,     \
				__LINE__, #cond);                                    \
			fb_test_failed_now = 1;                                      \
			return;                                                      \
		}                                                                    \
	} while (0)

#define CHECK_EQ(a, b)                                                               \
	do {                                                                         \
		long long fb_a_ = (long long)(a), fb_b_ = (long long)(b);            \
		if (fb_a_ != fb_b_) {                                                \
			fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n",  \
				__FILE__, __LINE__, #a, #b, fb_a_, fb_b_);           \
			fb_test_failed_now = 1;                                      \
			return;                                                      \
		}                                                                    \
	} while (0)

#define CHECK_STR(a, b)                                                              \
	do {                                                                         \
		const char *fb_a_ = (a), *fb_b_ = (b);                               \
		if (!fb_a_ || !fb_b_ || strcmp(fb_a_, fb_b_) != 0) {                 \
			fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
				__FILE__, __LINE__, #a, #b, fb_a_ ? fb_a_ : "(null)", \
				fb_b_ ? fb_b_ : "(null)");                           \
			fb_test_failed_now = 1;                                      \
			return;                                                      \
		}                                                                    \
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

#define TEST_DONE()                                                                  \
	(fprintf(stderr, "%d passed, %d failed\n", fb_test_passed, fb_test_failed),   \
	 fb_test_failed ? 1 : 0)

#endif

/* check.h - a tiny CHECK() helper for the test programs.
 *
 * CHECK(cond) counts a check and, if cond is false, prints file:line and the
 * expression on stderr and counts a failure.  CHECKF(cond, fmt, ...) adds a
 * printf-style context.  check_summary(name) prints "name: N checks, M
 * failed" and returns the exit status (0 if nothing failed). */
#ifndef SMP_TEST_CHECK_H
#define SMP_TEST_CHECK_H

#include <stdio.h>

static unsigned long check_count, check_failures;

#define CHECK_MAX_PRINTED 100

#define CHECK(cond) CHECKF(cond, "%s", "")

#define CHECKF(cond, ...)                                                    \
  do {                                                                       \
    check_count++;                                                           \
    if (!(cond)) {                                                           \
      if (++check_failures <= CHECK_MAX_PRINTED) {                           \
        fprintf(stderr, "%s:%d: CHECK failed: %s ", __FILE__, __LINE__, #cond); \
        fprintf(stderr, __VA_ARGS__);                                        \
        fputc('\n', stderr);                                                 \
      }                                                                      \
    }                                                                        \
  } while (0)

static inline int check_summary(const char *name)
{
  printf("%s: %lu checks, %lu failed\n", name, check_count, check_failures);
  if (check_failures > CHECK_MAX_PRINTED)
    fprintf(stderr, "(only the first %d failures were printed)\n", CHECK_MAX_PRINTED);
  fflush(stdout);
  return check_failures ? 1 : 0;
}

#endif

/*
 * prof_math.h - the profiler's numbers, without libm (prof.c): the
 * probabilities of its draws and the exponential countdown.
 */
#ifndef SMP_PROF_MATH_H
#define SMP_PROF_MATH_H

#include "base.h"

/* e^-x, x >= 0 (relative error below 1e-12). */
static inline double exp_neg(double x) {
  if (x > 700) return 0;
  double y = x * 1.4426950408889634; /* 2^-y */
  int k = (int)y;
  double z = -(y - k) * 0.6931471805599453, term = 1, sum = 1;
  for (int i = 1; i < 14; i++) sum += term *= z / i;
  union { double d; uint64_t u; } s = {.u = (uint64_t)(1023 - k) << 52};
  return sum * s.d;
}

/* 1 - e^-x, accurate for small x too. */
static inline double one_minus_exp_neg(double x) {
  if (x < 1e-2) return x * (1 - x / 2 * (1 - x / 3 * (1 - x / 4 * (1 - x / 5))));
  return 1 - exp_neg(x);
}

/* -ln(u), u in (0, 1]. */
static inline double neg_log(double u) {
  union { double d; uint64_t b; } v = {.d = u};
  int e = (int)((v.b >> 52) & 0x7ff) - 1023;
  v.b = (v.b & (((uint64_t)1 << 52) - 1)) | ((uint64_t)1023 << 52); /* [1, 2) */
  double s = (v.d - 1) / (v.d + 1), s2 = s * s;
  double ln_m = 2 * s * (1 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 / 11)))));
  return -(e * 0.6931471805599453 + ln_m);
}

#endif /* SMP_PROF_MATH_H */

/*
 * base.h - what every file of the core uses: visibility, branch hints, the
 * two kinds of assertion.  No declarations of any module here.
 *
 *   SMP_ASSERT(c)  debug builds only (-DSMP_DEBUG): internal logic.
 *   SMP_CHECK(c, call, what, addr)
 *                  always on: bad input or corrupted state; prints one
 *                  line "smpalloc: CALL(): WHAT 0xADDR" and aborts.
 * Never <assert.h>: it may allocate.
 */
#ifndef SMP_BASE_H
#define SMP_BASE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define SMP_API __attribute__((visibility("default")))
#define SMP_HIDDEN __attribute__((visibility("hidden")))
#define SMP_NOINLINE __attribute__((noinline))
#define SMP_COLD __attribute__((cold, noinline))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Defined by os_proc.c: write one line and abort. */
SMP_HIDDEN _Noreturn SMP_COLD void os_fatal(const char *call, const char *what, const void *addr);

/* The same, for fast paths: not declared noreturn (and defined in another
 * file, so the compiler cannot tell), so that a check's failure branch is a
 * tail jump and the fast path needs no stack frame. */
SMP_HIDDEN SMP_COLD void os_fail(const char *call, const char *what, const void *addr);

/* A relaxed load of a word that another thread may store (with
 * __atomic_store_n), for the free fast path: a plain read, which x86 folds
 * into the compare that uses it (an atomic load is an instruction of its
 * own).  An aligned word cannot tear, and the compiler cannot split or
 * repeat a load whose value is used once.  ThreadSanitizer builds read it
 * atomically, so that the race it would report is known to be this one. */
#if defined(__SANITIZE_THREAD__)
#define SMP_RACY_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#else
#define SMP_RACY_LOAD(x) (x)
#endif

#define SMP_CHECK(c, call, what, addr) \
  do { if (unlikely(!(c))) os_fatal((call), (what), (addr)); } while (0)

#ifdef SMP_DEBUG
#define SMP_ASSERT(c) \
  do { if (!(c)) os_fatal("internal", "assertion failed: " #c, NULL); } while (0)
#else
#define SMP_ASSERT(c) ((void)0)
#endif

#endif /* SMP_BASE_H */

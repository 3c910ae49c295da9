/*
 * names.h - the calls a test program built two ways makes: the libc names
 * (S_malloc is malloc, ...), or with -DAPI_PREFIX the prefixed API
 * (smp_malloc, ...).  Define S_TEST (the program's name) first: S_NAME is
 * then "S_TEST(plain)" or "S_TEST(prefixed)".  stress.c and
 * tests/trust/signal.c include it.
 */
#ifndef TESTS_NAMES_H
#define TESTS_NAMES_H

#ifdef API_PREFIX
#include "smpalloc.h"
#define S_malloc smp_malloc
#define S_calloc smp_calloc
#define S_realloc smp_realloc
#define S_free smp_free
#define S_aligned_alloc smp_aligned_alloc
#define S_posix_memalign smp_posix_memalign
#define S_NAME S_TEST "(prefixed)"
#else
#define S_malloc malloc
#define S_calloc calloc
#define S_realloc realloc
#define S_free free
#define S_aligned_alloc aligned_alloc
#define S_posix_memalign posix_memalign
#define S_NAME S_TEST "(plain)"
#endif

#endif /* TESTS_NAMES_H */

/*
 * alloc.h - what override.c needs of alloc.c beyond the public smp_*
 * functions.
 */
#ifndef SMP_ALLOC_H
#define SMP_ALLOC_H

#include "base.h"

/* The usable size of the block p (not NULL), checking p as the call `who`
 * would (messages name that call). */
SMP_HIDDEN size_t usable_size(const void *p, const char *who);

#endif /* SMP_ALLOC_H */

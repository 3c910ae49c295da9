/*
 * stats.h - statistics: smp_stats_get and smp_stats_print (public, in
 * smpalloc.h), and the start-up and at-exit messages of SMPALLOC_VERBOSE
 * and SMPALLOC_STATS.  Hot paths count nothing: per-class figures are read
 * from the descriptors when asked, with every slot locked.
 */
#ifndef SMP_STATS_H
#define SMP_STATS_H

#include "base.h"

/* The verbose start-up line and the at-exit report, per the options
 * (init.c's constructor). */
SMP_HIDDEN void stats_init(void);

#endif /* SMP_STATS_H */

/*
 * options.h - run-time options, read once from the environment at start-up
 * (options.c), never on a fast path.  Until they are read the defaults of
 * config.h apply, so calls made before main (by the dynamic loader, say)
 * work unchanged.
 */
#ifndef SMP_OPTIONS_H
#define SMP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  bool verbose;              /* SMPALLOC_VERBOSE: the start-up line */
  bool stats;                /* SMPALLOC_STATS: print statistics at exit */
  bool checked;              /* SMPALLOC_CHECKED: checked mode */
  unsigned hugepages;        /* SMPALLOC_HUGEPAGES: 0 none; 1 (default)
                                the slabs of busy classes and a big
                                heap's runs in chunks advised for
                                transparent huge pages; 2 every slab
                                and run (not blocks mapped alone) */
  uint32_t purge_delay_ms;   /* SMPALLOC_PURGE_DELAY_MS */
  bool background;           /* SMPALLOC_BACKGROUND: a thread returns aged
                                free memory while the program is idle */
  size_t purge_threshold;    /* SMPALLOC_PURGE_THRESHOLD (bytes) */
  unsigned slots;            /* SMPALLOC_SLOTS: 0 = the CPU count */
  bool slot_spread;          /* SMPALLOC_SLOT_SPREAD: each new thread on
                                the next slot in turn (as on as many
                                CPUs as slots), not the least used */
  size_t prof_sample;        /* SMPALLOC_PROF_SAMPLE: mean bytes between
                                profiled samples (0 off, 1 every block) */
  bool prof_leaks;           /* SMPALLOC_PROF_LEAKS: leak report at exit */
  const char *prof_dump;     /* SMPALLOC_PROF_DUMP: write PREFIX.PID.heap
                                at exit (NULL: none) */
  bool prof_peak;            /* SMPALLOC_PROF_PEAK: also the profile of the
                                heap's peak, PREFIX.PID.peak.heap */
  unsigned prof_signal;      /* SMPALLOC_PROF_SIGNAL: a signal that asks
                                for a dump (0 none) */
  unsigned guard_sample;     /* SMPALLOC_GUARD_SAMPLE: one allocation of up
                                to a page in N guarded (0 off) */
} options_t;

extern options_t options __attribute__((visibility("hidden")));

/* Read the SMPALLOC_* variables (from the constructor: the environment is
 * set up by then).  Warns about unknown names and bad values, always. */
__attribute__((visibility("hidden"))) void options_init(void);

#endif /* SMP_OPTIONS_H */

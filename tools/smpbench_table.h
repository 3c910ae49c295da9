/*
 * smpbench_table.h - the poop-style table.  The pieces are exported so that
 * tests/tools/smpbench_format.c can rebuild the seed post's table byte for byte
 * from its printed summaries.
 */
#ifndef SMPBENCH_TABLE_H
#define SMPBENCH_TABLE_H

#include <stdio.h>

#include "smpbench.h"

/* A value with 3 significant digits and a unit suffix, poop's way: always
 * 4 characters of number then 2 of unit ("6.75ms", " 533us", "15.3MB",
 * "77.9M ", " 817  ").  Returns buf. */
char *fmt_value(char *buf, size_t size, double v, enum unit u);

/* "Benchmark 2 (412 runs): [smpalloc] build/seed" */
void table_title(FILE *out, int index, size_t nruns, const char *alloc,
                 const char *cmdline, int color);
/* "Benchmark 3: [tcmalloc] cmd — failed: exit status 1" */
void table_failed(FILE *out, int index, const char *alloc,
                  const char *cmdline, const char *why, int color);
/* The column headings; the delta heading only when with_delta. */
void table_header(FILE *out, int with_delta, int color);
/* One measurement row.  With with_delta, d == NULL prints the baseline's
 * "0%", otherwise the delta against the baseline. */
void table_row(FILE *out, const char *name, enum unit u,
               const struct summary *s, const struct delta *d,
               int with_delta, int color);

/* Everything: each benchmark's block, then one line per benchmark with the
 * ratios of median wall time and peak RSS to the baseline. */
void table_print(FILE *out, const struct report *r, int color);

#endif

/*
 * smpbench_io.h - machine-readable output (CSV, JSON), the SVG chart, and
 * reading a CSV back (smpbench --from-csv re-renders recorded samples).
 */
#ifndef SMPBENCH_IO_H
#define SMPBENCH_IO_H

#include "smpbench.h"

/* Each returns 0, or -1 after printing why on stderr. */
int write_csv(const char *path, const struct report *r);
int write_json(const char *path, const struct report *r);
int write_svg(const char *path, const struct report *r);

/* Load the "run" and "failed" records of a CSV written by write_csv into
 * r (benchmarks summarised, baseline picked). */
int read_csv(const char *path, struct report *r);

#endif

/*
 * smpbench_format.c - the table printer against the seed post.
 *
 * Prints the seed post's table (tests/tools/data/smpbench/seed_table.txt,
 * poop's output) from the summaries it shows, through the same functions
 * smpbench uses; t_smpbench_format.sh compares the output with the file
 * byte for byte.  Before that it checks fmt_value's 3-significant-digit
 * rounding at the unit boundaries; a failed check prints FAIL and exits 1.
 */
#include <stdio.h>
#include <string.h>

#include "smpbench_table.h"

static int failures;

static void check_fmt(double v, enum unit u, const char *want)
{
    char got[32];
    fmt_value(got, sizeof got, v, u);
    if (strcmp(got, want) != 0) {
        printf("FAIL fmt_value(%.17g): got \"%s\", want \"%s\"\n", v, got, want);
        failures++;
    }
}

static void check_formatting(void)
{
    check_fmt(6.75e6, UNIT_NS, "6.75ms");
    check_fmt(533e3, UNIT_NS, " 533us");
    check_fmt(0, UNIT_NS, "   0ns");
    check_fmt(999.4, UNIT_NS, " 999ns");
    check_fmt(999.7e3, UNIT_NS, "1.00ms");      /* rounds up into the next unit */
    check_fmt(2e6, UNIT_NS, "2.00ms");          /* scaled: keep 3 digits */
    check_fmt(1.5e9, UNIT_NS, "1.50s ");
    check_fmt(9.996, UNIT_COUNT, "10.0  ");     /* 2 decimals would be 4 digits */
    check_fmt(99.96, UNIT_COUNT, " 100  ");
    check_fmt(5, UNIT_COUNT, "   5  ");         /* whole counts as they are */
    check_fmt(817, UNIT_COUNT, " 817  ");
    check_fmt(69.0e3, UNIT_COUNT, "69.0K ");
    check_fmt(512, UNIT_BYTES, " 512B ");
    check_fmt(15.3e6, UNIT_BYTES, "15.3MB");
    check_fmt(2.5e12, UNIT_BYTES, "2.50TB");
}

struct row {
    const char *name;
    enum unit unit;
    double mean, sd, min, max;
    size_t outliers;
    double pct, half;   /* benchmark 2 only */
};

static void print_bench(int index, size_t n, const char *cmd,
                        const struct row *rows, size_t nrows, int baseline)
{
    table_title(stdout, index, n, NULL, cmd, 0);
    table_header(stdout, 1, 0);
    for (size_t i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        struct summary s = { .n = n, .mean = r->mean, .sd = r->sd,
                             .min = r->min, .max = r->max,
                             .outliers = r->outliers };
        struct delta d = { .pct = r->pct, .half = r->half, .defined = 1,
                           .verdict = r->pct + r->half <= -1 ? -1 :
                                      r->pct - r->half >= 1 ? 1 : 0 };
        table_row(stdout, r->name, r->unit, &s, baseline ? NULL : &d, 1, 0);
    }
}

int main(void)
{
    check_formatting();
    if (failures)
        return 1;

    /* The seed post's numbers.  Values that print as e.g. "69.0K" are given
     * slightly off the round number, as measured data is. */
    static const struct row c_alloc[] = {
        { "wall_time",        UNIT_NS,    6.75e6, 533e3,  5.29e6, 9.14e6, 9,  0, 0 },
        { "peak_rss",         UNIT_BYTES, 15.3e6, 836e3,  12.7e6, 17.4e6, 4,  0, 0 },
        { "cpu_cycles",       UNIT_COUNT, 77.9e6, 5.44e6, 59.8e6, 96.7e6, 9,  0, 0 },
        { "instructions",     UNIT_COUNT, 274e6,  35.1e3, 274e6,  274e6,  56, 0, 0 },
        { "cache_references", UNIT_COUNT, 770e3,  59.6e3, 653e3,  1.21e6, 64, 0, 0 },
        { "cache_misses",     UNIT_COUNT, 39.3e3, 5.14e3, 28.1e3, 69012,  27, 0, 0 },
        { "branch_misses",    UNIT_COUNT, 57.9e3, 2.86e3, 50.8e3, 68.5e3, 19, 0, 0 },
    };
    static const struct row smp_alloc[] = {
        { "wall_time",        UNIT_NS,    4.82e6, 313e3,  4.16e6, 6.81e6, 45, -28.7, 0.6 },
        { "peak_rss",         UNIT_BYTES, 6.04e6, 751e3,  3.93e6, 8.39e6, 1,  -60.5, 0.5 },
        { "cpu_cycles",       UNIT_COUNT, 57.5e6, 3.50e6, 45.6e6, 67.5e6, 2,  -26.2, 0.5 },
        { "instructions",     UNIT_COUNT, 182e6,  5.10e3, 182e6,  182e6,  30, -33.7, 0.0 },
        { "cache_references", UNIT_COUNT, 548e3,  29.9e3, 469e3,  688e3,  32, -28.9, 0.5 },
        { "cache_misses",     UNIT_COUNT, 28012,  3.50e3, 18.4e3, 45.3e3, 8,  -28.9, 1.0 },
        { "branch_misses",    UNIT_COUNT, 25.2e3, 817,    22.8e3, 29.3e3, 18, -56.5, 0.3 },
    };
    print_bench(1, 737, "./test-CAllocator", c_alloc, 7, 1);
    print_bench(2, 1033, "./test-SmpAllocator", smp_alloc, 7, 0);
    return 0;
}

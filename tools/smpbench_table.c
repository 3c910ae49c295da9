/*
 * smpbench_table.c - print the comparison in the seed post's (poop's) format:
 *
 *   Benchmark 1 (737 runs): ./test-CAllocator
 *     measurement          mean ± σ            min … max           outliers         delta
 *     wall_time          6.75ms ±  533us    5.29ms … 9.14ms          9 ( 1%)        0%
 *
 * The columns are fixed display positions (mean at 21, min at 40, outliers
 * at 62, delta at 80), so a line is built with a column counter that is
 * separate from its byte length: "±", "…" and "σ" are one column but
 * several bytes, the emoji two columns, colour escapes none.
 */
#include "smpbench_table.h"

#include <math.h>
#include <string.h>

#define COL_MEAN      21
#define COL_MIN       40
#define COL_OUTLIERS  62
#define COL_DELTA     80
/* Headings sit over the number part of their fields. */
#define HEAD_MEAN     23
#define HEAD_MIN      43
#define HEAD_OUTLIERS 63

#define BOLD    "\033[1m"
#define DIM     "\033[2m"
#define RED     "\033[91m"
#define GREEN   "\033[92m"
#define YELLOW  "\033[93m"
#define RESET   "\033[0m"

/* A line under construction. */
struct line {
    char buf[1024];
    size_t len;
    int col;
    int color;
};

/* Append text occupying `width` columns (-1: one column per byte). */
static void put(struct line *l, const char *s, int width)
{
    size_t n = strlen(s);
    if (l->len + n >= sizeof l->buf)
        n = sizeof l->buf - 1 - l->len;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    l->buf[l->len] = 0;
    l->col += width < 0 ? (int)n : width;
}

static void put_color(struct line *l, const char *esc)
{
    if (l->color)
        put(l, esc, 0);
}

/* Pad with spaces to column `col`, keeping at least one space between
 * fields when a wide value has run past it. */
static void pad_to(struct line *l, int col)
{
    if (l->col >= col && l->col > 0)
        col = l->col + 1;
    while (l->col < col)
        put(l, " ", 1);
}

static void emit(FILE *out, struct line *l)
{
    fputs(l->buf, out);
    fputc('\n', out);
}

char *fmt_value(char *buf, size_t size, double v, enum unit u)
{
    static const char *const suffix[3][5] = {
        [UNIT_NS]    = { "ns", "us", "ms", "s ", "ks" },
        [UNIT_BYTES] = { "B ", "KB", "MB", "GB", "TB" },
        [UNIT_COUNT] = { "  ", "K ", "M ", "G ", "T " },
    };
    int scale = 0;
    /* Step up while the value would print as 1000 or more after rounding
     * to 3 digits, so 999.7us reads "1.00ms", not "1000us". */
    while (scale < 4 && fabs(v) >= 999.5) {
        v /= 1000;
        scale++;
    }
    const char *format;
    /* Whole counts below 1000 print as they are ("   5  ", not "5.00  "),
     * as in poop; scaled values always get their 3 digits ("69.0K"). */
    if ((scale == 0 && v == floor(v)) || fabs(v) >= 99.95)
        format = "%4.0f%s";
    else if (fabs(v) >= 9.995)
        format = "%4.1f%s";
    else
        format = "%4.2f%s";
    snprintf(buf, size, format, v, suffix[u][scale]);
    return buf;
}

void table_title(FILE *out, int index, size_t nruns, const char *alloc,
                 const char *cmdline, int color)
{
    struct line l = { .color = color };
    char tmp[64];
    put_color(&l, BOLD);
    snprintf(tmp, sizeof tmp, "Benchmark %d", index);
    put(&l, tmp, -1);
    put_color(&l, RESET);
    put_color(&l, DIM);
    snprintf(tmp, sizeof tmp, " (%zu runs)", nruns);
    put(&l, tmp, -1);
    put_color(&l, RESET);
    fputs(l.buf, out);
    fputs(":", out);
    if (alloc)
        fprintf(out, " [%s]", alloc);
    fprintf(out, " %s\n", cmdline);
}

void table_failed(FILE *out, int index, const char *alloc,
                  const char *cmdline, const char *why, int color)
{
    fprintf(out, "%sBenchmark %d%s:", color ? BOLD : "", index,
            color ? RESET : "");
    if (alloc)
        fprintf(out, " [%s]", alloc);
    fprintf(out, " %s \u2014 %sfailed: %s%s\n", cmdline, color ? RED : "",
            why, color ? RESET : "");
}

void table_header(FILE *out, int with_delta, int color)
{
    struct line l = { .color = color };
    put_color(&l, BOLD);
    put(&l, "  measurement", -1);
    pad_to(&l, HEAD_MEAN);
    put(&l, "mean \u00b1 \u03c3", 8);
    pad_to(&l, HEAD_MIN);
    put(&l, "min \u2026 max", 9);
    pad_to(&l, HEAD_OUTLIERS);
    put(&l, "outliers", -1);
    if (with_delta) {
        pad_to(&l, COL_DELTA);
        put(&l, "delta", -1);
    }
    put_color(&l, RESET);
    emit(out, &l);
}

static void put_delta(struct line *l, const struct delta *d)
{
    char tmp[64];
    if (!d) {
        put_color(l, DIM);
        put(l, "0%", -1);
        put_color(l, RESET);
        return;
    }
    if (!d->defined) {      /* the baseline's mean is 0: no percentage */
        put_color(l, DIM);
        put(l, "  n/a", -1);
        put_color(l, RESET);
        return;
    }
    const char *sign = d->pct < 0 ? "-" : "+";
    if (d->verdict < 0) {
        put(l, "\u26a1", 2);
        put_color(l, GREEN);
    } else if (d->verdict > 0) {
        put(l, "\U0001f4a9", 2);
        put_color(l, RED);
    } else {
        put_color(l, DIM);
        put(l, "  ", 2);
    }
    put(l, sign, 1);
    snprintf(tmp, sizeof tmp, "%5.1f%% \u00b1 %4.1f%%", fabs(d->pct), d->half);
    put(l, tmp, (int)strlen(tmp) - 1);   /* "±" is 2 bytes, 1 column */
    put_color(l, RESET);
}

void table_row(FILE *out, const char *name, enum unit u,
               const struct summary *s, const struct delta *d,
               int with_delta, int color)
{
    struct line l = { .color = color };
    char v[32];

    put(&l, "  ", -1);
    put(&l, name, -1);
    pad_to(&l, COL_MEAN);
    put(&l, fmt_value(v, sizeof v, s->mean, u), -1);
    put(&l, " \u00b1 ", 3);
    put(&l, fmt_value(v, sizeof v, s->sd, u), -1);
    pad_to(&l, COL_MIN);
    put(&l, fmt_value(v, sizeof v, s->min, u), -1);
    put(&l, " \u2026 ", 3);
    put(&l, fmt_value(v, sizeof v, s->max, u), -1);
    pad_to(&l, COL_OUTLIERS);

    double pct = s->n ? (double)s->outliers * 100 / (double)s->n : 0;
    put_color(&l, pct >= 10 ? YELLOW : DIM);
    snprintf(v, sizeof v, "%4zu (%2.0f%%)", s->outliers, pct);
    put(&l, v, -1);
    put_color(&l, RESET);

    if (with_delta) {
        pad_to(&l, COL_DELTA);
        put_delta(&l, d);
    }
    emit(out, &l);
}

static void print_block(FILE *out, const struct report *r,
                        const struct bench *b, int with_delta, int color)
{
    const enum meas *rows = r->have_hw ? rows_hw : rows_sw;
    const struct bench *base = &r->benches[r->baseline];

    table_title(out, b->index, b->nruns, b->alloc, b->cmdline, color);
    table_header(out, with_delta, color);
    for (const enum meas *m = rows; *m != M_COUNT; m++) {
        struct delta d;
        if (b != base)
            d = stats_delta(&base->sum[*m], &b->sum[*m], 1.0);
        table_row(out, meas_info[*m].name, meas_info[*m].unit, &b->sum[*m],
                  b == base ? NULL : &d, with_delta, color);
    }
}

/* "0.45x", or "n/a" when the baseline's median is 0. */
static void fmt_ratio(char *buf, size_t size, double v, double base)
{
    if (base == 0)
        snprintf(buf, size, "n/a");
    else
        snprintf(buf, size, "%.2fx", v / base);
}

static void print_summary(FILE *out, const struct report *r)
{
    const struct bench *base = &r->benches[r->baseline];
    int first = 1;
    for (size_t i = 0; i < r->nbench; i++) {
        const struct bench *b = &r->benches[i];
        if (b == base || b->failure)
            continue;
        if (first)
            fputc('\n', out);
        first = 0;
        char wall[32], rss[32];
        fmt_ratio(wall, sizeof wall, b->sum[M_WALL].median,
                  base->sum[M_WALL].median);
        fmt_ratio(rss, sizeof rss, b->sum[M_RSS].median,
                  base->sum[M_RSS].median);
        fprintf(out, "%s: wall %s %s, peak_rss %s %s (medians)\n",
                bench_name(b), wall, bench_name(base), rss, bench_name(base));
    }
}

void table_print(FILE *out, const struct report *r, int color)
{
    size_t ok = 0;
    for (size_t i = 0; i < r->nbench; i++)
        ok += !r->benches[i].failure;

    for (size_t i = 0; i < r->nbench; i++) {
        const struct bench *b = &r->benches[i];
        if (b->failure)
            table_failed(out, b->index, b->alloc, b->cmdline, b->failure, color);
        else
            print_block(out, r, b, ok >= 2, color);
    }
    if (r->baseline >= 0)
        print_summary(out, r);
}

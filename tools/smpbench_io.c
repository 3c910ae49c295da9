/*
 * smpbench_io.c - CSV and JSON output of every run plus the summary, the SVG
 * chart, and reading the CSV back.
 *
 * The CSV is one table with fixed columns
 *     record,benchmark,allocator,command,run,status,<measurements...>
 * where record is "run" for a run's samples, "failed" for a benchmark that
 * failed (status holds why), or a statistic name (mean, stddev, min, q1,
 * median, q3, max, outliers, delta_pct, delta_ci95) for the summary rows.
 * Units: nanoseconds for times, bytes for peak_rss, plain counts otherwise.
 */
#include "smpbench_io.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "smpbench_table.h"

static int nmeas(const struct report *r)
{
    return r->have_hw ? M_COUNT : M_FIRST_HW;
}

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "smpbench: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "smpbench: error writing %s\n", path);
        return -1;
    }
    return 0;
}

/* ---- CSV ---------------------------------------------------------------- */

static void csv_field(FILE *f, const char *s)
{
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_prefix(FILE *f, const char *record, const struct bench *b,
                       const char *run, const char *status)
{
    fprintf(f, "%s,%d,", record, b->index);
    csv_field(f, b->alloc);
    fputc(',', f);
    csv_field(f, b->cmdline);
    fprintf(f, ",%s,", run);
    csv_field(f, status);
}

/* Which statistic a summary row holds. */
enum stat { ST_MEAN, ST_SD, ST_MIN, ST_Q1, ST_MEDIAN, ST_Q3, ST_MAX,
            ST_OUTLIERS, ST_DPCT, ST_DHALF, ST_COUNT };
static const char *const stat_name[ST_COUNT] = {
    "mean", "stddev", "min", "q1", "median", "q3", "max", "outliers",
    "delta_pct", "delta_ci95",
};

static double stat_value(const struct report *r, const struct bench *b,
                         int m, enum stat st)
{
    const struct summary *s = &b->sum[m];
    const struct bench *base = &r->benches[r->baseline];
    struct delta d = { 0, 0, 0, 1 };
    if (st >= ST_DPCT && b != base)
        d = stats_delta(&base->sum[m], s, 1.0);
    switch (st) {
    case ST_MEAN:     return s->mean;
    case ST_SD:       return s->sd;
    case ST_MIN:      return s->min;
    case ST_Q1:       return s->q1;
    case ST_MEDIAN:   return s->median;
    case ST_Q3:       return s->q3;
    case ST_MAX:      return s->max;
    case ST_OUTLIERS: return (double)s->outliers;
    case ST_DPCT:     return d.defined ? d.pct : NAN;
    case ST_DHALF:    return d.defined ? d.half : NAN;
    default:          return NAN;
    }
}

static void put_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
}

int write_csv(const char *path, const struct report *r)
{
    FILE *f = open_out(path);
    if (!f)
        return -1;
    fputs("record,benchmark,allocator,command,run,status", f);
    for (int m = 0; m < nmeas(r); m++)
        fprintf(f, ",%s", meas_info[m].name);
    fputc('\n', f);

    for (size_t i = 0; i < r->nbench; i++) {
        const struct bench *b = &r->benches[i];
        for (size_t k = 0; k < b->nruns; k++) {
            char run[32];
            snprintf(run, sizeof run, "%zu", k + 1);
            csv_prefix(f, "run", b, run, "ok");
            for (int m = 0; m < nmeas(r); m++) {
                fputc(',', f);
                put_number(f, b->samples[m][k]);
            }
            fputc('\n', f);
        }
        if (b->failure) {
            csv_prefix(f, "failed", b, "", b->failure);
            for (int m = 0; m < nmeas(r); m++)
                fputc(',', f);
            fputc('\n', f);
            continue;
        }
        for (int st = 0; st < ST_COUNT && r->baseline >= 0; st++) {
            csv_prefix(f, stat_name[st], b, "", "");
            for (int m = 0; m < nmeas(r); m++) {
                fputc(',', f);
                put_number(f, stat_value(r, b, m, (enum stat)st));
            }
            fputc('\n', f);
        }
    }
    return close_out(f, path);
}

/* A CSV record being read: the field texts, NUL-separated in buf, and where
 * each starts.  Offsets rather than pointers while buf may still move. */
struct csv_record {
    char *buf;
    size_t len, cap;
    size_t *start;
    char **field;
    size_t nfield, fcap;
};

static void rec_putc(struct csv_record *r, char c)
{
    if (r->len + 1 >= r->cap) {
        r->cap = r->cap ? r->cap * 2 : 256;
        r->buf = xrealloc(r->buf, r->cap);
    }
    r->buf[r->len++] = c;
}

static void rec_end_field(struct csv_record *r, size_t *field_start)
{
    rec_putc(r, 0);
    if (r->nfield == r->fcap) {
        r->fcap = r->fcap ? r->fcap * 2 : 32;
        r->start = xrealloc(r->start, r->fcap * sizeof *r->start);
        r->field = xrealloc(r->field, r->fcap * sizeof *r->field);
    }
    r->start[r->nfield++] = *field_start;
    *field_start = r->len;
}

/* Read one record (quoted fields may hold commas, quotes and newlines).
 * Returns the number of fields, 0 at end of file. */
static size_t csv_read_record(FILE *f, struct csv_record *r)
{
    size_t field_start = 0;
    int c, quoted = 0, any = 0;
    r->len = r->nfield = 0;
    while ((c = getc(f)) != EOF) {
        any = 1;
        if (quoted) {
            if (c != '"') {
                rec_putc(r, (char)c);
            } else if ((c = getc(f)) == '"') {
                rec_putc(r, '"');       /* "" inside quotes */
            } else {
                quoted = 0;
                if (c == EOF)
                    break;
                ungetc(c, f);
            }
        } else if (c == '"') {
            quoted = 1;
        } else if (c == ',' || c == '\n') {
            rec_end_field(r, &field_start);
            if (c == '\n')
                break;
        } else if (c != '\r') {
            rec_putc(r, (char)c);
        }
    }
    if (!any)
        return 0;
    if (c == EOF)       /* the last record had no newline */
        rec_end_field(r, &field_start);
    for (size_t i = 0; i < r->nfield; i++)
        r->field[i] = r->buf + r->start[i];
    return r->nfield;
}

static void free_record(struct csv_record *r)
{
    free(r->buf);
    free(r->start);
    free(r->field);
}

static struct bench *find_or_add_bench(struct report *r, int index,
                                       const char *alloc, const char *cmdline)
{
    for (size_t i = 0; i < r->nbench; i++)
        if (r->benches[i].index == index)
            return &r->benches[i];
    r->benches = xrealloc(r->benches, (r->nbench + 1) * sizeof *r->benches);
    struct bench *b = &r->benches[r->nbench++];
    memset(b, 0, sizeof *b);
    b->index = index;
    b->alloc = *alloc ? xstrdup(alloc) : NULL;
    b->cmdline = xstrdup(cmdline);
    return b;
}

int read_csv(const char *path, struct report *r)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "smpbench: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    memset(r, 0, sizeof *r);
    struct csv_record rec = { 0 };
    size_t nf = csv_read_record(f, &rec);
    char **fld = rec.field;
    int col[M_COUNT];   /* column of each measurement, -1 if absent */
    for (int m = 0; m < M_COUNT; m++) {
        col[m] = -1;
        for (size_t i = 6; i < nf; i++)
            if (strcmp(fld[i], meas_info[m].name) == 0)
                col[m] = (int)i;
    }
    if (nf < 7 || strcmp(fld[0], "record") != 0 || col[M_WALL] < 0 ||
        col[M_RSS] < 0) {
        fprintf(stderr, "smpbench: %s: not a CSV written by smpbench --csv\n", path);
        fclose(f);
        free_record(&rec);
        return -1;
    }
    r->have_hw = 1;
    for (int m = 0; m < M_COUNT; m++)
        if (col[m] < 0)
            r->have_hw &= m < M_FIRST_HW;

    int line = 1, bad = 0;
    while ((nf = csv_read_record(f, &rec)) > 0) {
        fld = rec.field;
        line++;
        if (nf < 6) {
            fprintf(stderr, "smpbench: %s:%d: too few fields\n", path, line);
            bad = 1;
            break;
        }
        int is_run = strcmp(fld[0], "run") == 0;
        if (!is_run && strcmp(fld[0], "failed") != 0)
            continue;   /* summary rows are recomputed */
        struct bench *b = find_or_add_bench(r, atoi(fld[1]), fld[2], fld[3]);
        if (!is_run) {
            bench_fail(b, "%s", fld[5]);
            continue;
        }
        double v[M_COUNT] = { 0 };
        for (int m = 0; m < M_COUNT; m++)
            if (col[m] >= 0 && (size_t)col[m] < nf)
                v[m] = strtod(fld[col[m]], NULL);
        bench_add_sample(b, v);
    }
    fclose(f);
    free_record(&rec);
    if (bad)
        return -1;
    for (size_t i = 0; i < r->nbench; i++) {
        if (!r->benches[i].failure && r->benches[i].nruns == 0)
            bench_fail(&r->benches[i], "no runs recorded");
        bench_summarize(&r->benches[i], r->have_hw);
    }
    report_pick_baseline(r);
    return 0;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

static const char *unit_name(enum unit u)
{
    return u == UNIT_NS ? "ns" : u == UNIT_BYTES ? "bytes" : "count";
}

static void json_summary(FILE *f, const struct report *r, const struct bench *b)
{
    fputs(",\n      \"summary\": {", f);
    for (int m = 0; m < nmeas(r); m++) {
        fprintf(f, "%s\n        \"%s\": {\"unit\": \"%s\"", m ? "," : "",
                meas_info[m].name, unit_name(meas_info[m].unit));
        for (int st = 0; st < ST_COUNT; st++) {
            fprintf(f, ", \"%s\": ", stat_name[st]);
            json_number(f, stat_value(r, b, m, (enum stat)st));
        }
        const struct bench *base = &r->benches[r->baseline];
        int verdict = b == base ? 0 :
            stats_delta(&base->sum[m], &b->sum[m], 1.0).verdict;
        fprintf(f, ", \"verdict\": \"%s\"}",
                verdict < 0 ? "better" : verdict > 0 ? "worse" : "same");
    }
    fputs("\n      }", f);
}

static void json_bench(FILE *f, const struct report *r, const struct bench *b)
{
    fprintf(f, "    {\n      \"index\": %d,\n      \"allocator\": ", b->index);
    json_string(f, b->alloc);
    fputs(",\n      \"preload\": ", f);
    json_string(f, b->preload);
    fputs(",\n      \"command\": ", f);
    json_string(f, b->cmdline);
    fprintf(f, ",\n      \"status\": \"%s\",\n      \"failure\": ",
            b->failure ? "failed" : "ok");
    json_string(f, b->failure);
    fprintf(f, ",\n      \"runs\": %zu,\n      \"samples\": {", b->nruns);
    for (int m = 0; m < nmeas(r); m++) {
        fprintf(f, "%s\n        \"%s\": [", m ? "," : "", meas_info[m].name);
        for (size_t k = 0; k < b->nruns; k++) {
            if (k)
                fputs(", ", f);
            json_number(f, b->samples[m][k]);
        }
        fputc(']', f);
    }
    fputs("\n      }", f);
    if (!b->failure && r->baseline >= 0)
        json_summary(f, r, b);
    fputs("\n    }", f);
}

int write_json(const char *path, const struct report *r)
{
    FILE *f = open_out(path);
    if (!f)
        return -1;
    fprintf(f, "{\n  \"tool\": \"smpbench\",\n  \"counters\": \"%s\",\n"
               "  \"baseline\": %d,\n  \"benchmarks\": [\n",
            r->have_hw ? "hardware" : "software",
            r->baseline >= 0 ? r->benches[r->baseline].index : 0);
    for (size_t i = 0; i < r->nbench; i++) {
        json_bench(f, r, &r->benches[i]);
        fputs(i + 1 < r->nbench ? ",\n" : "\n", f);
    }
    fputs("  ]\n}\n", f);
    return close_out(f, path);
}

/* ---- SVG ---------------------------------------------------------------- */

static void xml_text(FILE *f, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && n < max; s++, n++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:  fputc(*s, f);
        }
    }
    if (*s)
        fputs("\u2026", f);
}

/* A colour per benchmark, distinct and readable on white. */
static const char *const palette[] = {
    "#7f7f7f", "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
    "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
};
#define NPALETTE (sizeof palette / sizeof palette[0])

#define SVG_TOP     70      /* title and subtitle above the plot */
#define SVG_LEFT    60      /* y-axis labels */
#define SVG_PLOT_H  300
#define SVG_BAR_W   56
#define SVG_BAR_GAP 14
#define SVG_GROUP_GAP 50

int write_svg(const char *path, const struct report *r)
{
    if (r->baseline < 0) {
        fprintf(stderr, "smpbench: no successful benchmark to chart in %s\n", path);
        return -1;
    }
    const struct bench *base = &r->benches[r->baseline];
    const struct bench *ok[256];
    size_t nok = 0;
    for (size_t i = 0; i < r->nbench && nok < 256; i++)
        if (!r->benches[i].failure)
            ok[nok++] = &r->benches[i];

    static const struct { enum meas m; const char *title; } group[2] = {
        { M_WALL, "median wall time" }, { M_RSS, "median peak RSS" },
    };
    /* The y axis goes a little past the largest ratio, and at least to 1.2
     * so the baseline's bar never touches the top. */
    double top = 1.2;
    for (size_t g = 0; g < 2; g++)
        for (size_t i = 0; i < nok; i++) {
            double bm = base->sum[group[g].m].median;
            double v = bm != 0 ? ok[i]->sum[group[g].m].median / bm : 0;
            if (v * 1.15 > top)
                top = v * 1.15;
        }
    double step = top <= 2 ? 0.25 : top <= 5 ? 0.5 : top <= 10 ? 1 : ceil(top / 10);

    int group_w = (int)nok * (SVG_BAR_W + SVG_BAR_GAP) + SVG_BAR_GAP;
    int plot_w = 2 * group_w + SVG_GROUP_GAP;
    int legend_h = 22 * (int)nok;
    /* Wide enough for the plot, the title and the legend, estimating text
     * widths (~12 px a character at 18 px bold, ~7 px at 12 px). */
    int width = SVG_LEFT + plot_w + 30;
    int title_w = SVG_LEFT + 20 + 12 * (int)(32 + strlen(bench_name(base)));
    if (width < title_w)
        width = title_w;
    for (size_t i = 0; i < nok; i++) {
        size_t len = strlen(ok[i]->cmdline) + (ok[i]->alloc ? strlen(ok[i]->alloc) + 3 : 0);
        int legend_w = SVG_LEFT + 50 + 7 * (int)(len < 80 ? len : 80);
        if (width < legend_w)
            width = legend_w;
    }
    int height = SVG_TOP + SVG_PLOT_H + 60 + legend_h + 10;
    int y0 = SVG_TOP + SVG_PLOT_H;     /* the x axis */

    FILE *f = open_out(path);
    if (!f)
        return -1;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"18\" font-weight=\"bold\">"
               "Median wall time and peak RSS vs ", SVG_LEFT);
    xml_text(f, bench_name(base), 40);
    fputs("</text>\n", f);
    fprintf(f, "<text x=\"%d\" y=\"50\" font-size=\"12\" fill=\"#555\">"
               "lower is better; the dashed line is ", SVG_LEFT);
    xml_text(f, bench_name(base), 40);
    fputs(" (1.00x)</text>\n", f);

    /* Y axis: gridlines and ratio labels. */
    for (double t = 0; t <= top + 1e-9; t += step) {
        double y = y0 - t / top * SVG_PLOT_H;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>\n",
                SVG_LEFT, y, SVG_LEFT + plot_w, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" "
                   "fill=\"#555\">%.2fx</text>\n", SVG_LEFT - 6, y + 4, t);
    }

    for (size_t g = 0; g < 2; g++) {
        enum meas m = group[g].m;
        int gx = SVG_LEFT + (int)g * (group_w + SVG_GROUP_GAP);
        double bm = base->sum[m].median;
        for (size_t i = 0; i < nok; i++) {
            double med = ok[i]->sum[m].median;
            double ratio = bm != 0 ? med / bm : 0;
            double h = ratio / top * SVG_PLOT_H;
            int x = gx + SVG_BAR_GAP + (int)i * (SVG_BAR_W + SVG_BAR_GAP);
            char abs[32];
            fmt_value(abs, sizeof abs, med, meas_info[m].unit);
            fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>\n",
                    x, y0 - h, SVG_BAR_W, h, palette[(ok[i]->index - 1) % NPALETTE]);
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\" "
                       "text-anchor=\"middle\">%.2fx</text>\n",
                    x + SVG_BAR_W / 2, y0 - h - 18, ratio);
            /* the absolute median, trimmed of poop's padding */
            const char *a = abs;
            while (*a == ' ')
                a++;
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" fill=\"#444\" "
                       "text-anchor=\"middle\">%s</text>\n",
                    x + SVG_BAR_W / 2, y0 - h - 5, a);
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">",
                    x + SVG_BAR_W / 2, y0 + 15);
            xml_text(f, bench_name(ok[i]), 9);
            fputs("</text>\n", f);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\" "
                   "text-anchor=\"middle\">%s</text>\n",
                gx + group_w / 2, y0 + 38, group[g].title);
    }
    double y1 = y0 - 1 / top * SVG_PLOT_H;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\" "
               "stroke-dasharray=\"6 4\"/>\n", SVG_LEFT, y1, SVG_LEFT + plot_w, y1);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n",
            SVG_LEFT, y0, SVG_LEFT + plot_w, y0);

    /* Legend: the full names (commands can be long). */
    for (size_t i = 0; i < nok; i++) {
        int ly = y0 + 60 + 22 * (int)i;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>\n",
                SVG_LEFT, ly, palette[(ok[i]->index - 1) % NPALETTE]);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%d: ",
                SVG_LEFT + 20, ly + 12, ok[i]->index);
        if (ok[i]->alloc) {
            fputc('[', f);
            xml_text(f, ok[i]->alloc, 40);
            fputs("] ", f);
        }
        xml_text(f, ok[i]->cmdline, 70);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    return close_out(f, path);
}

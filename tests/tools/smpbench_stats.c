/*
 * smpbench_stats.c - unit test of tools/stats.c against values computed
 * independently:
 *
 *   python3 -c 'import statistics as st; d=[...]; print(st.mean(d),
 *       st.stdev(d), st.quantiles(d, n=4, method="inclusive"),
 *       st.median(d))'
 *
 * for the summaries, standard tables (scipy.stats.t.ppf(0.975, df), to 10
 * digits) for the t quantiles, and the pooled-variance formula evaluated in
 * python for the delta.  Prints each failed check; exit 1 if any failed.
 */
#include <math.h>
#include <stdio.h>

#include "stats.h"

static int failures;

static void near(const char *what, double got, double want, double rel)
{
    double tol = rel * (fabs(want) > 1 ? fabs(want) : 1);
    if (!(fabs(got - want) <= tol)) {
        printf("FAIL %s: got %.12g, want %.12g\n", what, got, want);
        failures++;
    }
}

static void equal(const char *what, long got, long want)
{
    if (got != want) {
        printf("FAIL %s: got %ld, want %ld\n", what, got, want);
        failures++;
    }
}

struct expect {
    const char *name;
    double data[8];
    size_t n;
    double mean, sd, min, q1, median, q3, max;
    long outliers;
};

static const struct expect sets[] = {
    /* one high outlier: 100 > Q3 + 1.5 IQR = 9.5 + 7.125 */
    { "A", { 5, 7, 3, 9, 11, 4, 6, 100 }, 8,
      18.125, 33.18535606472917, 3, 4.75, 6.5, 9.5, 100, 1 },
    { "B", { 10, 12, 11, 13, 9 }, 5,
      11.0, 1.5811388300841898, 9, 10, 11, 12, 13, 0 },
    /* 11.5 > Q3 + 1.5 IQR = 10.4375 + 0.65625 */
    { "C", { 10.5, 10, 11.5, 10.25, 9.75, 10 }, 6,
      10.333333333333334, 0.6258327785172862, 9.75, 10, 10.125, 10.4375, 11.5, 1 },
};

static void check_summaries(struct summary out[3])
{
    char what[64];
    for (size_t i = 0; i < 3; i++) {
        const struct expect *e = &sets[i];
        struct summary *s = &out[i];
        if (stats_summarize(e->data, e->n, s) != 0) {
            printf("FAIL %s: stats_summarize refused\n", e->name);
            failures++;
            continue;
        }
#define CHECK(field) \
        snprintf(what, sizeof what, "%s " #field, e->name); \
        near(what, s->field, e->field, 1e-12)
        CHECK(mean); CHECK(sd); CHECK(min); CHECK(q1); CHECK(median);
        CHECK(q3); CHECK(max);
#undef CHECK
        snprintf(what, sizeof what, "%s outliers", e->name);
        equal(what, (long)s->outliers, e->outliers);
        snprintf(what, sizeof what, "%s n", e->name);
        equal(what, (long)s->n, (long)e->n);
    }
    /* The input is left in execution order. */
    equal("input untouched", sets[0].data[0] == 5 && sets[0].data[7] == 100, 1);
}

static void check_edge_cases(void)
{
    struct summary s;
    double one = 42;
    equal("n = 0 refused", stats_summarize(&one, 0, &s), -1);
    equal("n = 1 accepted", stats_summarize(&one, 1, &s), 0);
    near("n = 1 sd", s.sd, 0, 0);
    near("n = 1 q1", s.q1, 42, 0);
    near("n = 1 q3", s.q3, 42, 0);
    equal("n = 1 outliers", (long)s.outliers, 0);

    /* Identical values: IQR 0, nothing is an outlier. */
    double same[4] = { 7, 7, 7, 7 };
    stats_summarize(same, 4, &s);
    equal("constant outliers", (long)s.outliers, 0);

    /* Variance with a huge mean and tiny spread (instruction counts):
     * 274e6 + {0, 1, 2}, sample sd 1 exactly. */
    double big[3] = { 274e6, 274e6 + 1, 274e6 + 2 };
    stats_summarize(big, 3, &s);
    near("tiny spread sd", s.sd, 1, 1e-9);

    double sorted[4] = { 1, 2, 3, 4 };
    near("quantile 0", stats_quantile(sorted, 4, 0), 1, 0);
    near("quantile 1", stats_quantile(sorted, 4, 1), 4, 0);
    near("quantile 0.25", stats_quantile(sorted, 4, 0.25), 1.75, 1e-15);
}

static void check_t(void)
{
    static const struct { double df, t; } table[] = {
        { 1, 12.7062047362 }, { 2, 4.30265272975 }, { 5, 2.57058183661 },
        { 9, 2.26215716274 }, { 10, 2.22813885196 }, { 28, 2.04840714180 },
        { 29, 2.04522964213 }, { 30, 2.04227245630 }, { 100, 1.98397151852 },
        { 1000, 1.96233908082 }, { 1e6, 1.95996635681 },   /* Cornish-Fisher, 2 terms */
    };
    char what[64];
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        snprintf(what, sizeof what, "t975(df=%g)", table[i].df);
        near(what, stats_t975(table[i].df), table[i].t, 1e-8);
    }
}

static void check_delta(const struct summary *b, const struct summary *c)
{
    /* C against B: df = 9; python, with t = 2.2621571627409915:
     * (-6.060606060606055, 14.354229215366049) */
    struct delta d = stats_delta(b, c, 1.0);
    near("delta pct", d.pct, -6.060606060606055, 1e-9);
    near("delta half", d.half, 14.354229215366049, 1e-8);
    equal("delta defined", d.defined, 1);
    equal("delta inside threshold: no verdict", d.verdict, 0);

    /* The verdict needs the whole interval beyond 1 %: build summaries
     * with a known delta.  n = 1000 each, mean 100 vs 95/102, sd 1. */
    struct summary base = { .n = 1000, .mean = 100, .sd = 1 };
    struct summary lower = { .n = 1000, .mean = 95, .sd = 1 };
    struct summary higher = { .n = 1000, .mean = 102, .sd = 1 };
    struct summary close = { .n = 1000, .mean = 99.05, .sd = 1 };
    struct summary noisy = { .n = 1000, .mean = 97, .sd = 40 };
    equal("5% lower: better", stats_delta(&base, &lower, 1.0).verdict, -1);
    equal("2% higher: worse", stats_delta(&base, &higher, 1.0).verdict, 1);
    /* -0.95 % with half ~0.088: certain, but inside the 1 % threshold */
    equal("0.95% lower: within threshold", stats_delta(&base, &close, 1.0).verdict, 0);
    /* -3 % with half ~2.5: interval reaches past -1 % */
    equal("noisy: no verdict", stats_delta(&base, &noisy, 1.0).verdict, 0);

    /* Baseline mean 0: no percentage. */
    struct summary zero = { .n = 10, .mean = 0, .sd = 0 };
    equal("zero base undefined", stats_delta(&zero, &base, 1.0).defined, 0);

    /* One sample each: no degrees of freedom, no interval, no verdict. */
    struct summary one_a = { .n = 1, .mean = 100 }, one_b = { .n = 1, .mean = 50 };
    struct delta d1 = stats_delta(&one_a, &one_b, 1.0);
    equal("df 0: infinite half", isinf(d1.half), 1);
    equal("df 0: no verdict", d1.verdict, 0);
}

int main(void)
{
    struct summary s[3];
    check_summaries(s);
    check_edge_cases();
    check_t();
    check_delta(&s[1], &s[2]);
    if (failures) {
        printf("%d checks failed\n", failures);
        return 1;
    }
    printf("all statistics checks passed\n");
    return 0;
}

/*
 * smpbench - compare a program's run time, peak memory and counters under
 * several malloc implementations (or compare several commands), printing
 * the seed post's poop-style table.
 *
 *   smpbench [options] -- COMMAND [ARGS...]      each allocator
 *   smpbench [options] --cmds 'CMD 1' 'CMD 2'    each command (poop style)
 *
 * This file holds the options, the checks of the inputs (before any run)
 * and the schedule: runs are interleaved (A B C A B C ...) with the order
 * rotated each round, so slow drift of the machine (thermal, page cache,
 * other load) is spread over all benchmarks instead of favouring the one
 * measured first.  Which allocators exist is smpbench_alloc.c's business.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "smpbench.h"
#include "smpbench_alloc.h"
#include "smpbench_input.h"
#include "smpbench_io.h"
#include "smpbench_run.h"
#include "smpbench_table.h"

#ifndef SMPBENCH_VERSION
#define SMPBENCH_VERSION "unknown"
#endif

extern char **environ;

#define MAX_RUNS 10000      /* per benchmark; bounds memory and the run */
#define MAX_EXTRA 32        /* --alloc options */
#define MAX_PEER_DIRS 16    /* --peer-dir options */

struct options {
    double time_budget;     /* seconds for all counted runs together */
    long min_runs, exact_runs, warmup;
    int keep_output, sw_only, cmds_mode, color;   /* color: -1 auto */
    int list_allocs;
    const char *allocs;     /* --allocs LIST, or NULL */
    const char *json, *csv, *svg, *from_csv;
    struct alloc_config where;                  /* --lib, --peer-dir */
    char *peer_dirs[MAX_PEER_DIRS];
    const char *extra_name[MAX_EXTRA], *extra_path[MAX_EXTRA];  /* --alloc */
    size_t nextra;
};

static const char usage_short[] =
    "usage: smpbench [options] -- COMMAND [ARGS...]\n"
    "       smpbench [options] --cmds 'COMMAND 1' 'COMMAND 2' ...\n"
    "Try 'smpbench --help' for more information.\n";

static const char usage_long[] =
    "usage: smpbench [options] -- COMMAND [ARGS...]\n"
    "       smpbench [options] --cmds 'COMMAND 1' 'COMMAND 2' ...\n"
    "       smpbench [options] 'COMMAND 1' 'COMMAND 2' ...   (same as --cmds)\n"
    "       smpbench --from-csv FILE [--json FILE] [--svg FILE]\n"
    "       smpbench --list-allocs [--allocs LIST] [--alloc NAME=PATH] ...\n"
    "\n"
    "Runs COMMAND many times under each malloc implementation - glibc (no\n"
    "preload), smpalloc (LD_PRELOAD of libsmpalloc.so), each peer Debian\n"
    "installed (jemalloc, mimalloc, tcmalloc_minimal) and each peer build in\n"
    "the peer folders - or runs several commands against each other, and\n"
    "prints for each benchmark mean +- sigma, min ... max, Tukey outliers and\n"
    "the delta of the mean against benchmark 1 with its 95% interval\n"
    "(pooled-variance t test; flagged better/worse only when the whole\n"
    "interval is beyond 1%), then the ratios of the median wall time and peak\n"
    "RSS to benchmark 1.\n"
    "\n"
    "Commands given as strings are split into words like a shell would\n"
    "('...' and \"...\" quoting, backslash escapes) but run without one.\n"
    "Before the first run smpbench checks that every command can be started,\n"
    "every allocator asked for can be preloaded and every output file can be\n"
    "written; if not, it says why and exits 2.\n"
    "\n"
    "Allocators (names are labels: glibc, smpalloc, NAME-VERSION for a peer):\n"
    "  --allocs LIST        compare these, in this order (comma-separated\n"
    "                       labels; a family name such as mimalloc takes every\n"
    "                       mimalloc found).  Default: glibc, smpalloc, every\n"
    "                       peer found (in version order), then each --alloc.\n"
    "                       With --cmds the default is to leave the environment\n"
    "                       alone; giving --allocs or --alloc runs every command\n"
    "                       under every allocator.\n"
    "  --alloc NAME=PATH    add an allocator: LD_PRELOAD=PATH (repeatable); a\n"
    "                       label already known takes that one's place\n"
    "  --lib PATH           the smpalloc library (default: libsmpalloc.so next to\n"
    "                       smpbench in a build tree; LIBDIR/libsmpalloc.so.0 for\n"
    "                       an installed smpbench)\n"
    "  --peer-dir DIR       look for peer builds (files libNAME-VERSION.so,\n"
    "                       labelled NAME-VERSION) in DIR instead of the default\n"
    "                       folder, ../shared/peers next to the checkout of a\n"
    "                       build tree's smpbench (repeatable; '' for none)\n"
    "  --list-allocs        print the allocators that would be compared, one a\n"
    "                       line: label, a tab, the library (empty for glibc)\n"
    "\n"
    "Debian's peers are labelled with the upstream version of the package that\n"
    "owns the library (dpkg-query), e.g. mimalloc-2.0.9, else NAME (Debian).\n"
    "\n"
    "Schedule (runs are interleaved A B C A B C ..., the order rotating each round):\n"
    "  -t, --time SECONDS   time budget for all counted runs together (default 5)\n"
    "  --min-runs N         at least N counted runs of each (default 3)\n"
    "  -n, --runs N         exactly N counted runs of each; ignores --time\n"
    "  --warmup N           uncounted runs of each before counting (default 1)\n"
    "\n"
    "Measurements: wall_time (CLOCK_MONOTONIC around fork/exec/wait4), peak_rss\n"
    "(wait4 ru_maxrss), and poop's hardware counters (cpu_cycles, instructions,\n"
    "cache_references, cache_misses, branch_misses; perf_event_open, user space,\n"
    "inherited by the command's threads).  Where the kernel refuses those the\n"
    "table shows rusage counters instead: cpu_time (user+sys), user_time,\n"
    "sys_time, page_faults (minor+major), ctx_switches (voluntary+involuntary).\n"
    "  --sw-counters        do not try the hardware counters\n"
    "\n"
    "Output:\n"
    "  --json FILE          every run's samples plus the summary, as JSON\n"
    "  --csv FILE           the same as CSV: columns record,benchmark,allocator,\n"
    "                       command,run,status,<measurements>; record is 'run',\n"
    "                       'failed' or a statistic (mean, stddev, min, q1, median,\n"
    "                       q3, max, outliers, delta_pct, delta_ci95).  Units: ns,\n"
    "                       bytes, counts.\n"
    "  --svg FILE           bar chart of median wall time and peak RSS relative to\n"
    "                       benchmark 1\n"
    "  --from-csv FILE      run nothing: print the table (and --json/--svg) from\n"
    "                       the runs recorded in a --csv file\n"
    "  --color WHEN         auto (default: when stdout is a terminal and NO_COLOR\n"
    "                       is unset), always or never\n"
    "  --show-output        let the commands' stdout and stderr through (default:\n"
    "                       /dev/null; stdin is always /dev/null)\n"
    "  -h, --help           this text\n"
    "  --version            the version\n"
    "\n"
    "A command that exits non-zero or is killed by a signal under one allocator\n"
    "is reported as failed in that benchmark's place and the others go on.\n"
    "\n"
    "Environment: NO_COLOR disables colour; SMPBENCH_FORCE_NO_HW=1 makes the\n"
    "hardware counters fail as if the kernel refused them (for testing);\n"
    "SMPBENCH_LIB_DIRS (colon-separated) replaces the directories searched for\n"
    "Debian's peers.\n"
    "\n"
    "Exit status: 0 all benchmarks ran, 1 one or more failed, 2 usage error or\n"
    "an input that cannot be used.\n"
    "\n"
    "Here:\n";

__attribute__((format(printf, 1, 2), noreturn))
static void usage_error(const char *fmt, ...)
{
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs("smpbench: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    fputs(usage_short, stderr);
    exit(2);
}

/* ---- option parsing ------------------------------------------------------ */

static long parse_count(const char *opt, const char *s, long min)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > MAX_RUNS) {
        fprintf(stderr, "smpbench: %s wants a whole number from %ld to %d, not '%s'\n",
                opt, min, MAX_RUNS, s);
        exit(2);
    }
    return v;
}

static double parse_seconds(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || v > 86400) {
        fprintf(stderr, "smpbench: --time wants seconds (e.g. 5 or 0.5), not '%s'\n", s);
        exit(2);
    }
    return v;
}

static void add_extra_alloc(struct options *o, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1])
        usage_error("--alloc wants NAME=PATH, not '%s'", spec);
    if (o->nextra == MAX_EXTRA)
        usage_error("too many --alloc options (at %s)", spec);
    char *name = xstrdup(spec);
    name[eq - spec] = 0;
    o->extra_name[o->nextra] = name;
    o->extra_path[o->nextra++] = eq + 1;
}

enum { OPT_ALLOCS = 256, OPT_ALLOC, OPT_LIB, OPT_PEER_DIR, OPT_LIST_ALLOCS,
       OPT_MIN_RUNS, OPT_WARMUP, OPT_JSON, OPT_CSV, OPT_SVG, OPT_FROM_CSV,
       OPT_COLOR, OPT_SHOW, OPT_SW, OPT_CMDS, OPT_VERSION };

static const struct option long_opts[] = {
    { "allocs", required_argument, 0, OPT_ALLOCS },
    { "alloc", required_argument, 0, OPT_ALLOC },
    { "lib", required_argument, 0, OPT_LIB },
    { "peer-dir", required_argument, 0, OPT_PEER_DIR },
    { "list-allocs", no_argument, 0, OPT_LIST_ALLOCS },
    { "time", required_argument, 0, 't' },
    { "min-runs", required_argument, 0, OPT_MIN_RUNS },
    { "runs", required_argument, 0, 'n' },
    { "warmup", required_argument, 0, OPT_WARMUP },
    { "json", required_argument, 0, OPT_JSON },
    { "csv", required_argument, 0, OPT_CSV },
    { "svg", required_argument, 0, OPT_SVG },
    { "from-csv", required_argument, 0, OPT_FROM_CSV },
    { "color", required_argument, 0, OPT_COLOR },
    { "show-output", no_argument, 0, OPT_SHOW },
    { "sw-counters", no_argument, 0, OPT_SW },
    { "cmds", no_argument, 0, OPT_CMDS },
    { "help", no_argument, 0, 'h' },
    { "version", no_argument, 0, OPT_VERSION },
    { 0, 0, 0, 0 },
};
#define NLONG (sizeof long_opts / sizeof long_opts[0] - 1)

/* getopt_long refused arg, the element it was reading (opterr is 0): say
 * why, with the option meant when it is near one. */
__attribute__((noreturn))
static void bad_option(const char *arg, int missing_argument)
{
    if (missing_argument)
        usage_error("option '%s' needs an argument", arg);
    const char *word = arg;
    while (*word == '-')
        word++;
    size_t len = strcspn(word, "=");
    const char *names[NLONG];
    size_t nprefix = 0;
    for (size_t i = 0; i < NLONG; i++) {
        names[i] = long_opts[i].name;
        if (strncmp(names[i], word, len) == 0 && word - arg == 2) {
            if (strlen(names[i]) == len && word[len] == '=')
                usage_error("option '--%s' takes no argument", names[i]);
            nprefix++;
        }
    }
    if (nprefix > 1)
        usage_error("option '%s' is ambiguous (the start of %zu options)", arg, nprefix);
    const char *near = nearest_word(word, len, names, NLONG);
    if (near)
        usage_error("unknown option '%s' (did you mean --%s?)", arg, near);
    usage_error("unknown option '%s'", arg);
}

/* Parse options; returns the index of the first command argument.  A
 * command after "--" selects allocator mode, bare strings command mode. */
static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){ .time_budget = 5, .min_runs = 3, .warmup = 1,
                           .color = -1 };
    o->where.peer_dirs = o->peer_dirs;
    opterr = 0;
    /* '+': stop at the first non-option, so COMMAND's own options are
     * left alone; ':': report a missing argument apart. */
    for (;;) {
        int at = optind;    /* the element getopt reads now: errors are about it */
        int c = getopt_long(argc, argv, "+:ht:n:", long_opts, NULL);
        if (c == -1)
            break;
        switch (c) {
        case 'h':
            fputs(usage_long, stdout);
            char *here = allocs_describe_search(&o->where);
            fputs(here, stdout);
            free(here);
            exit(0);
        case OPT_VERSION:   printf("smpbench %s\n", SMPBENCH_VERSION); exit(0);
        case 't':           o->time_budget = parse_seconds(optarg); break;
        case 'n':           o->exact_runs = parse_count("--runs", optarg, 1); break;
        case OPT_MIN_RUNS:  o->min_runs = parse_count("--min-runs", optarg, 1); break;
        case OPT_WARMUP:    o->warmup = parse_count("--warmup", optarg, 0); break;
        case OPT_ALLOCS:    o->allocs = optarg; break;
        case OPT_ALLOC:     add_extra_alloc(o, optarg); break;
        case OPT_LIB:       o->where.lib = optarg; break;
        case OPT_PEER_DIR:
            if (o->where.npeer_dirs == MAX_PEER_DIRS)
                usage_error("too many --peer-dir options (at %s)", optarg);
            o->peer_dirs[o->where.npeer_dirs++] = optarg;
            o->where.peer_dirs_given = 1;
            break;
        case OPT_LIST_ALLOCS: o->list_allocs = 1; break;
        case OPT_JSON:      o->json = optarg; break;
        case OPT_CSV:       o->csv = optarg; break;
        case OPT_SVG:       o->svg = optarg; break;
        case OPT_FROM_CSV:  o->from_csv = optarg; break;
        case OPT_SHOW:      o->keep_output = 1; break;
        case OPT_SW:        o->sw_only = 1; break;
        case OPT_CMDS:      o->cmds_mode = 1; break;
        case OPT_COLOR:
            if (strcmp(optarg, "auto") == 0)        o->color = -1;
            else if (strcmp(optarg, "always") == 0) o->color = 1;
            else if (strcmp(optarg, "never") == 0)  o->color = 0;
            else usage_error("--color wants auto, always or never, not '%s'", optarg);
            break;
        case ':':
            bad_option(argv[at], 1);
        default:
            bad_option(argv[at], 0);
        }
    }
    int after_dashes = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
    if (!after_dashes && optind < argc)
        o->cmds_mode = 1;   /* poop style: each argument is a command */
    if (o->from_csv && optind < argc)
        usage_error("--from-csv runs nothing; drop the command '%s'", argv[optind]);
    if (o->list_allocs && optind < argc)
        usage_error("--list-allocs runs nothing; drop the command '%s'", argv[optind]);
    if (!o->from_csv && !o->list_allocs && optind >= argc)
        usage_error("no command given");
    for (size_t i = 0; i < o->where.npeer_dirs; i++) {
        struct stat st;
        const char *d = o->peer_dirs[i];
        if (!*d)
            continue;
        if (stat(d, &st) < 0)
            usage_error("--peer-dir %s: %s", d, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            usage_error("--peer-dir %s: not a directory", d);
    }
    return optind;
}

/* ---- commands ------------------------------------------------------------ */

/* Split a command string into words: whitespace separates, '...' is
 * literal, "..." allows \" \\ \$ \` escapes, a backslash outside quotes
 * escapes the next character.  No expansion of any kind.  NULL when a
 * quote is left open. */
static char **split_words(const char *s)
{
    size_t n = strlen(s);
    char **words = xmalloc((n / 2 + 2) * sizeof *words);
    char *buf = xmalloc(n + 1), *out = buf;
    size_t nw = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s)
            break;
        words[nw++] = out;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
            if (*s == '\'') {
                const char *close = strchr(s + 1, '\'');
                if (!close)
                    goto open_quote;
                memcpy(out, s + 1, (size_t)(close - s - 1));
                out += close - s - 1;
                s = close + 1;
            } else if (*s == '"') {
                for (s++; *s != '"'; s++) {
                    if (!*s)
                        goto open_quote;
                    if (*s == '\\' && s[1] && strchr("\"\\$`", s[1]))
                        s++;
                    *out++ = *s;
                }
                s++;
            } else {
                if (*s == '\\' && s[1])
                    s++;
                *out++ = *s++;
            }
        }
        *out++ = 0;
    }
    words[nw] = NULL;
    if (nw == 0)
        goto open_quote;    /* an empty command is as unusable */
    return words;
open_quote:
    free(buf);
    free(words);
    return NULL;
}

/* The argv as a shell would need it typed: words with spaces or quotes
 * single-quoted. */
static char *join_argv(char **argv)
{
    size_t cap = 1;
    for (char **a = argv; *a; a++)
        cap += 4 * strlen(*a) + 3;
    char *s = xmalloc(cap), *p = s;
    for (char **a = argv; *a; a++) {
        if (a != argv)
            *p++ = ' ';
        int plain = **a && !strpbrk(*a, " \t\n'\"\\$`;&|<>()*?[]{}~#!");
        if (plain) {
            p = stpcpy(p, *a);
            continue;
        }
        *p++ = '\'';
        for (const char *c = *a; *c; c++) {
            if (*c == '\'')
                p = stpcpy(p, "'\\''");
            else
                *p++ = *c;
        }
        *p++ = '\'';
    }
    *p = 0;
    return s;
}

/* ---- allocators ---------------------------------------------------------- */

/* Every allocator known: those found, with the --alloc ones. */
static void known_allocs(const struct options *o, struct alloc_list *known)
{
    allocs_discover(&o->where, known);
    for (size_t i = 0; i < o->nextra; i++)
        allocs_add_explicit(known, o->extra_name[i], o->extra_path[i]);
}

static int cannot_use(const struct alloc *a)
{
    if (a->explicit)
        fprintf(stderr, "smpbench: --alloc %s: %s\n", a->name, a->problem);
    else
        fprintf(stderr, "smpbench: cannot use %s: %s\n", a->name, a->problem);
    return 1;
}

/* An --allocs entry that is not a name or a family: say so, with the
 * allocators that can be used. */
static int unknown_alloc(const struct alloc_list *known, const char *name)
{
    const char **names = xmalloc(2 * known->n * sizeof *names);
    for (size_t k = 0; k < known->n; k++) {
        names[k] = known->v[k].name;
        names[known->n + k] = known->v[k].family;
    }
    const char *near = nearest_word(name, strlen(name), names, 2 * known->n);
    fprintf(stderr, "smpbench: unknown allocator '%s'", name);
    if (near)
        fprintf(stderr, " (did you mean %s?)", near);
    fputs("; found:", stderr);
    for (size_t k = 0; k < known->n; k++)
        if (!known->v[k].problem)
            fprintf(stderr, " %s", known->v[k].name);
    fputs(" (add one with --alloc NAME=PATH)\n", stderr);
    free(names);
    return 1;
}

/* The allocators to compare, into out; returns how many problems it
 * reported.  In the default list an allocator that cannot be used is left
 * out, with a note for smpalloc (what the tool is for) and for a peer
 * build that is there but unusable; one asked for (--allocs, --alloc) must
 * be usable.  With only_explicit (--cmds with --alloc), the --alloc ones. */
static int select_allocs(const struct options *o, int only_explicit,
                         struct alloc_list *out)
{
    struct alloc_list known;
    known_allocs(o, &known);
    memset(out, 0, sizeof *out);
    int problems = 0;
    if (!o->allocs) {
        for (size_t i = 0; i < known.n; i++) {
            const struct alloc *a = &known.v[i];
            if (only_explicit && !a->explicit)
                continue;
            if (a->problem && a->explicit) {
                problems += cannot_use(a);
            } else if (a->problem) {
                if (strcmp(a->name, "smpalloc") == 0)
                    fprintf(stderr, "smpbench: note: leaving out smpalloc: %s "
                            "(build it with 'make lib' or pass --lib PATH)\n",
                            a->problem);
                else if (a->path)
                    fprintf(stderr, "smpbench: note: leaving out %s: %s\n",
                            a->name, a->problem);
            } else {
                allocs_push(out, *a);
            }
        }
        return problems;
    }
    char *list = xstrdup(o->allocs), *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        /* The allocator of that name when it can be used, else the
         * usable ones of that family (a Debian peer that is missing has
         * its family's name), else whatever is wrong with them. */
        size_t exact = known.n, usable = 0, family = 0;
        for (size_t i = 0; i < known.n; i++) {
            if (strcmp(known.v[i].name, name) == 0)
                exact = i;
            if (strcmp(known.v[i].family, name) == 0) {
                family++;
                usable += !known.v[i].problem;
            }
        }
        if (exact < known.n && (!known.v[exact].problem || usable == 0)) {
            if (known.v[exact].problem)
                problems += cannot_use(&known.v[exact]);
            else
                allocs_push(out, known.v[exact]);
            continue;
        }
        if (family == 0) {
            problems += unknown_alloc(&known, name);
            continue;
        }
        for (size_t i = 0; i < known.n; i++) {
            const struct alloc *a = &known.v[i];
            if (strcmp(a->family, name) != 0 || (usable && a->problem))
                continue;
            if (a->problem)
                problems += cannot_use(a);
            else
                allocs_push(out, *a);
        }
    }
    free(list);
    return problems;
}

/* environ without LD_PRELOAD, plus LD_PRELOAD=preload when given. */
static char **make_env(const char *preload)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = xmalloc((n + 2) * sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            env[k++] = environ[i];
    if (preload)
        env[k++] = xasprintf("LD_PRELOAD=%s", preload);
    env[k] = NULL;
    return env;
}

/* ---- building the benchmark list ------------------------------------------ */

struct plan {
    struct report report;
    char ***envs;       /* envs[i]: environment of benchmark i */
};

static struct bench *new_bench(struct plan *p, char **env)
{
    struct report *r = &p->report;
    r->benches = xrealloc(r->benches, (r->nbench + 1) * sizeof *r->benches);
    p->envs = xrealloc(p->envs, (r->nbench + 1) * sizeof *p->envs);
    struct bench *b = &r->benches[r->nbench];
    memset(b, 0, sizeof *b);
    p->envs[r->nbench] = env;
    b->index = (int)++r->nbench;
    return b;
}

static void plan_command(struct plan *p, char **argv, char *cmdline,
                         const struct alloc_list *allocs, int name_with_cmd)
{
    if (allocs->n == 0) {   /* --cmds without allocators: as it is */
        struct bench *b = new_bench(p, environ);
        b->argv = argv;
        b->cmdline = cmdline;
        return;
    }
    for (size_t i = 0; i < allocs->n; i++) {
        const struct alloc *a = &allocs->v[i];
        struct bench *b = new_bench(p, make_env(a->path));
        b->alloc = a->name;
        b->preload = a->path;
        b->argv = argv;
        b->cmdline = cmdline;
        if (name_with_cmd)
            b->name = xasprintf("[%s] %s", a->name, cmdline);
    }
}

/* Build the benchmarks; returns how many problems it reported. */
static int plan_benchmarks(struct plan *p, const struct options *o,
                           int argc, char **argv, int first)
{
    struct alloc_list allocs = { 0 };
    int problems = 0;
    if (!o->cmds_mode || o->allocs || o->nextra)
        problems += select_allocs(o, o->cmds_mode && !o->allocs, &allocs);
    if (!o->cmds_mode) {
        plan_command(p, argv + first, join_argv(argv + first), &allocs, 0);
        return problems;
    }
    int several = argc - first > 1;
    for (int i = first; i < argc; i++) {
        char **words = split_words(argv[i]);
        if (!words) {
            fprintf(stderr, "smpbench: unbalanced quotes in the command: %s\n", argv[i]);
            problems++;
            continue;
        }
        plan_command(p, words, argv[i], &allocs, several && allocs.n > 0);
    }
    return problems;
}

/* Before the first run: can every command start, every output be
 * written?  Returns how many problems it reported. */
static int check_inputs(const struct options *o, const struct plan *p)
{
    int problems = 0;
    for (size_t i = 0; i < p->report.nbench; i++) {
        const struct bench *b = &p->report.benches[i];
        if (!b->argv || (i > 0 && b->argv == p->report.benches[i - 1].argv))
            continue;       /* recorded runs; the same command again */
        char *why = command_problem(b->argv[0]);
        if (why) {
            fprintf(stderr, "smpbench: cannot run '%s': %s\n", b->argv[0], why);
            problems++;
            free(why);
        }
    }
    const char *outputs[][2] = { { "--csv", o->csv }, { "--json", o->json },
                                 { "--svg", o->svg } };
    for (size_t i = 0; i < 3; i++) {
        if (!outputs[i][1])
            continue;
        char *why = output_problem(outputs[i][1]);
        if (why) {
            fprintf(stderr, "smpbench: %s %s: cannot write: %s\n",
                    outputs[i][0], outputs[i][1], why);
            problems++;
            free(why);
        }
    }
    return problems;
}

/* ---- running -------------------------------------------------------------- */

struct runner {
    const struct options *o;
    struct plan *plan;
    struct launcher launcher;
    int have_hw;
};

static void fall_back_to_software(struct runner *rn, const char *why)
{
    if (!rn->have_hw)
        return;
    rn->have_hw = 0;
    fprintf(stderr, "smpbench: hardware counters unavailable (%s): "
            "showing software counters\n", why);
}

/* One run of benchmark i; counted runs are recorded.  A failure marks the
 * benchmark failed (it is not run again). */
static void run_bench(struct runner *rn, size_t i, int counted)
{
    struct bench *b = &rn->plan->report.benches[i];
    struct run_result res;
    launcher_run(&rn->launcher, i, rn->have_hw, &res);
    if (rn->have_hw && !res.hw)
        fall_back_to_software(rn, res.hw_why);
    if (!res.ok)
        bench_fail(b, "%s", res.why);
    else if (counted)
        bench_add_sample(b, res.values);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Should the counted rounds go on? */
static int want_more(const struct runner *rn, double elapsed)
{
    const struct report *r = &rn->plan->report;
    int active = 0, short_of_min = 0;
    for (size_t i = 0; i < r->nbench; i++) {
        const struct bench *b = &r->benches[i];
        if (b->failure)
            continue;
        if (b->nruns >= MAX_RUNS)
            return 0;
        active = 1;
        long goal = rn->o->exact_runs ? rn->o->exact_runs : rn->o->min_runs;
        if ((long)b->nruns < goal)
            short_of_min = 1;
    }
    if (!active)
        return 0;
    if (rn->o->exact_runs)
        return short_of_min;
    return short_of_min || elapsed < rn->o->time_budget;
}

/* One round: every benchmark still going once, starting at a different
 * one each round. */
static void run_round(struct runner *rn, size_t round, int counted)
{
    struct report *r = &rn->plan->report;
    for (size_t k = 0; k < r->nbench; k++) {
        size_t i = (round + k) % r->nbench;
        struct bench *b = &r->benches[i];
        if (b->failure)
            continue;
        if (counted && rn->o->exact_runs && (long)b->nruns >= rn->o->exact_runs)
            continue;
        run_bench(rn, i, counted);
    }
}

static void run_all(struct runner *rn)
{
    int progress = isatty(2);
    size_t round = 0;
    for (long w = 0; w < rn->o->warmup; w++)
        run_round(rn, round++, 0);
    double start = now_s(), elapsed = 0;
    while (want_more(rn, elapsed)) {
        run_round(rn, round++, 1);
        elapsed = now_s() - start;
        if (progress)
            fprintf(stderr, "\rsmpbench: %zu rounds, %.1fs", round, elapsed);
    }
    if (progress)
        fputs("\r\033[K", stderr);
}

/* ---- main ------------------------------------------------------------------ */

static int use_color(const struct options *o)
{
    if (o->color >= 0)
        return o->color;
    const char *no = getenv("NO_COLOR");
    return isatty(1) && !(no && *no);
}

static int finish(const struct options *o, struct report *r)
{
    for (size_t i = 0; i < r->nbench; i++)
        bench_summarize(&r->benches[i], r->have_hw);
    report_pick_baseline(r);
    table_print(stdout, r, use_color(o));
    fflush(stdout);

    int status = 0;
    for (size_t i = 0; i < r->nbench; i++)
        if (r->benches[i].failure)
            status = 1;
    if (o->csv && write_csv(o->csv, r) < 0)
        status = 1;
    if (o->json && write_json(o->json, r) < 0)
        status = 1;
    if (o->svg && write_svg(o->svg, r) < 0)
        status = 1;
    return status;
}

/* --list-allocs: label, tab, library. */
static int list_allocs(const struct options *o)
{
    struct alloc_list allocs;
    if (select_allocs(o, 0, &allocs))
        return 2;
    for (size_t i = 0; i < allocs.n; i++)
        printf("%s\t%s\n", allocs.v[i].name, allocs.v[i].path ? allocs.v[i].path : "");
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    int first = parse_options(argc, argv, &o);

    if (o.list_allocs)
        return list_allocs(&o);

    struct plan plan = { 0 };
    int problems = 0;
    if (o.from_csv)
        problems += read_csv(o.from_csv, &plan.report) < 0;
    else
        problems += plan_benchmarks(&plan, &o, argc, argv, first);
    problems += check_inputs(&o, &plan);
    if (problems)
        return 2;
    if (o.from_csv)
        return finish(&o, &plan.report);

    struct runner rn = { .o = &o, .plan = &plan, .have_hw = !o.sw_only };
    if (rn.have_hw) {
        /* Probe once so the fallback is announced before any run. */
        struct counters c;
        char why[256];
        if (counters_open(&c, why, sizeof why) < 0)
            fall_back_to_software(&rn, why);
        else
            counters_close(&c);
    }
    struct job *jobs = xmalloc(plan.report.nbench * sizeof *jobs);
    for (size_t i = 0; i < plan.report.nbench; i++)
        jobs[i] = (struct job){ plan.report.benches[i].argv, plan.envs[i] };
    if (launcher_start(&rn.launcher, jobs, plan.report.nbench, o.keep_output) < 0) {
        fprintf(stderr, "smpbench: cannot start the launcher process: %s\n",
                strerror(errno));
        return 2;
    }
    run_all(&rn);
    launcher_stop(&rn.launcher);
    plan.report.have_hw = rn.have_hw;
    return finish(&o, &plan.report);
}

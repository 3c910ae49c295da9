/*
 * smpbench - compare a program's run time, peak memory and counters under
 * several malloc implementations (or compare several commands), printing
 * the seed post's poop-style table.
 *
 *   smpbench [options] -- COMMAND [ARGS...]      each allocator
 *   smpbench [options] --cmds 'CMD 1' 'CMD 2'    each command (poop style)
 *
 * This file holds the options, the allocator discovery and the schedule:
 * runs are interleaved (A B C A B C ...) with the order rotated each round,
 * so slow drift of the machine (thermal, page cache, other load) is spread
 * over all benchmarks instead of favouring the one measured first.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "smpbench.h"
#include "smpbench_io.h"
#include "smpbench_run.h"
#include "smpbench_table.h"

extern char **environ;

#define MAX_RUNS 10000      /* per benchmark; bounds memory and the run */

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#define HOST_MACHINE EM_AARCH64
#else
#define MULTIARCH ""
#endif

/* Where peers are looked for, in order. */
static const char *const lib_dirs[] = {
    "/usr/lib/" MULTIARCH, "/lib/" MULTIARCH, "/usr/local/lib",
    "/usr/lib64", "/usr/lib",
};

/* The peers smpbench knows, by the soname their packages install. */
static const struct { const char *name, *soname; } peers[] = {
    { "jemalloc", "libjemalloc.so.2" },
    { "mimalloc", "libmimalloc.so.2" },
    { "tcmalloc", "libtcmalloc_minimal.so.4" },
};
#define NPEERS (sizeof peers / sizeof peers[0])

struct alloc {
    char *name;
    char *path;         /* NULL for glibc (no preload) */
    char *problem;      /* why it cannot be used, or NULL */
    int explicit;       /* given with --alloc: kept even with a problem */
};

struct options {
    double time_budget;     /* seconds for all counted runs together */
    long min_runs, exact_runs, warmup;
    int keep_output, sw_only, cmds_mode, color;   /* color: -1 auto */
    const char *allocs;     /* --allocs LIST, or NULL */
    const char *lib;        /* --lib PATH, or NULL */
    const char *json, *csv, *svg, *from_csv;
    struct alloc extra[32]; /* --alloc NAME=PATH */
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
    "\n"
    "Runs COMMAND many times under each malloc implementation - glibc (no\n"
    "preload), smpalloc (LD_PRELOAD of libsmpalloc.so) and each peer installed\n"
    "(jemalloc, mimalloc, tcmalloc_minimal, searched in /usr/lib/" MULTIARCH ",\n"
    "/lib/" MULTIARCH ", /usr/local/lib, /usr/lib64, /usr/lib) - or runs\n"
    "several commands against each other, and prints for each benchmark\n"
    "mean +- sigma, min ... max, Tukey outliers and the delta of the mean\n"
    "against benchmark 1 with its 95% interval (pooled-variance t test;\n"
    "flagged better/worse only when the whole interval is beyond 1%), then\n"
    "the ratios of the median wall time and peak RSS to benchmark 1.\n"
    "\n"
    "Commands given as strings are split into words like a shell would\n"
    "('...' and \"...\" quoting, backslash escapes) but run without one.\n"
    "\n"
    "Allocators:\n"
    "  --allocs LIST        compare these, in this order (comma-separated; names:\n"
    "                       glibc, smpalloc, jemalloc, mimalloc, tcmalloc and any\n"
    "                       --alloc NAME).  Default: glibc, smpalloc, every peer\n"
    "                       installed, then each --alloc.  With --cmds the default\n"
    "                       is to leave the environment alone; giving --allocs or\n"
    "                       --alloc runs every command under every allocator.\n"
    "  --alloc NAME=PATH    add an allocator: LD_PRELOAD=PATH (repeatable); a\n"
    "                       known NAME takes that one's place (another build)\n"
    "  --lib PATH           the smpalloc library (default: libsmpalloc.so in the\n"
    "                       directory of the smpbench binary)\n"
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
    "\n"
    "A command that cannot start, exits non-zero or is killed by a signal under\n"
    "one allocator is reported as failed in that benchmark's place and the\n"
    "others go on.\n"
    "\n"
    "Environment: NO_COLOR disables colour; SMPBENCH_FORCE_NO_HW=1 makes the\n"
    "hardware counters fail as if the kernel refused them (for testing).\n"
    "\n"
    "Exit status: 0 all benchmarks ran, 1 one or more failed, 2 usage error.\n";

static void usage_error(const char *fmt, const char *arg)
{
    if (fmt) {
        fputs("smpbench: ", stderr);
        fprintf(stderr, fmt, arg);
        fputc('\n', stderr);
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
    if (o->nextra == sizeof o->extra / sizeof o->extra[0])
        usage_error("too many --alloc options (at %s)", spec);
    struct alloc *a = &o->extra[o->nextra++];
    a->name = xstrdup(spec);
    a->name[eq - spec] = 0;
    a->path = xstrdup(eq + 1);
    a->problem = NULL;
    a->explicit = 1;
}

enum { OPT_ALLOCS = 256, OPT_ALLOC, OPT_LIB, OPT_MIN_RUNS, OPT_WARMUP,
       OPT_JSON, OPT_CSV, OPT_SVG, OPT_FROM_CSV, OPT_COLOR, OPT_SHOW,
       OPT_SW, OPT_CMDS };

static const struct option long_opts[] = {
    { "allocs", required_argument, 0, OPT_ALLOCS },
    { "alloc", required_argument, 0, OPT_ALLOC },
    { "lib", required_argument, 0, OPT_LIB },
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
    { 0, 0, 0, 0 },
};

/* Parse options; returns the index of the first command argument.  A
 * command after "--" selects allocator mode, bare strings command mode. */
static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){ .time_budget = 5, .min_runs = 3, .warmup = 1,
                           .color = -1 };
    int c;
    opterr = 1;
    /* '+': stop at the first non-option, so COMMAND's own options are
     * left alone. */
    while ((c = getopt_long(argc, argv, "+ht:n:", long_opts, NULL)) != -1) {
        switch (c) {
        case 'h':           fputs(usage_long, stdout); exit(0);
        case 't':           o->time_budget = parse_seconds(optarg); break;
        case 'n':           o->exact_runs = parse_count("--runs", optarg, 1); break;
        case OPT_MIN_RUNS:  o->min_runs = parse_count("--min-runs", optarg, 1); break;
        case OPT_WARMUP:    o->warmup = parse_count("--warmup", optarg, 0); break;
        case OPT_ALLOCS:    o->allocs = optarg; break;
        case OPT_ALLOC:     add_extra_alloc(o, optarg); break;
        case OPT_LIB:       o->lib = optarg; break;
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
        default:
            usage_error(NULL, NULL);
        }
    }
    int after_dashes = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
    if (!after_dashes && optind < argc)
        o->cmds_mode = 1;   /* poop style: each argument is a command */
    if (o->from_csv && optind < argc)
        usage_error("--from-csv runs nothing; drop the command '%s'", argv[optind]);
    if (!o->from_csv && optind >= argc)
        usage_error("no command given", NULL);
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

/* Does path exist and look like a shared library this machine can load?
 * ld.so only warns (on the command's stderr, usually /dev/null) and runs
 * the program without the preload otherwise, which would silently measure
 * glibc under another name. */
static char *check_library(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return xasprintf("%s: %s", path, strerror(errno));
    unsigned char hdr[sizeof(Elf64_Ehdr)];
    ssize_t n = read(fd, hdr, sizeof hdr);
    close(fd);
    if (n < (ssize_t)sizeof(Elf32_Ehdr) || memcmp(hdr, ELFMAG, SELFMAG) != 0)
        return xasprintf("%s: not an ELF shared library", path);
    int want_class = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
    uint16_t type, machine;
    memcpy(&type, hdr + offsetof(Elf64_Ehdr, e_type), sizeof type);
    memcpy(&machine, hdr + offsetof(Elf64_Ehdr, e_machine), sizeof machine);
    if (hdr[EI_CLASS] != want_class || type != ET_DYN)
        return xasprintf("%s: not a shared library for this machine", path);
#ifdef HOST_MACHINE
    if (machine != HOST_MACHINE)
        return xasprintf("%s: built for another architecture", path);
#endif
    return NULL;
}

/* Absolute path when it resolves (LD_PRELOAD must not depend on the
 * command changing directory), else the path as given. */
static char *absolute(const char *path)
{
    char *r = realpath(path, NULL);
    return r ? r : xstrdup(path);
}

static char *default_smpalloc_path(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return xstrdup("build/libsmpalloc.so");
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    return xasprintf("%s/libsmpalloc.so", exe);
}

static char *find_peer(const char *soname)
{
    for (size_t i = 0; i < sizeof lib_dirs / sizeof lib_dirs[0]; i++) {
        char *p = xasprintf("%s/%s", lib_dirs[i], soname);
        if (access(p, R_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

/* Every allocator smpbench knows of, found or not, in default order. */
static size_t known_allocs(const struct options *o, struct alloc *out)
{
    size_t n = 0;
    out[n++] = (struct alloc){ xstrdup("glibc"), NULL, NULL, 0 };

    char *lib = o->lib ? xstrdup(o->lib) : default_smpalloc_path();
    out[n] = (struct alloc){ xstrdup("smpalloc"), absolute(lib), NULL, 0 };
    out[n].problem = check_library(lib);
    free(lib);
    n++;

    for (size_t i = 0; i < NPEERS; i++) {
        char *p = find_peer(peers[i].soname);
        out[n].name = xstrdup(peers[i].name);
        out[n].path = p;
        out[n].explicit = 0;
        out[n].problem = p ? check_library(p) :
            xasprintf("%s not found in /usr/lib/%s, /lib/%s, /usr/local/lib, "
                      "/usr/lib64 or /usr/lib", peers[i].soname, MULTIARCH, MULTIARCH);
        n++;
    }
    /* --alloc NAME=PATH: a known NAME (say jemalloc from /opt) takes that
     * allocator's place; a new one goes at the end. */
    for (size_t i = 0; i < o->nextra; i++) {
        size_t k = 0;
        while (k < n && strcmp(out[k].name, o->extra[i].name) != 0)
            k++;
        out[k] = o->extra[i];
        out[k].problem = check_library(out[k].path);
        out[k].path = absolute(out[k].path);
        if (k == n)
            n++;
    }
    return n;
}

/* The allocators to compare.  Ones asked for by name that cannot be used
 * stay in the list (their benchmark reports the problem); in the default
 * list, missing peers are left out quietly and a missing smpalloc with a
 * note, since it is what the tool is for. */
static size_t select_allocs(const struct options *o, struct alloc *out)
{
    struct alloc known[8 + sizeof o->extra / sizeof o->extra[0]];
    size_t nknown = known_allocs(o, known), n = 0;

    if (!o->allocs) {
        for (size_t i = 0; i < nknown; i++) {
            if (known[i].problem && !known[i].explicit) {
                if (strcmp(known[i].name, "smpalloc") == 0)
                    fprintf(stderr, "smpbench: note: leaving out smpalloc: %s "
                            "(build it with 'make lib' or pass --lib PATH)\n",
                            known[i].problem);
                continue;
            }
            out[n++] = known[i];
        }
        return n;
    }
    char *list = xstrdup(o->allocs), *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < nknown && strcmp(known[i].name, name) != 0)
            i++;
        if (i == nknown) {
            fprintf(stderr, "smpbench: unknown allocator '%s'; known:", name);
            for (size_t k = 0; k < nknown; k++)
                fprintf(stderr, " %s", known[k].name);
            fputs(" (add one with --alloc NAME=PATH)\n", stderr);
            exit(2);
        }
        out[n++] = known[i];
    }
    free(list);
    return n;
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
                         const struct alloc *allocs, size_t nallocs,
                         int name_with_cmd)
{
    if (nallocs == 0) {     /* --cmds without allocators: as it is */
        struct bench *b = new_bench(p, environ);
        b->argv = argv;
        b->cmdline = cmdline;
        if (!argv)
            bench_fail(b, "unbalanced quotes in the command");
        return;
    }
    for (size_t i = 0; i < nallocs; i++) {
        const struct alloc *a = &allocs[i];
        struct bench *b = new_bench(p, make_env(a->path));
        b->alloc = a->name;
        b->preload = a->path;
        b->argv = argv;
        b->cmdline = cmdline;
        if (name_with_cmd)
            b->name = xasprintf("[%s] %s", a->name, cmdline);
        if (!argv)
            bench_fail(b, "unbalanced quotes in the command");
        else if (a->problem)
            bench_fail(b, "cannot preload %s", a->problem);
    }
}

static void plan_benchmarks(struct plan *p, const struct options *o,
                            int argc, char **argv, int first)
{
    struct alloc allocs[8 + sizeof o->extra / sizeof o->extra[0]];
    size_t nallocs = 0;
    if (!o->cmds_mode || o->allocs || o->nextra) {
        if (o->cmds_mode && !o->allocs) {       /* only the --alloc ones */
            size_t nknown = known_allocs(o, allocs);
            for (size_t i = 0; i < nknown; i++)
                if (allocs[i].explicit)
                    allocs[nallocs++] = allocs[i];
        } else {
            nallocs = select_allocs(o, allocs);
        }
    }
    if (!o->cmds_mode) {
        plan_command(p, argv + first, join_argv(argv + first), allocs,
                     nallocs, 0);
        return;
    }
    int several = argc - first > 1;
    for (int i = first; i < argc; i++)
        plan_command(p, split_words(argv[i]), argv[i], allocs, nallocs,
                     several && nallocs > 0);
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

int main(int argc, char **argv)
{
    struct options o;
    int first = parse_options(argc, argv, &o);

    if (o.from_csv) {
        struct report r;
        if (read_csv(o.from_csv, &r) < 0)
            return 2;
        return finish(&o, &r);
    }

    struct plan plan = { 0 };
    plan_benchmarks(&plan, &o, argc, argv, first);

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

/*
 * smpbench_run.c - one run of a command: fork/exec/wait4 timed with
 * CLOCK_MONOTONIC, rusage from wait4, hardware counters via perf_event_open.
 */
#include "smpbench_run.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const uint64_t hw_config[NHW] = {
    PERF_COUNT_HW_CPU_CYCLES,
    PERF_COUNT_HW_INSTRUCTIONS,
    PERF_COUNT_HW_CACHE_REFERENCES,
    PERF_COUNT_HW_CACHE_MISSES,
    PERF_COUNT_HW_BRANCH_MISSES,
};

/* Software events standing in for the hardware ones when the environment
 * sets SMPBENCH_TEST_PERF_SW (1: as usual, "separate": skip the group
 * read): they exercise the same group, inherit, enable-on-exec and read
 * paths on machines without a PMU, so tests/tools/t_smpbench_perf.sh can check
 * that plumbing.  The values land under the hardware names. */
static const uint64_t sw_standin[NHW] = {
    PERF_COUNT_SW_TASK_CLOCK,
    PERF_COUNT_SW_PAGE_FAULTS,
    PERF_COUNT_SW_CONTEXT_SWITCHES,
    PERF_COUNT_SW_PAGE_FAULTS_MIN,
    PERF_COUNT_SW_PAGE_FAULTS_MAJ,
};

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static int perf_open(struct perf_event_attr *attr, int group_fd)
{
    return (int)syscall(SYS_perf_event_open, attr, 0 /* this process */,
                        -1 /* any cpu */, group_fd, PERF_FLAG_FD_CLOEXEC);
}

void counters_close(struct counters *c)
{
    for (int i = 0; i < NHW; i++) {
        if (c->fd[i] >= 0)
            close(c->fd[i]);
        c->fd[i] = -1;
    }
}

/* Open the group, reading it as a whole (PERF_FORMAT_GROUP) when
 * group_read; 0 or -errno. */
static int open_group(struct counters *c, int group_read, int *failed_at)
{
    for (int i = 0; i < NHW; i++)
        c->fd[i] = -1;
    c->group_read = group_read;
    for (int i = 0; i < NHW; i++) {
        struct perf_event_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.size = sizeof attr;
        if (env_flag("SMPBENCH_TEST_PERF_SW")) {
            attr.type = PERF_TYPE_SOFTWARE;
            attr.config = sw_standin[i];
        } else {
            attr.type = PERF_TYPE_HARDWARE;
            attr.config = hw_config[i];
        }
        /* Disabled here, enabled in the child at exec: smpbench's own
         * work and the fork are not counted.  inherit carries the counters
         * into the child and its threads; their counts are folded back into
         * these fds when they exit.  User space only: the default
         * perf_event_paranoid (2) allows nothing else. */
        attr.disabled = 1;
        attr.enable_on_exec = 1;
        attr.inherit = 1;
        attr.exclude_kernel = 1;
        attr.exclude_hv = 1;
        attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
                           PERF_FORMAT_TOTAL_TIME_RUNNING;
        if (i == 0 && group_read)
            attr.read_format |= PERF_FORMAT_GROUP;
        c->fd[i] = perf_open(&attr, i == 0 ? -1 : c->fd[0]);
        if (c->fd[i] < 0) {
            int e = errno;
            *failed_at = i;
            counters_close(c);
            return -e;
        }
    }
    return 0;
}

int counters_open(struct counters *c, char *why, size_t whysize)
{
    if (env_flag("SMPBENCH_FORCE_NO_HW")) {
        for (int i = 0; i < NHW; i++)
            c->fd[i] = -1;
        snprintf(why, whysize, "refused by SMPBENCH_FORCE_NO_HW");
        return -1;
    }
    int at = 0;
    const char *test = getenv("SMPBENCH_TEST_PERF_SW");
    int err = test && strcmp(test, "separate") == 0 ? -EINVAL
                                                    : open_group(c, 1, &at);
    /* Older kernels refuse PERF_FORMAT_GROUP together with inherit
     * (EINVAL); each counter of the group can still be read on its own. */
    if (err == -EINVAL)
        err = open_group(c, 0, &at);
    if (err) {
        snprintf(why, whysize, "perf_event_open %s: %s",
                 meas_info[M_FIRST_HW + at].name, strerror(-err));
        return -1;
    }
    return 0;
}

/* Scale a count for the time its group was not on the PMU (multiplexing
 * when more counters are wanted than the CPU has). */
static double scaled(uint64_t value, uint64_t enabled, uint64_t running)
{
    if (running == 0)
        return 0;
    if (running >= enabled)
        return (double)value;
    return (double)value * ((double)enabled / (double)running);
}

int counters_read(struct counters *c, double values[M_COUNT],
                  char *why, size_t whysize)
{
    if (c->group_read) {
        /* nr, time_enabled, time_running, value[nr] */
        uint64_t buf[3 + NHW];
        ssize_t n = read(c->fd[0], buf, sizeof buf);
        if (n != (ssize_t)sizeof buf || buf[0] != NHW) {
            snprintf(why, whysize, "reading perf group: %s",
                     n < 0 ? strerror(errno) : "short read");
            return -1;
        }
        for (int i = 0; i < NHW; i++)
            values[M_FIRST_HW + i] = scaled(buf[3 + i], buf[1], buf[2]);
        return 0;
    }
    for (int i = 0; i < NHW; i++) {
        uint64_t buf[3];    /* value, time_enabled, time_running */
        ssize_t n = read(c->fd[i], buf, sizeof buf);
        if (n != (ssize_t)sizeof buf) {
            snprintf(why, whysize, "reading perf counter %s: %s",
                     meas_info[M_FIRST_HW + i].name,
                     n < 0 ? strerror(errno) : "short read");
            return -1;
        }
        values[M_FIRST_HW + i] = scaled(buf[0], buf[1], buf[2]);
    }
    return 0;
}

static double ns_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e9 +
           (double)(b->tv_nsec - a->tv_nsec);
}

static double tv_ns(const struct timeval *tv)
{
    return (double)tv->tv_sec * 1e9 + (double)tv->tv_usec * 1e3;
}

/* In the child: set up the standard fds, exec, and on failure send errno
 * back through the close-on-exec pipe (which closes unseen on success). */
static void child_exec(char *const argv[], char *const envp[],
                       int keep_output, int devnull, int errpipe)
{
    dup2(devnull, 0);
    if (!keep_output) {
        dup2(devnull, 1);
        dup2(devnull, 2);
    }
    execvpe(argv[0], argv, envp);
    int e = errno;
    ssize_t unused = write(errpipe, &e, sizeof e);
    (void)unused;
    _exit(127);
}

static void describe_status(int status, char *why, size_t whysize)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        snprintf(why, whysize, "killed by signal %d (%s)", sig, strsignal(sig));
    } else {
        snprintf(why, whysize, "exit status %d", WEXITSTATUS(status));
    }
}

int run_once(char *const argv[], char *const envp[], int keep_output,
             double values[M_COUNT], char *why, size_t whysize)
{
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    int errpipe[2];
    if (devnull < 0 || pipe2(errpipe, O_CLOEXEC) < 0) {
        snprintf(why, whysize, "cannot set up the run: %s", strerror(errno));
        if (devnull >= 0)
            close(devnull);
        return -1;
    }

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = fork();
    if (pid == 0)
        child_exec(argv, envp, keep_output, devnull, errpipe[1]);
    int fork_errno = errno;
    close(errpipe[1]);
    close(devnull);
    if (pid < 0) {
        close(errpipe[0]);
        snprintf(why, whysize, "fork: %s", strerror(fork_errno));
        return -1;
    }

    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    clock_gettime(CLOCK_MONOTONIC, &end);

    int exec_errno;
    ssize_t n = read(errpipe[0], &exec_errno, sizeof exec_errno);
    close(errpipe[0]);
    if (n == (ssize_t)sizeof exec_errno) {
        snprintf(why, whysize, "cannot run '%s': %s", argv[0],
                 strerror(exec_errno));
        return -1;
    }

    values[M_WALL] = ns_between(&start, &end);
    values[M_RSS] = (double)ru.ru_maxrss * 1024;    /* Linux: kilobytes */
    values[M_USER] = tv_ns(&ru.ru_utime);
    values[M_SYS] = tv_ns(&ru.ru_stime);
    values[M_CPU] = values[M_USER] + values[M_SYS];
    values[M_FAULTS] = (double)(ru.ru_minflt + ru.ru_majflt);
    values[M_CTXSW] = (double)(ru.ru_nvcsw + ru.ru_nivcsw);

    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        describe_status(status, why, whysize);
        return -1;
    }
    return 0;
}

/* ---- the launcher ----------------------------------------------------- */

struct request {
    size_t job;
    int want_hw;
};

static int read_full(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* One run inside the launcher, counters and all. */
static void launch(const struct job *job, int keep_output, int want_hw,
                   struct run_result *res)
{
    struct counters c;
    memset(res, 0, sizeof *res);
    if (want_hw)
        res->hw = counters_open(&c, res->hw_why, sizeof res->hw_why) == 0;
    res->ok = run_once(job->argv, job->envp, keep_output, res->values,
                       res->why, sizeof res->why) == 0;
    if (res->hw) {
        if (res->ok && counters_read(&c, res->values, res->hw_why,
                                     sizeof res->hw_why) < 0)
            res->hw = 0;
        counters_close(&c);
    }
}

static void launcher_main(int in, int out, const struct job *jobs,
                          size_t njobs, int keep_output)
{
    struct request req;
    struct run_result res;
    while (read_full(in, &req, sizeof req) == 0) {
        if (req.job >= njobs)
            _exit(2);
        launch(&jobs[req.job], keep_output, req.want_hw, &res);
        if (write_full(out, &res, sizeof res) < 0)
            _exit(2);
    }
    _exit(0);   /* smpbench closed the pipe: done */
}

int launcher_start(struct launcher *l, const struct job *jobs, size_t njobs,
                   int keep_output)
{
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(from, O_CLOEXEC) < 0) {
        close(to[0]);
        close(to[1]);
        return -1;
    }
    fflush(NULL);   /* nothing buffered may be written twice */
    l->pid = fork();
    if (l->pid == 0) {
        close(to[1]);
        close(from[0]);
        launcher_main(to[0], from[1], jobs, njobs, keep_output);
    }
    close(to[0]);
    close(from[1]);
    if (l->pid < 0) {
        close(to[1]);
        close(from[0]);
        return -1;
    }
    l->to = to[1];
    l->from = from[0];
    return 0;
}

void launcher_run(struct launcher *l, size_t i, int want_hw,
                  struct run_result *out)
{
    struct request req = { i, want_hw };
    if (write_full(l->to, &req, sizeof req) < 0 ||
        read_full(l->from, out, sizeof *out) < 0) {
        memset(out, 0, sizeof *out);
        snprintf(out->why, sizeof out->why, "the launcher process died");
    }
}

void launcher_stop(struct launcher *l)
{
    close(l->to);
    close(l->from);
    int status;
    while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
        ;
}

/*
 * smpbench_run.h - running a command once and measuring it.
 */
#ifndef SMPBENCH_RUN_H
#define SMPBENCH_RUN_H

#include <stddef.h>
#include <sys/types.h>

#include "smpbench.h"

#define NHW (M_COUNT - M_FIRST_HW)

/* The hardware counters of one run: one perf group, opened on smpbench
 * itself but disabled, inherited by the forked child and enabled when it
 * execs (so fork and smpbench's own work are not counted). */
struct counters {
    int fd[NHW];
    int group_read;     /* read the whole group from the leader at once */
};

/* Open the group; 0, or -1 with the kernel's reason in why.  Setting the
 * environment variable SMPBENCH_FORCE_NO_HW=1 makes it fail as a kernel
 * refusal would, so the fallback can be tested on any machine. */
int counters_open(struct counters *c, char *why, size_t whysize);
/* Read the values into values[M_FIRST_HW..]; 0, or -1 with why. */
int counters_read(struct counters *c, double values[M_COUNT],
                  char *why, size_t whysize);
void counters_close(struct counters *c);

/*
 * Run argv once with environment envp, stdin from /dev/null, stdout and
 * stderr to /dev/null unless keep_output.  Counters opened before the call
 * count the child (see struct counters).  Fills values[M_WALL..M_CTXSW]
 * from the clock and wait4's rusage and returns 0 when the
 * command exited with status 0; otherwise -1 with a description in why
 * ("exit status 1", "killed by signal 11 (Segmentation fault)", "cannot
 * run 'x': No such file or directory").
 */
int run_once(char *const argv[], char *const envp[], int keep_output,
             double values[M_COUNT],
             char *why, size_t whysize);

/*
 * The launcher: a small process forked before any sample is stored, which
 * does the fork/exec/wait4 of every run on smpbench's behalf.
 *
 * Why: a forked child's ru_maxrss starts at the RSS it inherits (the
 * kernel folds the pre-exec hiwater into it), so forking from smpbench
 * itself would add its growing sample arrays to the peak_rss of small
 * commands, more in later runs than in earlier ones.  The launcher's
 * memory stays the same from its first run to its last.
 */
struct job {
    char *const *argv;
    char *const *envp;
};

struct launcher {
    pid_t pid;
    int to, from;       /* pipes to and from the launcher */
};

/* What one run produced. */
struct run_result {
    int ok;             /* exited with status 0 */
    int hw;             /* hardware counters were read into values */
    double values[M_COUNT];
    char why[512];      /* when !ok: what went wrong */
    char hw_why[256];   /* when hardware counters were wanted but not read */
};

/* Fork the launcher for these jobs (the array must stay valid). */
int launcher_start(struct launcher *l, const struct job *jobs, size_t njobs,
                   int keep_output);
/* Run job i once, counting with hardware counters when want_hw. */
void launcher_run(struct launcher *l, size_t i, int want_hw,
                  struct run_result *out);
void launcher_stop(struct launcher *l);

#endif

/*
 * smpbench_input.c - see smpbench_input.h.  smpbench runs for seconds or
 * minutes; a typo in a program name or an output path must stop it before
 * the first run, not be found in the last step.
 */
#include "smpbench_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smpbench.h"

/* Levenshtein distance, two rows of at most 64 + 1 entries (longer words
 * are never near anything). */
static size_t edit_distance(const char *a, size_t na, const char *b)
{
    size_t nb = strlen(b), prev[65], cur[65];
    if (na > 64 || nb > 64)
        return (size_t)-1;
    for (size_t j = 0; j <= nb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (nb + 1) * sizeof *prev);
    }
    return prev[nb];
}

const char *nearest_word(const char *word, size_t len,
                         const char *const *cands, size_t ncands)
{
    const char *best = NULL;
    size_t best_d = 3;
    for (size_t i = 0; i < ncands; i++) {
        size_t d = edit_distance(word, len, cands[i]);
        if (d < best_d && d < len) {
            best_d = d;
            best = cands[i];
        }
    }
    return best;
}

/* A path given with a slash: exists, not a directory, executable. */
static char *file_problem(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return xstrdup(strerror(errno));
    if (S_ISDIR(st.st_mode))
        return xstrdup("is a directory");
    if (access(path, X_OK) < 0)
        return xstrdup(strerror(errno));
    return NULL;
}

char *command_problem(const char *prog)
{
    if (!*prog)
        return xstrdup("an empty command");
    if (strchr(prog, '/'))
        return file_problem(prog);
    /* execvpe's search: PATH, or /bin:/usr/bin when it is unset; an empty
     * entry is the current directory. */
    const char *path = getenv("PATH");
    char *dirs = xstrdup(path ? path : "/bin:/usr/bin");
    char *problem = NULL, *d = dirs;
    int found = 0;
    for (;;) {
        char *colon = strchr(d, ':');
        if (colon)
            *colon = 0;
        char *cand = xasprintf("%s/%s", *d ? d : ".", prog);
        char *why = file_problem(cand);
        if (!why)
            found = 1;
        else if (!problem && access(cand, F_OK) == 0)
            problem = xasprintf("%s: %s", cand, why);
        free(why);
        free(cand);
        if (found || !colon)
            break;
        d = colon + 1;
    }
    free(dirs);
    if (found) {
        free(problem);
        return NULL;
    }
    return problem ? problem : xstrdup("not found in PATH");
}

char *output_problem(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return xstrdup("is a directory");
        int fd = open(path, O_WRONLY | O_CLOEXEC);  /* no O_TRUNC: a check */
        if (fd < 0)
            return xstrdup(strerror(errno));
        close(fd);
        return NULL;
    }
    if (errno != ENOENT)
        return xstrdup(strerror(errno));
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return xstrdup(strerror(errno));
    close(fd);
    unlink(path);
    return NULL;
}

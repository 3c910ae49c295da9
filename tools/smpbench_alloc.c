/*
 * smpbench_alloc.c - finding the allocators to compare.
 *
 *   glibc      no preload
 *   smpalloc   --lib, else libsmpalloc.so next to a build tree's smpbench,
 *              else (an installed smpbench, built with SMPBENCH_LIBDIR)
 *              LIBDIR/libsmpalloc.so.0
 *   Debian's   libjemalloc.so.2, libmimalloc.so.2, libtcmalloc_minimal.so.4
 *              in the system library directories, labelled NAME-VERSION
 *              from the package that owns the file (dpkg-query), else
 *              "NAME (Debian)"
 *   folders    every libNAME-VERSION.so in the peer folders: --peer-dir,
 *              else ../shared/peers next to the checkout of a build tree's
 *              smpbench (BUILD/smpbench -> BUILD/../../shared/peers),
 *              labelled NAME-VERSION
 *
 * The peers are sorted by label in version order, so the builds of one
 * allocator stand together (mimalloc-2.0.9, mimalloc-2.4.1, mimalloc-3.4.3).
 */
#include "smpbench_alloc.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "smpbench.h"

extern char **environ;

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#define HOST_MACHINE EM_AARCH64
#else
#define MULTIARCH ""
#endif

/* Where Debian's peers are looked for, in order (SMPBENCH_LIB_DIRS, a
 * colon-separated list, replaces these: for tests, or other layouts). */
static const char *const std_lib_dirs[] = {
    "/usr/lib/" MULTIARCH, "/lib/" MULTIARCH, "/usr/local/lib",
    "/usr/lib64", "/usr/lib",
};

/* The peers Debian packages, by the soname their packages install. */
static const struct { const char *family, *soname; } debian_peers[] = {
    { "jemalloc", "libjemalloc.so.2" },
    { "mimalloc", "libmimalloc.so.2" },
    { "tcmalloc", "libtcmalloc_minimal.so.4" },
};
#define NDEBIAN (sizeof debian_peers / sizeof debian_peers[0])

void allocs_push(struct alloc_list *l, struct alloc a)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = a;
}

/* Does path exist and look like a shared library this machine can load?
 * ld.so only warns (on the command's stderr, usually /dev/null) and runs
 * the program without the preload otherwise, which would silently measure
 * glibc under another name. */
char *check_library(const char *path)
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

/* An absolute path as it is, a relative one resolved when it can be
 * (LD_PRELOAD must not depend on the command changing directory). */
static char *absolute(const char *path)
{
    if (path[0] == '/')
        return xstrdup(path);
    char *r = realpath(path, NULL);
    return r ? r : xstrdup(path);
}

#ifndef SMPBENCH_LIBDIR
/* The directory of the smpbench binary, or NULL. */
static char *exe_dir(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    return xstrdup(exe);
}
#endif

static char *default_smpalloc_path(void)
{
#ifdef SMPBENCH_LIBDIR
    return xstrdup(SMPBENCH_LIBDIR "/libsmpalloc.so.0");
#else
    char *dir = exe_dir();
    char *p = dir ? xasprintf("%s/libsmpalloc.so", dir)
                  : xstrdup("build/libsmpalloc.so");
    free(dir);
    return p;
#endif
}

/* ../shared/peers next to the checkout whose build tree holds this
 * smpbench; NULL for an installed one. */
static char *default_peer_dir(void)
{
#ifdef SMPBENCH_LIBDIR
    return NULL;
#else
    char *dir = exe_dir();
    if (!dir)
        return NULL;
    char *up = xasprintf("%s/../..", dir);
    char *root = absolute(up);
    char *p = xasprintf("%s%sshared/peers", root, strcmp(root, "/") ? "/" : "");
    free(dir);
    free(up);
    free(root);
    return p;
#endif
}

/* The directories searched for Debian's peers. */
static size_t system_lib_dirs(char ***out)
{
    const char *env = getenv("SMPBENCH_LIB_DIRS");
    size_t n = 0;
    if (!env) {
        *out = xmalloc(sizeof std_lib_dirs);
        for (; n < sizeof std_lib_dirs / sizeof std_lib_dirs[0]; n++)
            (*out)[n] = xstrdup(std_lib_dirs[n]);
        return n;
    }
    *out = xmalloc((strlen(env) + 1) * sizeof **out);
    char *copy = xstrdup(env), *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
        (*out)[n++] = xstrdup(d);
    free(copy);
    return n;
}

/* Run argv (found in PATH), stdin and stderr /dev/null, and return what it
 * wrote on stdout; NULL when it cannot run or exits non-zero. */
static char *capture(char *const argv[])
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (err) {
        close(fds[0]);
        return NULL;
    }
    size_t len = 0, cap = 256;
    char *buf = xmalloc(cap);
    ssize_t r;
    while ((r = read(fds[0], buf + len, cap - len - 1)) > 0 ||
           (r < 0 && errno == EINTR)) {
        if (r < 0)
            continue;
        len += (size_t)r;
        if (len + 1 == cap)
            buf = xrealloc(buf, cap *= 2);
    }
    close(fds[0]);
    buf[len] = 0;
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The upstream part of a Debian version: "1:2.0.9+ds-2" -> "2.0.9". */
static void upstream_version(char *v)
{
    char *colon = strchr(v, ':');
    if (colon)
        memmove(v, colon + 1, strlen(colon + 1) + 1);
    char *dash = strrchr(v, '-');
    if (dash)
        *dash = 0;
    v[strcspn(v, "+~ \t\n")] = 0;
}

/* The upstream version of the Debian package that owns path, or NULL.  The
 * path is tried as found, resolved, and with the other spelling of a
 * merged /usr (packages may list /lib/... or /usr/lib/...). */
static char *debian_version(const char *path)
{
    char *cand[4];
    size_t n = 0;
    cand[n++] = xstrdup(path);
    char *real = realpath(path, NULL);
    if (real && strcmp(real, path) != 0)
        cand[n++] = real;
    else
        free(real);
    for (size_t i = 0, m = n; i < m; i++) {
        if (strncmp(cand[i], "/usr/lib/", 9) == 0)
            cand[n++] = xstrdup(cand[i] + 4);
        else if (strncmp(cand[i], "/lib/", 5) == 0)
            cand[n++] = xasprintf("/usr%s", cand[i]);
    }
    char *version = NULL;
    for (size_t i = 0; i < n && !version; i++) {
        char *query[] = { "dpkg-query", "-S", cand[i], NULL };
        char *owner = capture(query);
        if (!owner)
            continue;
        /* "libmimalloc2.0:amd64: /usr/lib/x86_64-linux-gnu/libmimalloc.so.2",
         * perhaps after "diversion by ..." lines */
        char *line = owner;
        while (strncmp(line, "diversion ", 10) == 0 && strchr(line, '\n'))
            line = strchr(line, '\n') + 1;
        char *end = strstr(line, ": ");
        if (end)
            *end = 0;
        if (end && !strpbrk(line, " ,")) {
            char *show[] = { "dpkg-query", "-W", "-f=${Version}", line, NULL };
            version = capture(show);
            if (version) {
                upstream_version(version);
                if (!*version) {
                    free(version);
                    version = NULL;
                }
            }
        }
        free(owner);
    }
    for (size_t i = 0; i < n; i++)
        free(cand[i]);
    return version;
}

/* "mimalloc-2.4.1" -> "mimalloc", "mimalloc (Debian)" -> "mimalloc": the
 * label up to a '-' before a digit, or a space. */
static char *family_of(const char *label)
{
    size_t k = 0;
    while (label[k] && label[k] != ' ' &&
           !(label[k] == '-' && label[k + 1] >= '0' && label[k + 1] <= '9'))
        k++;
    char *f = xstrdup(label);
    f[k ? k : strlen(f)] = 0;
    return f;
}

static int has_name(const struct alloc_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return 1;
    return 0;
}

/* Every libNAME.so in dir, labelled NAME. */
static void add_folder_peers(struct alloc_list *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 6 || strncmp(e->d_name, "lib", 3) != 0 ||
            strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        char *label = xstrdup(e->d_name + 3);
        label[len - 6] = 0;
        if (has_name(l, label)) {       /* the same name in two folders */
            free(label);
            free(path);
            continue;
        }
        allocs_push(l, (struct alloc){ label, family_of(label), absolute(path),
                                       check_library(path), 0 });
        free(path);
    }
    closedir(d);
}

static void add_debian_peers(struct alloc_list *l)
{
    char **dirs;
    size_t ndirs = system_lib_dirs(&dirs);
    for (size_t i = 0; i < NDEBIAN; i++) {
        char *path = NULL;
        for (size_t k = 0; k < ndirs && !path; k++) {
            char *p = xasprintf("%s/%s", dirs[k], debian_peers[i].soname);
            if (access(p, R_OK) == 0)
                path = p;
            else
                free(p);
        }
        struct alloc a = { 0 };
        a.family = xstrdup(debian_peers[i].family);
        if (!path) {
            char *where = xstrdup("");
            for (size_t k = 0; k < ndirs; k++) {
                char *w = xasprintf("%s%s%s", where,
                                    k == 0 ? "" : k + 1 == ndirs ? " or " : ", ",
                                    dirs[k]);
                free(where);
                where = w;
            }
            a.name = xstrdup(a.family);
            a.problem = xasprintf("%s not found in %s", debian_peers[i].soname, where);
            free(where);
            allocs_push(l, a);
            continue;
        }
        char *version = debian_version(path);
        a.name = version ? xasprintf("%s-%s", a.family, version)
                         : xasprintf("%s (Debian)", a.family);
        if (has_name(l, a.name)) {      /* a folder build of the same version */
            char *n = xasprintf("%s (Debian)", a.name);
            free(a.name);
            a.name = n;
        }
        free(version);
        a.path = path[0] == '/' ? path : absolute(path);
        a.problem = check_library(path);
        if (a.path != path)
            free(path);
        allocs_push(l, a);
    }
    for (size_t k = 0; k < ndirs; k++)
        free(dirs[k]);
    free(dirs);
}

static int by_label(const void *a, const void *b)
{
    return strverscmp(((const struct alloc *)a)->name,
                      ((const struct alloc *)b)->name);
}

void allocs_discover(const struct alloc_config *c, struct alloc_list *out)
{
    memset(out, 0, sizeof *out);
    allocs_push(out, (struct alloc){ xstrdup("glibc"), xstrdup("glibc"),
                                     NULL, NULL, 0 });
    char *lib = c->lib ? xstrdup(c->lib) : default_smpalloc_path();
    allocs_push(out, (struct alloc){ xstrdup("smpalloc"), xstrdup("smpalloc"),
                                     absolute(lib), check_library(lib), 0 });
    free(lib);

    size_t first_peer = out->n;
    if (c->peer_dirs_given) {
        for (size_t i = 0; i < c->npeer_dirs; i++)
            if (*c->peer_dirs[i])
                add_folder_peers(out, c->peer_dirs[i]);
    } else {
        char *dir = default_peer_dir();
        if (dir)
            add_folder_peers(out, dir);
        free(dir);
    }
    add_debian_peers(out);
    qsort(out->v + first_peer, out->n - first_peer, sizeof *out->v, by_label);
}

void allocs_add_explicit(struct alloc_list *l, const char *name,
                         const char *path)
{
    struct alloc a = { xstrdup(name), family_of(name), absolute(path),
                       check_library(path), 1 };
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0) {
            l->v[i] = a;
            return;
        }
    allocs_push(l, a);
}

char *allocs_describe_search(const struct alloc_config *c)
{
    char *lib = c->lib ? xstrdup(c->lib) : default_smpalloc_path();
    char **dirs;
    size_t ndirs = system_lib_dirs(&dirs);
    char *sys = xstrdup("");
    for (size_t k = 0; k < ndirs; k++) {
        char *s = xasprintf("%s%s%s", sys, k ? ", " : "", dirs[k]);
        free(sys);
        free(dirs[k]);
        sys = s;
    }
    free(dirs);
    char *folders = xstrdup("");
    if (c->peer_dirs_given) {
        for (size_t i = 0; i < c->npeer_dirs; i++) {
            if (!*c->peer_dirs[i])
                continue;
            char *s = xasprintf("%s%s%s", folders, *folders ? ", " : "",
                                c->peer_dirs[i]);
            free(folders);
            folders = s;
        }
    } else {
        char *dir = default_peer_dir();
        if (dir) {
            free(folders);
            folders = dir;
        }
    }
    char *text = xasprintf("  smpalloc: %s\n"
                           "  Debian's peers: searched in %s\n"
                           "  peer builds: %s%s\n",
                           lib, sys, *folders ? folders : "no folder",
                           *folders ? "/lib*.so" : "");
    free(lib);
    free(sys);
    free(folders);
    return text;
}

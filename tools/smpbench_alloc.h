/*
 * smpbench_alloc.h - which malloc implementations smpbench compares: glibc
 * (no preload), smpalloc, the peers Debian installs (labelled with their
 * package version), the peer builds in a folder (../shared/peers next to a
 * checkout: libNAME-VERSION.so), and the --alloc NAME=PATH ones.
 */
#ifndef SMPBENCH_ALLOC_H
#define SMPBENCH_ALLOC_H

#include <stddef.h>

struct alloc {
    char *name;         /* label: glibc, smpalloc, mimalloc-2.4.1, ... */
    char *family;       /* the name without its version: mimalloc */
    char *path;         /* the library to preload; NULL for glibc */
    char *problem;      /* why it cannot be used, or NULL */
    int explicit;       /* given with --alloc */
};

struct alloc_list {
    struct alloc *v;
    size_t n, cap;
};

/* Where to look.  lib: --lib or NULL (the default: libsmpalloc.so next to
 * a build tree's smpbench, LIBDIR/libsmpalloc.so.0 for an installed one);
 * peer_dirs: the --peer-dir folders, or NULL for the default. */
struct alloc_config {
    const char *lib;
    char **peer_dirs;
    size_t npeer_dirs;
    int peer_dirs_given;
};

/* Every allocator smpbench knows of, in default order: glibc, smpalloc,
 * then the peers sorted by name (version order), found or not (a Debian
 * peer that is not installed is listed by its family name, with a
 * problem). */
void allocs_discover(const struct alloc_config *c, struct alloc_list *out);

/* Add --alloc NAME=PATH: a NAME already known takes that one's place,
 * another goes at the end.  The library is checked (problem set). */
void allocs_add_explicit(struct alloc_list *l, const char *name,
                         const char *path);

void allocs_push(struct alloc_list *l, struct alloc a);

/* NULL when path is a shared library this machine can preload, else why
 * not ("PATH: No such file or directory"). */
char *check_library(const char *path);

/* What --help shows: the default smpalloc library, the directories
 * searched for Debian's peers and the peer folders, as text. */
char *allocs_describe_search(const struct alloc_config *c);

#endif

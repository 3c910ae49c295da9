/*
 * smpbench_input.h - checking smpbench's inputs before the first run (the
 * programs, the output files) and finding the word meant by a mistyped
 * option or allocator name.
 */
#ifndef SMPBENCH_INPUT_H
#define SMPBENCH_INPUT_H

#include <stddef.h>

/* The candidate nearest to word[0..len) - at most 2 insertions, deletions
 * or substitutions away, and fewer than len - or NULL. */
const char *nearest_word(const char *word, size_t len,
                         const char *const *cands, size_t ncands);

/* NULL when prog can be started the way execvpe will start it (a path
 * with a slash as it is, a name through PATH), else why not ("not found in
 * PATH", "Permission denied", ...). */
char *command_problem(const char *prog);

/* NULL when path can be written (it is created and removed again when it
 * did not exist), else why not. */
char *output_problem(const char *path);

#endif

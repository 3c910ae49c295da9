/*
 * large_runs: where blocks above the slab classes (32 KiB) come from, as
 * smpalloc(3) and the README say, seen through smp_stats_get's
 * bytes_mapped less bytes_metadata (the smp_* names: always smpalloc):
 *
 *   - up to 1 MiB a block is a run of 64 KiB granules carved from 4 MiB
 *     chunks: 20 blocks of 192 KiB, then one of exactly 1 MiB, make the
 *     mapped bytes grow by whole chunks (a multiple of 4 MiB), not by the
 *     blocks' sizes;
 *   - beyond 1 MiB each block is mapped alone, its length rounded up to
 *     64 KiB: 3 blocks of 2 MiB + 64 KiB add exactly 3 x that, one of
 *     1 MiB + 1 byte adds 1 MiB + 64 KiB.
 *
 * Prints the four growths; exits 1 when one is not as said.
 */
#include <stdio.h>

#include "smpalloc.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static size_t mapped(void)
{
    smp_stats_t st;
    smp_stats_get(&st);
    return st.bytes_mapped - st.bytes_metadata; /* user memory */
}

int main(void)
{
    void *runs[20], *alone[3];
    size_t m0 = mapped();
    for (int i = 0; i < 20; i++)
        runs[i] = smp_malloc(192 * KiB);
    size_t m1 = mapped();
    void *one_mib = smp_malloc(MiB);
    size_t m2 = mapped();
    for (int i = 0; i < 3; i++)
        alone[i] = smp_malloc(2 * MiB + 64 * KiB);
    size_t m3 = mapped();
    void *just_over = smp_malloc(MiB + 1);
    size_t m4 = mapped();

    size_t d_runs = m1 - m0, d_one = m2 - m1, d_alone = m3 - m2, d_over = m4 - m3;
    printf("20 x 192 KiB: +%zu bytes mapped; 1 MiB: +%zu; 3 x (2 MiB + 64 KiB): +%zu; "
           "1 MiB + 1: +%zu\n", d_runs, d_one, d_alone, d_over);
    int bad = 0;
    if (d_runs % (4 * MiB) != 0) {
        printf("FAIL: 192 KiB blocks did not come from 4 MiB chunks\n");
        bad = 1;
    }
    if (d_one % (4 * MiB) != 0) {
        printf("FAIL: a 1 MiB block did not come from a 4 MiB chunk\n");
        bad = 1;
    }
    if (d_alone != 3 * (2 * MiB + 64 * KiB)) {
        printf("FAIL: 2 MiB + 64 KiB blocks were not each mapped alone\n");
        bad = 1;
    }
    if (d_over != MiB + 64 * KiB) {
        printf("FAIL: a block of 1 MiB + 1 byte was not mapped alone (1 MiB + 64 KiB)\n");
        bad = 1;
    }
    for (int i = 0; i < 20; i++)
        smp_free(runs[i]);
    for (int i = 0; i < 3; i++)
        smp_free(alone[i]);
    smp_free(one_mib);
    smp_free(just_over);
    return bad;
}

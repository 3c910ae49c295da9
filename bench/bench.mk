# bench fragment: the seed workload (bench/seed.c), a plain C program that
# uses malloc/realloc/free; the allocator under test comes from LD_PRELOAD.
#
# -fno-builtin-{malloc,realloc,free}: keep gcc from folding or eliding any
# allocation, so every call the workload models reaches the allocator.

BENCH_BINS += $(BUILD)/seed

SEED_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread \
               -fno-builtin-malloc -fno-builtin-realloc -fno-builtin-free

$(BUILD)/seed: bench/seed.c bench/bench.mk
	@mkdir -p $(BUILD)
	$(CC) $(SEED_CFLAGS) $(CFLAGS) -o $@ $< -pthread

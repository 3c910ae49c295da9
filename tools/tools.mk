# tools fragment: smpbench, the benchmark tool (tools/smpbench.c and its
# units), and `make bench`.  Its unit-test programs are built by
# tests/tools/tools.mk.

SMPBENCH_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow \
                   -Wstrict-prototypes -Itools
SMPBENCH_SRCS   := tools/smpbench.c tools/smpbench_run.c \
                   tools/smpbench_table.c tools/smpbench_io.c \
                   tools/smpbench_common.c tools/stats.c
SMPBENCH_HDRS   := tools/smpbench.h tools/smpbench_run.h \
                   tools/smpbench_table.h tools/smpbench_io.h tools/stats.h

TOOL_BINS += $(BUILD)/smpbench

$(BUILD)/smpbench: $(SMPBENCH_SRCS) $(SMPBENCH_HDRS) tools/tools.mk
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) $(SMPBENCH_CFLAGS) -o $@ $(SMPBENCH_SRCS) -lm

# The seed comparison: the seed workload under glibc, smpalloc and every
# peer allocator installed, as a table on stdout.
.PHONY: bench
bench: lib $(TOOL_BINS) $(BENCH_BINS)
	$(BUILD)/smpbench -- $(BUILD)/seed

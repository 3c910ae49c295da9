# tools fragment: smpbench, the benchmark tool (tools/smpbench.c and its
# units), its unit-test programs, and `make bench`.
#
#   smpbench_stats    tests/tools/smpbench_stats.c: the statistics (tools/stats.c)
#   smpbench_format   tests/tools/smpbench_format.c: the table against the seed post
#   smpbench_threads  tests/tools/smpbench_threads.c: page faults in 4 threads, for
#                     the perf plumbing check (t_smpbench_perf.sh)

SMPBENCH_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow \
                   -Wstrict-prototypes -Itools
SMPBENCH_SRCS   := tools/smpbench.c tools/smpbench_run.c \
                   tools/smpbench_table.c tools/smpbench_io.c \
                   tools/smpbench_common.c tools/stats.c
SMPBENCH_HDRS   := tools/smpbench.h tools/smpbench_run.h \
                   tools/smpbench_table.h tools/smpbench_io.h tools/stats.h

TOOL_BINS += $(BUILD)/smpbench
TEST_BINS += $(BUILD)/tests/smpbench_stats $(BUILD)/tests/smpbench_format \
             $(BUILD)/tests/smpbench_threads

$(BUILD)/smpbench: $(SMPBENCH_SRCS) $(SMPBENCH_HDRS) tools/tools.mk
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) $(SMPBENCH_CFLAGS) -o $@ $(SMPBENCH_SRCS) -lm

$(BUILD)/tests/smpbench_stats: tests/tools/smpbench_stats.c tools/stats.c \
                               tools/stats.h tools/tools.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SMPBENCH_CFLAGS) -o $@ tests/tools/smpbench_stats.c \
	  tools/stats.c -lm

$(BUILD)/tests/smpbench_format: tests/tools/smpbench_format.c tools/smpbench_table.c \
                                tools/smpbench_common.c tools/stats.c \
                                $(SMPBENCH_HDRS) tools/tools.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SMPBENCH_CFLAGS) -o $@ tests/tools/smpbench_format.c \
	  tools/smpbench_table.c tools/smpbench_common.c tools/stats.c -lm

$(BUILD)/tests/smpbench_threads: tests/tools/smpbench_threads.c tools/tools.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread -o $@ \
	  tests/tools/smpbench_threads.c

# The seed comparison: the seed workload under glibc, smpalloc and every
# peer allocator installed, as a table on stdout.
.PHONY: bench
bench: lib $(TOOL_BINS) $(BENCH_BINS)
	$(BUILD)/smpbench -- $(BUILD)/seed

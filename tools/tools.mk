# tools fragment: smpbench, the benchmark tool (tools/smpbench.c and its
# units) and its unit-test programs.  (`make bench` is in bench/bench.mk;
# the installed smpbench, which knows LIBDIR, is built by mk/install.mk.)
#
#   smpbench_stats    tests/smpbench_stats.c: the statistics (tools/stats.c)
#   smpbench_format   tests/smpbench_format.c: the table against the seed post
#   smpbench_threads  tests/smpbench_threads.c: page faults in 4 threads, for
#                     the perf plumbing check (t_smpbench_perf.sh)

SMPBENCH_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow \
                   -Wstrict-prototypes -Itools -DSMPBENCH_VERSION='"$(VERSION)"'
SMPBENCH_SRCS   := tools/smpbench.c tools/smpbench_run.c \
                   tools/smpbench_table.c tools/smpbench_io.c \
                   tools/smpbench_alloc.c tools/smpbench_input.c \
                   tools/smpbench_common.c tools/stats.c
SMPBENCH_HDRS   := tools/smpbench.h tools/smpbench_run.h \
                   tools/smpbench_table.h tools/smpbench_io.h \
                   tools/smpbench_alloc.h tools/smpbench_input.h tools/stats.h

TOOL_BINS += $(BUILD)/smpbench
TEST_BINS += $(BUILD)/tests/smpbench_stats $(BUILD)/tests/smpbench_format \
             $(BUILD)/tests/smpbench_threads

$(BUILD)/smpbench: $(SMPBENCH_SRCS) $(SMPBENCH_HDRS) tools/tools.mk
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) $(SMPBENCH_CFLAGS) -o $@ $(SMPBENCH_SRCS) -lm

$(BUILD)/tests/smpbench_stats: tests/smpbench_stats.c tools/stats.c \
                               tools/stats.h tools/tools.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SMPBENCH_CFLAGS) -o $@ tests/smpbench_stats.c \
	  tools/stats.c -lm

$(BUILD)/tests/smpbench_format: tests/smpbench_format.c tools/smpbench_table.c \
                                tools/smpbench_common.c tools/stats.c \
                                $(SMPBENCH_HDRS) tools/tools.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SMPBENCH_CFLAGS) -o $@ tests/smpbench_format.c \
	  tools/smpbench_table.c tools/smpbench_common.c tools/stats.c -lm

$(BUILD)/tests/smpbench_threads: tests/smpbench_threads.c tools/tools.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread -o $@ \
	  tests/smpbench_threads.c

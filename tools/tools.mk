# tools fragment: smpbench, the benchmark tool (tools/smpbench.c and its
# units).  (`make bench` is in bench/bench.mk; the installed smpbench, which
# knows LIBDIR, is built by mk/install.mk; the unit-test programs of the tools
# are built by tests/tools/tools.mk.)

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

$(BUILD)/smpbench: $(SMPBENCH_SRCS) $(SMPBENCH_HDRS) tools/tools.mk
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) $(SMPBENCH_CFLAGS) -o $@ $(SMPBENCH_SRCS) -lm


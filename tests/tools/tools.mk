# tools fragment: the programs of the tools' tests (see tests/tests.mk for
# test_prog).  The tools themselves are built by tools/tools.mk and
# bench/bench.mk; these programs are built the way tools/tools.mk builds
# smpbench, $(CC) with the user's $(CFLAGS), and use its variables.
#
#   smpbench_stats    smpbench_stats.c (t_smpbench_stats): the statistics,
#                     tools/stats.c, against values computed independently
#   smpbench_format   smpbench_format.c (t_smpbench_format): the table
#                     printer against the seed post
#   smpbench_perf     smpbench_perf.c (t_smpbench_perf): page faults in 4
#                     threads, the command smpbench measures
#
# install.c is not built here: t_install compiles it against the installed
# copy with the flags pkg-config gives (that is what it tests).  The other
# tests here run the tools themselves; data/ holds the recorded smpbench
# samples and tables t_smpbench_format and t_smpbench_run compare with.

TEST_CC_tool   = $(CC) $(CFLAGS)
TEST_DEPS_tool = tools/tools.mk

$(call test_prog,smpbench_stats,tool,tests/tools/smpbench_stats.c tools/stats.c,$(SMPBENCH_CFLAGS),-lm,\
       tools/stats.h)
$(call test_prog,smpbench_format,tool,\
       tests/tools/smpbench_format.c tools/smpbench_table.c tools/smpbench_common.c tools/stats.c,\
       $(SMPBENCH_CFLAGS),-lm,$(SMPBENCH_HDRS))
$(call test_prog,smpbench_perf,tool,tests/tools/smpbench_perf.c,-std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread)

# tests/tools fragment (newcomer): the programs of the tests/tools scripts.
#
#   large_runs   where blocks above the slab classes come from, seen
#                through smp_stats_get (t_large_runs.sh); linked with the
#                library archive

TEST_BINS += $(BUILD)/tests/large_runs

$(BUILD)/tests/large_runs: tests/tools/large_runs.c include/smpalloc.h $(LIB_A) \
                           tests/tools/newcomer.mk
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude -o $@ \
	  tests/tools/large_runs.c $(LIB_A) -lpthread

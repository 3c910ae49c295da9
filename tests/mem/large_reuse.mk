# mem_large_reuse: a freed big block serves the next big request with the
# pages it has (t_mem_large_reuse.sh); public names, run under the preload.
TEST_BINS += $(BUILD)/tests/mem_large_reuse

$(BUILD)/tests/mem_large_reuse: tests/mem/mem_large_reuse.c tests/mem/large_reuse.mk
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -fno-builtin-malloc -fno-builtin-free \
	  -o $@ $<

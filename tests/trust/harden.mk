# harden: the heap-misuse program of t_harden.sh, dynamically linked (run
# plainly under glibc for reference, and under LD_PRELOAD) and statically
# linked with -static against the archive (which must link although the
# program calls mallopt, mallinfo and the __libc_* names).
HARDEN_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wno-deprecated-declarations \
                 -Wno-use-after-free -Wno-free-nonheap-object -fno-builtin-malloc \
                 -fno-builtin-free -fno-builtin-realloc -fno-builtin-calloc
TEST_BINS += $(BUILD)/tests/harden $(BUILD)/tests/harden_static

$(BUILD)/tests/harden: tests/trust/harden.c tests/trust/harden.mk
	@mkdir -p $(dir $@)
	$(CC) $(HARDEN_CFLAGS) -o $@ $<

$(BUILD)/tests/harden_static: tests/trust/harden.c tests/trust/harden.mk $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(HARDEN_CFLAGS) -static -o $@ $< $(LIB_A) -lpthread

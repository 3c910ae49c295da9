# tests fragment: the programs the tests/t_*.sh scripts run.
#
#   api, stress          libc names, dynamically linked: run plainly (glibc,
#                        the reference) and under LD_PRELOAD=$(LIB_SO)
#   api_prefix,          -DAPI_PREFIX: the smp_* names, compiled together
#   stress_prefix        with $(CORE_SRCS)
#   *_tsan, *_ubsan      the same with ThreadSanitizer / UBSan; the allocator
#                        sources are instrumented too
#   *_static             linked with $(LIB_A), so malloc is smpalloc's
#   oom_*, badfree_*     helpers of t_oom.sh and t_badfree.sh
#   stress_lifecycle*    fork and thread-exit (TSD destructor) allocation

TEST_DIR    := $(BUILD)/tests
TEST_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude
# Sanitizer builds use SAN_CC (default: the same compiler).
SAN_CC      ?= $(CC)
TSAN_FLAGS  := -fsanitize=thread -O1 -g
UBSAN_FLAGS := -fsanitize=undefined -fno-sanitize-recover=all -O1 -g
CORE_DEPS   := $(CORE_SRCS) $(LIB_HDRS)

TEST_BINS += $(TEST_DIR)/api $(TEST_DIR)/api_prefix $(TEST_DIR)/api_static \
             $(TEST_DIR)/api_tsan $(TEST_DIR)/api_ubsan \
             $(TEST_DIR)/stress $(TEST_DIR)/stress_prefix \
             $(TEST_DIR)/stress_tsan $(TEST_DIR)/stress_ubsan \
             $(TEST_DIR)/static_prove \
             $(TEST_DIR)/oom_alloc $(TEST_DIR)/oom_alloc_static \
             $(TEST_DIR)/badfree_prog $(TEST_DIR)/badfree_prog_static \
             $(TEST_DIR)/stress_lifecycle $(TEST_DIR)/stress_lifecycle_static

.PHONY: test-bins
test-bins: $(TEST_BINS)

# --- plain names, dynamic (glibc or LD_PRELOAD) ---------------------------
$(TEST_DIR)/api: tests/api.c tests/check.h include/smpalloc.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/api.c -ldl

$(TEST_DIR)/stress: tests/stress.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/stress.c -lpthread -ldl

$(TEST_DIR)/oom_alloc: tests/oom_alloc.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/oom_alloc.c

$(TEST_DIR)/stress_lifecycle: tests/stress_lifecycle.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/stress_lifecycle.c -lpthread

$(TEST_DIR)/badfree_prog: tests/badfree_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/badfree_prog.c

# --- static link with the library archive ---------------------------------
$(TEST_DIR)/api_static: tests/api.c tests/check.h include/smpalloc.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/api.c $(LIB_A) -lpthread -ldl

$(TEST_DIR)/static_prove: tests/static_prove.c include/smpalloc.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/static_prove.c $(LIB_A) -lpthread

$(TEST_DIR)/oom_alloc_static: tests/oom_alloc.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/oom_alloc.c $(LIB_A) -lpthread

$(TEST_DIR)/stress_lifecycle_static: tests/stress_lifecycle.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/stress_lifecycle.c $(LIB_A) -lpthread

$(TEST_DIR)/badfree_prog_static: tests/badfree_prog.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/badfree_prog.c $(LIB_A) -lpthread

# --- smp_* names compiled with the allocator sources ----------------------
$(TEST_DIR)/api_prefix: tests/api.c tests/check.h $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SMP_CFLAGS) -O2 -g -DAPI_PREFIX -o $@ tests/api.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/stress_prefix: tests/stress.c $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SMP_CFLAGS) -O2 -g -DAPI_PREFIX -o $@ tests/stress.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/api_tsan: tests/api.c tests/check.h $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SMP_CFLAGS) $(TSAN_FLAGS) -DAPI_PREFIX -o $@ tests/api.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/stress_tsan: tests/stress.c $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SMP_CFLAGS) $(TSAN_FLAGS) -DAPI_PREFIX -o $@ tests/stress.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/api_ubsan: tests/api.c tests/check.h $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SMP_CFLAGS) $(UBSAN_FLAGS) -DAPI_PREFIX -o $@ tests/api.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/stress_ubsan: tests/stress.c $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SMP_CFLAGS) $(UBSAN_FLAGS) -DAPI_PREFIX -o $@ tests/stress.c $(CORE_SRCS) -lpthread -ldl

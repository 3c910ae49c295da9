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
$(TEST_DIR)/api: tests/api/api.c tests/api/check.h include/smpalloc.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/api/api.c -ldl

$(TEST_DIR)/stress: tests/api/stress.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/api/stress.c -lpthread -ldl

$(TEST_DIR)/oom_alloc: tests/trust/oom_alloc.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/trust/oom_alloc.c

$(TEST_DIR)/stress_lifecycle: tests/api/stress_lifecycle.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/api/stress_lifecycle.c -lpthread

$(TEST_DIR)/badfree_prog: tests/trust/badfree_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/trust/badfree_prog.c

# --- static link with the library archive ---------------------------------
$(TEST_DIR)/api_static: tests/api/api.c tests/api/check.h include/smpalloc.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/api/api.c $(LIB_A) -lpthread -ldl

$(TEST_DIR)/static_prove: tests/api/static_prove.c include/smpalloc.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/api/static_prove.c $(LIB_A) -lpthread

$(TEST_DIR)/oom_alloc_static: tests/trust/oom_alloc.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/trust/oom_alloc.c $(LIB_A) -lpthread

$(TEST_DIR)/stress_lifecycle_static: tests/api/stress_lifecycle.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/api/stress_lifecycle.c $(LIB_A) -lpthread

$(TEST_DIR)/badfree_prog_static: tests/trust/badfree_prog.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ tests/trust/badfree_prog.c $(LIB_A) -lpthread

# --- smp_* names compiled with the allocator sources ----------------------
$(TEST_DIR)/api_prefix: tests/api/api.c tests/api/check.h $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SMP_CFLAGS) -O2 -g -DAPI_PREFIX -o $@ tests/api/api.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/stress_prefix: tests/api/stress.c $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SMP_CFLAGS) -O2 -g -DAPI_PREFIX -o $@ tests/api/stress.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/api_tsan: tests/api/api.c tests/api/check.h $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SMP_CFLAGS) $(TSAN_FLAGS) -DAPI_PREFIX -o $@ tests/api/api.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/stress_tsan: tests/api/stress.c $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SMP_CFLAGS) $(TSAN_FLAGS) -DAPI_PREFIX -o $@ tests/api/stress.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/api_ubsan: tests/api/api.c tests/api/check.h $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SMP_CFLAGS) $(UBSAN_FLAGS) -DAPI_PREFIX -o $@ tests/api/api.c $(CORE_SRCS) -lpthread -ldl

$(TEST_DIR)/stress_ubsan: tests/api/stress.c $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SMP_CFLAGS) $(UBSAN_FLAGS) -DAPI_PREFIX -o $@ tests/api/stress.c $(CORE_SRCS) -lpthread -ldl

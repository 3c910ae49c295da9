# trust fragment (issue "Trust"): fuzzing, fault injection, signals and
# cancellation, AddressSanitizer, checked mode, real test suites under the
# preload.  Included by the top-level Makefile after tests/tests.mk.
#
#   fuzz_alloc           libFuzzer harness of the smp_* API (clang
#                        -fsanitize=fuzzer,undefined), allocator sources
#                        compiled in; built only where libFuzzer links
#                        (otherwise fuzz_alloc.skip says why)
#   fuzz_alloc_replay    the same harness with its own main (any compiler):
#                        replays the corpus, or runs pseudo-random inputs
#   fault_oom            -DSMP_FAULT_INJECTION, smp_* names: the map-failure
#                        sweep of t_fault.sh
#   fault_oom_plain      libc names: the ulimit -v run under LD_PRELOAD
#   (t_checked.sh runs tests/badfree_prog, built by tests.mk)
#   signal_alloc[_prefix], cancel_threads[_prefix]
#                        t_signal.sh and t_cancel.sh, libc names (preload)
#                        and smp_* names with the sources
#   api_asan, stress_asan
#                        AddressSanitizer builds of tests/api/api.c and
#                        tests/api/stress.c with -DAPI_PREFIX
#
# Targets: `make fuzz` (FUZZ_TIME seconds of libFuzzer, new inputs kept in
# build/fuzz-corpus), `make fuzz-merge` (minimise that into tests/trust/corpus),
# `make check-long` (fuzz, then the long runs of the trust tests),
# `make checked-cost` (build/seed with and without SMPALLOC_CHECKED=1).

TRUST_DIR    := $(BUILD)/tests
FUZZ_CC      ?= clang
FUZZ_TIME    ?= 300
FUZZ_FLAGS   := -fsanitize=fuzzer,undefined -fno-sanitize-recover=undefined -O1 -g
ASAN_FLAGS   := -fsanitize=address -fno-omit-frame-pointer -O1 -g
TRUST_CORE   := $(CORE_SRCS) $(LIB_HDRS)
TRUST_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude

TEST_BINS += $(TRUST_DIR)/fuzz_alloc $(TRUST_DIR)/fuzz_alloc_replay \
             $(TRUST_DIR)/fault_oom $(TRUST_DIR)/fault_oom_plain \
             $(TRUST_DIR)/signal_alloc $(TRUST_DIR)/signal_alloc_prefix \
             $(TRUST_DIR)/cancel_threads $(TRUST_DIR)/cancel_threads_prefix \
             $(TRUST_DIR)/api_asan $(TRUST_DIR)/stress_asan

.PHONY: trust-bins fuzz fuzz-merge check-long checked-cost
trust-bins: $(filter $(TRUST_DIR)/fuzz% $(TRUST_DIR)/fault% $(TRUST_DIR)/signal% \
              $(TRUST_DIR)/cancel% $(TRUST_DIR)/%_asan,$(TEST_BINS))

# --- fuzzing --------------------------------------------------------------
# libFuzzer is probed with an empty harness first: if that does not link the
# build leaves fuzz_alloc.skip (t_fuzz.sh skips with its text); if it does,
# the real harness must compile.
$(TRUST_DIR)/fuzz_alloc: tests/trust/fuzz_alloc.c $(TRUST_CORE) tests/trust/trust.mk
	@mkdir -p $(dir $@)
	@rm -f $@.skip
	@printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >$@.probe.c
	@if $(FUZZ_CC) -fsanitize=fuzzer -o $@.probe $@.probe.c >$@.probe.log 2>&1; then \
	  echo "$(FUZZ_CC) $(SMP_CFLAGS) $(FUZZ_FLAGS) -DSMP_DEBUG -o $@ tests/trust/fuzz_alloc.c $(CORE_SRCS) -lpthread"; \
	  $(FUZZ_CC) $(SMP_CFLAGS) $(FUZZ_FLAGS) -DSMP_DEBUG -o $@ tests/trust/fuzz_alloc.c $(CORE_SRCS) -lpthread; \
	else \
	  rm -f $@; \
	  echo "libFuzzer is not available ($(FUZZ_CC) -fsanitize=fuzzer does not link: install clang and libclang-rt-14-dev)" >$@.skip; \
	  cat $@.skip; \
	fi; rc=$$?; rm -f $@.probe $@.probe.c $@.probe.log; exit $$rc

$(TRUST_DIR)/fuzz_alloc_replay: tests/trust/fuzz_alloc.c $(TRUST_CORE)
	@mkdir -p $(dir $@)
	$(CC) $(SMP_CFLAGS) -O2 -g -DSMP_DEBUG -DFUZZ_STANDALONE -o $@ tests/trust/fuzz_alloc.c $(CORE_SRCS) -lpthread

FUZZ_WORK := $(BUILD)/fuzz-corpus
fuzz: $(TRUST_DIR)/fuzz_alloc
	@test -x $(TRUST_DIR)/fuzz_alloc || { cat $(TRUST_DIR)/fuzz_alloc.skip; exit 1; }
	@mkdir -p $(FUZZ_WORK) $(BUILD)/fuzz-artifacts
	$(TRUST_DIR)/fuzz_alloc -max_total_time=$(FUZZ_TIME) -max_len=4096 -rss_limit_mb=4096 \
	  -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz-artifacts/ \
	  $(FUZZ_WORK) tests/trust/corpus/fuzz_alloc

# Minimise what `make fuzz` found together with the committed corpus into
# tests/trust/corpus/fuzz_alloc (keep it small: it is in git).
fuzz-merge: $(TRUST_DIR)/fuzz_alloc
	@mkdir -p $(BUILD)/fuzz-merged
	rm -f $(BUILD)/fuzz-merged/*
	$(TRUST_DIR)/fuzz_alloc -merge=1 -max_len=4096 $(BUILD)/fuzz-merged tests/trust/corpus/fuzz_alloc $(FUZZ_WORK)
	rm -f tests/trust/corpus/fuzz_alloc/*
	cp $(BUILD)/fuzz-merged/* tests/trust/corpus/fuzz_alloc/
	@du -sh tests/trust/corpus/fuzz_alloc

# --- fault injection, misuse ----------------------------------------------
$(TRUST_DIR)/fault_oom: tests/trust/fault_oom.c $(TRUST_CORE)
	@mkdir -p $(dir $@)
	$(CC) $(SMP_CFLAGS) -O2 -g -DSMP_FAULT_INJECTION -DAPI_PREFIX -o $@ tests/trust/fault_oom.c $(CORE_SRCS) -lpthread

$(TRUST_DIR)/fault_oom_plain: tests/trust/fault_oom.c
	@mkdir -p $(dir $@)
	$(CC) $(TRUST_CFLAGS) -o $@ tests/trust/fault_oom.c -lpthread

# --- signals, cancellation -------------------------------------------------
$(TRUST_DIR)/signal_alloc: tests/trust/signal_alloc.c
	@mkdir -p $(dir $@)
	$(CC) $(TRUST_CFLAGS) -o $@ tests/trust/signal_alloc.c -lpthread -ldl

$(TRUST_DIR)/signal_alloc_prefix: tests/trust/signal_alloc.c $(TRUST_CORE)
	@mkdir -p $(dir $@)
	$(CC) $(SMP_CFLAGS) -O2 -g -DAPI_PREFIX -o $@ tests/trust/signal_alloc.c $(CORE_SRCS) -lpthread -ldl

$(TRUST_DIR)/cancel_threads: tests/trust/cancel_threads.c
	@mkdir -p $(dir $@)
	$(CC) $(TRUST_CFLAGS) -o $@ tests/trust/cancel_threads.c -lpthread -ldl

$(TRUST_DIR)/cancel_threads_prefix: tests/trust/cancel_threads.c $(TRUST_CORE)
	@mkdir -p $(dir $@)
	$(CC) $(SMP_CFLAGS) -O2 -g -DAPI_PREFIX -o $@ tests/trust/cancel_threads.c $(CORE_SRCS) -lpthread -ldl

# --- AddressSanitizer ----------------------------------------------------
TRUST_SAN_CC ?= $(if $(SAN_CC),$(SAN_CC),$(CC))
$(TRUST_DIR)/api_asan: tests/api/api.c tests/api/check.h $(TRUST_CORE)
	@mkdir -p $(dir $@)
	$(TRUST_SAN_CC) $(SMP_CFLAGS) $(ASAN_FLAGS) -DAPI_PREFIX -o $@ tests/api/api.c $(CORE_SRCS) -lpthread -ldl

$(TRUST_DIR)/stress_asan: tests/api/stress.c $(TRUST_CORE)
	@mkdir -p $(dir $@)
	$(TRUST_SAN_CC) $(SMP_CFLAGS) $(ASAN_FLAGS) -DAPI_PREFIX -o $@ tests/api/stress.c $(CORE_SRCS) -lpthread -ldl

# --- long runs -------------------------------------------------------------
# The long variants: the trust tests with TRUST_LONG=1 (bigger sweeps, more
# rounds, the whole chosen part of the CPython suite).
TRUST_LONG_TESTS := t_fuzz t_fault t_signal t_cancel t_checked t_asan t_suite_python t_suite_sqlite
check-long: lib $(TEST_BINS) $(TOOL_BINS) $(BENCH_BINS) fuzz
	TRUST_LONG=1 TESTS="$(TRUST_LONG_TESTS)" bash tests/run.sh

checked-cost: $(BUILD)/seed $(LIB_SO)
	bash tests/trust/t_checked.sh --cost

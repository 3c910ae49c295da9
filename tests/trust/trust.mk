# trust fragment (issue "Trust"): fuzzing, fault injection, signals and
# cancellation, sanitizers, checked mode and bad frees, out of memory (see
# tests/tests.mk for test_prog, test_progs and the ways).  The real test
# suites under the preload (t_suite_*) are in tests/real/ and build nothing.
#
#   fuzz_alloc           fuzz_alloc.c (t_fuzz): libFuzzer harness of the smp_*
#                        API (clang -fsanitize=fuzzer,undefined), allocator
#                        sources compiled in; built only where libFuzzer links
#                        (otherwise fuzz_alloc.skip says why).  Named after
#                        what it fuzzes, as its corpus (corpus/fuzz_alloc,
#                        libFuzzer's convention) is
#   fuzz_alloc_replay    the same harness with its own main (any compiler):
#                        replays the corpus, or runs pseudo-random inputs
#   fault                fault.c (t_fault), -DSMP_FAULT_INJECTION, smp_* names:
#                        the map-failure sweep
#   fault_plain          libc names: the ulimit -v run under LD_PRELOAD
#   badfree, badfree_static
#                        badfree.c (t_badfree; t_checked runs it too, in
#                        checked mode): one invalid free per mode
#   oom, oom_static      oom.c (t_oom): allocation under ulimit -v
#   harden, harden_static
#                        harden.c (t_harden): one heap misuse per mode, run
#                        under glibc and the preload, and linked -static
#                        against the archive (which must link although it
#                        calls mallopt, mallinfo and the __libc_* names)
#   signal, signal_prefix, cancel, cancel_prefix
#                        signal.c and cancel.c (t_signal, t_cancel), libc
#                        names (preload) and smp_* names with the sources
#   api_tsan, stress_tsan, api_ubsan, stress_ubsan, api_asan, stress_asan
#                        the sanitizer builds of tests/api/api.c and
#                        tests/api/stress.c (t_sanitize_tsan,
#                        t_sanitize_ubsan, t_asan): those tests have no
#                        program of their own
#
# Targets: `make fuzz` (FUZZ_TIME seconds of libFuzzer, new inputs kept in
# build/fuzz-corpus), `make fuzz-merge` (minimise that into
# tests/trust/corpus), `make check-long` (fuzz, then the long runs of the
# trust tests), `make checked-cost` (build/seed with and without
# SMPALLOC_CHECKED=1).

FUZZ_CC      ?= clang
FUZZ_TIME    ?= 300
FUZZ_FLAGS   := -fsanitize=fuzzer,undefined -fno-sanitize-recover=undefined -O1 -g
FUZZ_CORPUS  := tests/trust/corpus/fuzz_alloc

$(call test_progs,badfree,plain static,tests/trust/badfree.c)
$(call test_progs,oom,plain static,tests/trust/oom.c)
HARDEN_CFLAGS := -Wno-deprecated-declarations -Wno-use-after-free -Wno-free-nonheap-object \
                 -fno-builtin-malloc -fno-builtin-free -fno-builtin-realloc -fno-builtin-calloc
$(call test_prog,harden,plain,tests/trust/harden.c,$(HARDEN_CFLAGS))
$(call test_prog,harden_static,static,tests/trust/harden.c,$(HARDEN_CFLAGS) -static)
$(call test_prog,fault,prefix,tests/trust/fault.c,-DSMP_FAULT_INJECTION)
$(call test_prog,fault_plain,plain,tests/trust/fault.c,,-lpthread)
$(call test_progs,signal,plain prefix,tests/trust/signal.c,,-lpthread -ldl)
$(call test_progs,cancel,plain prefix,tests/trust/cancel.c,,-lpthread -ldl)
$(call test_progs,sighandler,plain prefix,tests/trust/sighandler.c,,-lpthread -ldl)
$(call test_prog,relock,core,tests/trust/relock.c,,,)
$(call test_prog,fuzz_alloc_replay,core,tests/trust/fuzz_alloc.c,-DSMP_DEBUG -DFUZZ_STANDALONE)
$(foreach prog,api stress,\
  $(call test_progs,$(prog),tsan ubsan asan,tests/api/$(prog).c,,-ldl,tests/api/check.h))

# --- fuzzing --------------------------------------------------------------
# libFuzzer is probed with an empty harness first: if that does not link the
# build leaves fuzz_alloc.skip (t_fuzz.sh skips with its text); if it does,
# the real harness must compile.
TEST_BINS += $(TEST_DIR)/fuzz_alloc
$(TEST_DIR)/fuzz_alloc: tests/trust/fuzz_alloc.c $(CORE_DEPS) tests/trust/trust.mk
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

FUZZ_WORK := $(BUILD)/fuzz-corpus
fuzz: $(TEST_DIR)/fuzz_alloc
	@test -x $(TEST_DIR)/fuzz_alloc || { cat $(TEST_DIR)/fuzz_alloc.skip; exit 1; }
	@mkdir -p $(FUZZ_WORK) $(BUILD)/fuzz-artifacts
	$(TEST_DIR)/fuzz_alloc -max_total_time=$(FUZZ_TIME) -max_len=4096 -rss_limit_mb=4096 \
	  -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz-artifacts/ \
	  $(FUZZ_WORK) $(FUZZ_CORPUS)

# Minimise what `make fuzz` found together with the committed corpus into
# $(FUZZ_CORPUS) (keep it small: it is in git).
fuzz-merge: $(TEST_DIR)/fuzz_alloc
	@mkdir -p $(BUILD)/fuzz-merged
	rm -f $(BUILD)/fuzz-merged/*
	$(TEST_DIR)/fuzz_alloc -merge=1 -max_len=4096 $(BUILD)/fuzz-merged $(FUZZ_CORPUS) $(FUZZ_WORK)
	rm -f $(FUZZ_CORPUS)/*
	cp $(BUILD)/fuzz-merged/* $(FUZZ_CORPUS)/
	@du -sh $(FUZZ_CORPUS)

.PHONY: trust-bins fuzz fuzz-merge check-long checked-cost
trust-bins: $(filter $(TEST_DIR)/fuzz% $(TEST_DIR)/fault% $(TEST_DIR)/signal% \
              $(TEST_DIR)/cancel% $(TEST_DIR)/sighandler% $(TEST_DIR)/relock $(TEST_DIR)/%_asan,$(TEST_BINS))

# --- long runs -------------------------------------------------------------
# The long variants: the trust tests with TRUST_LONG=1 (bigger sweeps, more
# rounds, the whole chosen part of the CPython suite).
TRUST_LONG_TESTS := t_fuzz t_fault t_signal t_cancel t_checked t_asan t_suite_python t_suite_sqlite
check-long: lib tools test-bins fuzz
	TRUST_LONG=1 TESTS="$(TRUST_LONG_TESTS)" bash tests/run.sh

checked-cost: $(BUILD)/seed $(LIB_SO)
	bash tests/trust/t_checked.sh --cost

# tests fragment: where the tests' make logic starts.  The top-level Makefile
# includes this file after tools/tools.mk and bench/bench.mk (the tools
# tests use their variables); it includes every tests/*/*.mk, one per kind of
# test, each building the programs of the t_*.sh scripts next to it into
# $(TEST_DIR) and adding them to TEST_BINS.  `make test-bins` builds them
# all; tests/run.sh runs it before the tests.
#
# A fragment declares a program with one line:
#
#   $(call test_prog,OUT,WAY,SOURCES,CFLAGS,LIBS,DEPS)
#
# builds $(TEST_DIR)/OUT from SOURCES (the first is the program's own) with
# the compiler command of WAY plus CFLAGS, links WAY's libraries plus LIBS,
# and rebuilds when SOURCES, DEPS (headers), WAY's inputs, this file or the
# fragment change.  One source built several ways:
#
#   $(call test_progs,NAME,WAYS,SOURCES,CFLAGS,LIBS,DEPS)
#
# gives $(TEST_DIR)/NAME for the way plain and NAME_WAY for the others
# (api, api_static, api_prefix).  The ways:
#
#   plain    $(CC) $(TEST_CFLAGS): the libc names, dynamically linked - run
#            plainly (glibc, the reference) and under LD_PRELOAD=$(LIB_SO)
#   static   the same linked with $(LIB_A), so malloc is smpalloc's
#   core     $(CC) $(SMP_CFLAGS), compiled together with $(CORE_SRCS): sees
#            the internal headers and calls the smp_* names
#   prefix   core with -DAPI_PREFIX: the programs that can be built either
#            way (api.c, stress.c, ...) call the smp_* names
#   tsan, ubsan, asan
#            prefix built by $(SAN_CC) with ThreadSanitizer /
#            UndefinedBehaviorSanitizer / AddressSanitizer: the allocator's
#            own code is instrumented too
#
# A fragment may define a way of its own (TEST_CC_way, TEST_LIBS_way,
# TEST_DEPS_way), as tests/tools/tools.mk does.

TEST_DIR    := $(BUILD)/tests
TEST_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude
# Sanitizer builds use SAN_CC (default: the same compiler).
SAN_CC      ?= $(CC)
TSAN_FLAGS  := -fsanitize=thread -O1 -g
UBSAN_FLAGS := -fsanitize=undefined -fno-sanitize-recover=all -O1 -g
ASAN_FLAGS  := -fsanitize=address -fno-omit-frame-pointer -O1 -g
CORE_DEPS   := $(CORE_SRCS) $(LIB_HDRS)

TEST_CC_plain    = $(CC) $(TEST_CFLAGS)
TEST_DEPS_plain  = include/smpalloc.h
TEST_CC_static   = $(CC) $(TEST_CFLAGS)
TEST_LIBS_static = $(LIB_A) -lpthread
TEST_DEPS_static = $(LIB_A)
TEST_CC_core     = $(CC) $(SMP_CFLAGS) -O2 -g
TEST_CC_prefix   = $(TEST_CC_core) -DAPI_PREFIX
TEST_CC_tsan     = $(SAN_CC) $(SMP_CFLAGS) $(TSAN_FLAGS) -DAPI_PREFIX
TEST_CC_ubsan    = $(SAN_CC) $(SMP_CFLAGS) $(UBSAN_FLAGS) -DAPI_PREFIX
TEST_CC_asan     = $(SAN_CC) $(SMP_CFLAGS) $(ASAN_FLAGS) -DAPI_PREFIX
$(foreach way,core prefix tsan ubsan asan,\
  $(eval TEST_LIBS_$(way) = $$(CORE_SRCS) -lpthread)\
  $(eval TEST_DEPS_$(way) = $$(CORE_DEPS)))

# $(1) OUT, $(2) WAY, $(3) SOURCES, $(4) CFLAGS, $(5) LIBS, $(6) DEPS, $(7)
# the fragment that asked.
define test_prog_rule
TEST_BINS += $(TEST_DIR)/$(1)
$(TEST_DIR)/$(1): $(3) $(6) $(TEST_DEPS_$(2)) tests/tests.mk $(7)
	@mkdir -p $$(@D)
	$$(strip $(TEST_CC_$(2)) $(4) -o $$@ $(3) $(TEST_LIBS_$(2)) $(5))
endef
test_prog = $(eval $(call test_prog_rule,$(strip $(1)),$(strip $(2)),$(strip $(3)),$(strip $(4)),\
              $(strip $(5)),$(strip $(6)),$(lastword $(MAKEFILE_LIST))))
test_progs = $(foreach way,$(2),\
               $(call test_prog,$(strip $(1))$(if $(filter plain,$(way)),,_$(way)),$(way),$(3),$(4),$(5),$(6)))

include $(sort $(wildcard tests/*/*.mk))

.PHONY: test-bins
test-bins: $(TEST_BINS)

# mem fragment: the programs of the memory tests, one per test: t_mem_X.sh
# runs $(TEST_DIR)/mem_X, built from mem_X.c (every tests/mem/mem_*.c is
# one).  They share mem_common.h.  The libc names, run under LD_PRELOAD and
# under glibc; -fno-builtin-malloc/free so every call reaches the allocator.

MEM_PROGS := $(basename $(notdir $(wildcard tests/mem/mem_*.c)))
# mem_startup defines libc functions for the library to call: exported.
MEM_FLAGS_mem_startup := -rdynamic

$(foreach prog,$(MEM_PROGS),\
  $(call test_prog,$(prog),plain,tests/mem/$(prog).c,-pthread -fno-builtin-malloc -fno-builtin-free $(MEM_FLAGS_$(prog)),,\
         tests/mem/mem_common.h))

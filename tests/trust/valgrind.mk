# valgrind fragment: the valgrind build of the archive and the buggy
# program of t_valgrind.sh, linked with it.
#
#   build/valgrind/libsmpalloc.a   `make VALGRIND=1 lib` (the top Makefile's
#                                  rules in their own build directory, with
#                                  -DSMP_VALGRIND)
#   build/tests/valgrind_bugs      tests/trust/valgrind_bugs.c and that
#                                  archive: a plain static link (libc stays
#                                  shared), so memcheck must be kept from
#                                  replacing its malloc (t_valgrind.sh)
#
# Nothing here in the VALGRIND=1 build itself (the sub-make).
ifneq ($(VALGRIND),1)
VG_LIB_A    := build/valgrind/libsmpalloc.a
VG_CFLAGS   := -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Iinclude -Wno-use-after-free \
               -Wno-free-nonheap-object -fno-builtin-malloc -fno-builtin-free \
               -fno-builtin-realloc -fno-builtin-calloc
TEST_BINS += $(BUILD)/tests/valgrind_bugs

$(VG_LIB_A): $(LIB_SRCS) $(LIB_HDRS)
	$(MAKE) --no-print-directory VALGRIND=1 lib

$(BUILD)/tests/valgrind_bugs: tests/trust/valgrind_bugs.c tests/trust/valgrind.mk $(VG_LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(VG_CFLAGS) -o $@ $< $(VG_LIB_A) -lpthread
endif

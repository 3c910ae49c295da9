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
# Without valgrind's headers (<valgrind/memcheck.h>, Debian's valgrind
# package) there is no valgrind build: valgrind_bugs.skip says so instead,
# and t_valgrind.sh skips.  Nothing here in the VALGRIND=1 build itself
# (the sub-make).
ifneq ($(VALGRIND),1)
VG_LIB_A   := build/valgrind/libsmpalloc.a
VG_PROG    := $(BUILD)/tests/valgrind_bugs
VG_CFLAGS  := -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Iinclude -Wno-use-after-free \
              -Wno-free-nonheap-object -fno-builtin-malloc -fno-builtin-free \
              -fno-builtin-realloc -fno-builtin-calloc
VG_HASH    := \#
VG_HEADERS ?= $(shell echo '$(VG_HASH)include <valgrind/memcheck.h>' | $(CC) -E -x c - >/dev/null 2>&1 && echo yes)

ifeq ($(VG_HEADERS),yes)
TEST_BINS += $(VG_PROG)

$(VG_LIB_A): $(LIB_SRCS) $(LIB_HDRS)
	$(MAKE) --no-print-directory VALGRIND=1 lib

$(VG_PROG): tests/trust/valgrind_bugs.c tests/trust/valgrind.mk $(VG_LIB_A)
	@mkdir -p $(dir $@)
	@rm -f $@.skip
	$(CC) $(VG_CFLAGS) -o $@ $< $(VG_LIB_A) -lpthread
else
TEST_BINS += $(VG_PROG).skip

$(VG_PROG).skip: tests/trust/valgrind.mk
	@mkdir -p $(dir $@)
	echo "valgrind's headers (<valgrind/memcheck.h>) are not installed: no valgrind build" >$@
endif
endif

# smpalloc - top-level build.  `make` builds the libraries, `make test` runs
# the whole suite, `make bench` prints the seed comparison table.
#
# Fragments: tests/tests.mk, tools/tools.mk and bench/bench.mk add their
# programs to TEST_BINS / TOOL_BINS / BENCH_BINS and their own targets.
#
# `make VALGRIND=1` is the valgrind build: everything goes to build/valgrind
# instead of build, and the core is compiled with -DSMP_VALGRIND (client
# requests that show every block to memcheck, src/track.h).  `make test`
# builds build/valgrind/libsmpalloc.a that way too (tests/trust/valgrind.mk).

CC      ?= cc
AR      ?= ar
CFLAGS  ?= -O2 -g
BUILD   := build
TRACK   :=
ifeq ($(VALGRIND),1)
BUILD   := build/valgrind
TRACK   := -DSMP_VALGRIND
endif

VERSION := 0.1.0
SONAME  := libsmpalloc.so.0

LIB_SO  := $(BUILD)/libsmpalloc.so
LIB_A   := $(BUILD)/libsmpalloc.a

# The allocator core (no libc names) and the file that adds the libc names.
CORE_SRCS    := src/os.c src/os_proc.c src/lock.c src/options.c src/sizeclass.c src/pagemap.c src/region.c \
                src/chunk.c src/extent.c src/slab.c src/slot.c src/large.c src/tcache.c \
                src/purge.c src/reentry.c src/stack.c src/symbol.c src/guard.c src/prof.c src/prof_out.c \
                src/stats.c src/init.c src/alloc.c
OVERRIDE_SRC := src/override.c
LIB_SRCS     := $(CORE_SRCS) $(OVERRIDE_SRC)
LIB_HDRS     := include/smpalloc.h $(wildcard src/*.h)

# Flags every build of the core uses (sanitizer builds add theirs).
SMP_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
              -fvisibility=hidden -ftls-model=initial-exec -fno-plt \
              -fno-semantic-interposition -Iinclude -Isrc \
              -fno-builtin-malloc -fno-builtin-calloc -fno-builtin-realloc -fno-builtin-free $(TRACK)

LIB_OBJS_PIC := $(patsubst src/%.c,$(BUILD)/pic/%.o,$(LIB_SRCS))
LIB_OBJS     := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))

TEST_BINS  :=
TOOL_BINS  :=
BENCH_BINS :=

.PHONY: all lib test bench clean
all: lib tools

lib: $(LIB_SO) $(LIB_A)

$(BUILD)/pic/%.o: src/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SMP_CFLAGS) -fPIC -c $< -o $@

$(BUILD)/obj/%.o: src/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SMP_CFLAGS) -c $< -o $@

# The unwinder (stack.h) is libgcc_eh's, linked in with its names hidden:
# the library exports no _Unwind_* and needs no libgcc_s.
$(LIB_SO): $(LIB_OBJS_PIC)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-Bsymbolic-functions -Wl,-z,now \
	  -static-libgcc -Wl,--exclude-libs,ALL -o $@ $^ -lpthread
	ln -sf libsmpalloc.so $(BUILD)/$(SONAME)  # for programs linked with -Lbuild -lsmpalloc

# The archive holds one relocatable object whose hidden symbols are made
# local: a program linked with it sees only the public names (smp_* and the
# libc names), never internals such as os_map or stats_init.
OBJCOPY ?= objcopy
$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	$(CC) -r -nostdlib -o $(BUILD)/obj/smpalloc.o $^
	$(OBJCOPY) --localize-hidden $(BUILD)/obj/smpalloc.o
	$(AR) rcs $@ $(BUILD)/obj/smpalloc.o

include tools/tools.mk
include bench/bench.mk
include mk/install.mk
include tests/tests.mk

.PHONY: tools
tools: $(TOOL_BINS) $(BENCH_BINS)

test: lib $(TOOL_BINS) $(BENCH_BINS) $(TEST_BINS)
	@bash tests/run.sh

clean:
	rm -rf $(BUILD)

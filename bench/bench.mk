# bench fragment: the seed workload (bench/seed.c), a plain C program that
# uses malloc/realloc/free; the allocator under test comes from LD_PRELOAD.
#
# -fno-builtin-{malloc,realloc,free}: keep gcc from folding or eliding any
# allocation, so every call the workload models reaches the allocator.

BENCH_BINS += $(BUILD)/seed

SEED_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread \
               -fno-builtin-malloc -fno-builtin-realloc -fno-builtin-free

$(BUILD)/seed: bench/seed.c bench/bench.mk
	@mkdir -p $(BUILD)
	$(CC) $(SEED_CFLAGS) $(CFLAGS) -o $@ $< -pthread

# The seed comparison: the seed workload under glibc, smpalloc and every
# peer allocator smpbench finds, as a table on stdout.  Its prerequisites are
# named here, not through BENCH_BINS or TOOL_BINS: make expands a rule's
# prerequisites where it reads the rule, and a list that a later fragment
# adds to would be incomplete at that point (a fresh clone then ran smpbench
# without build/seed).
#
#   make bench BENCH_ARGS='--runs 3 --warmup 0'   a short run (any smpbench
#                                                 options; see smpbench(1))
BENCH_ARGS ?=
.PHONY: bench
bench: $(LIB_SO) $(BUILD)/smpbench $(BUILD)/seed
	$(BUILD)/smpbench $(BENCH_ARGS) -- $(BUILD)/seed

# The workload suite (bench/suite/, parameters in bench/suite/README.md):
# one small C program per allocation pattern, each built as
# $(BUILD)/suite/NAME from bench/suite/NAME.c (bench/suite/suite_common.c is
# #included by every one of them, it is not a program).
#
#   make bench-suite                      the table (glibc, smpalloc, peers)
#   make bench-suite SVG=build/suite.svg  ... and a bar chart
#   make bench-suite SUITE_ARGS='--time 4 --only larson,mleak'
#
# bench/suite/run.sh runs every workload through $(BUILD)/smpbench and reads
# back its --csv output; see `bash bench/suite/run.sh --help`.

SUITE_NAMES := glibc-simple glibc-thread larson xmalloc-test cache-scratch \
               cache-thrash alloc-test mstress mleak malloc-large realloc-grow \
               prodcons-rss rss-decay threads
SUITE_BINS  := $(addprefix $(BUILD)/suite/,$(SUITE_NAMES))
BENCH_BINS  += $(SUITE_BINS)

SUITE_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -pthread \
                -fno-builtin-malloc -fno-builtin-calloc -fno-builtin-realloc \
                -fno-builtin-free

$(BUILD)/suite/%: bench/suite/%.c bench/suite/suite_common.c bench/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SUITE_CFLAGS) -o $@ $< -pthread -lm

# A deliberately broken allocator (preloaded by tests/tools/t_bench_suite.sh to
# check that the workloads catch one); not a workload.
BENCH_BINS += $(BUILD)/suite/badmalloc.so

$(BUILD)/suite/badmalloc.so: bench/suite/badmalloc.c bench/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -fPIC -shared -o $@ $<

SVG ?=
SUITE_ARGS ?=

.PHONY: bench-suite suite-bins
suite-bins: $(SUITE_BINS) $(BUILD)/suite/badmalloc.so

bench-suite: lib $(BUILD)/smpbench $(SUITE_BINS)
	@bash bench/suite/run.sh --build $(BUILD) $(if $(SVG),--svg $(SVG)) $(SUITE_ARGS)

# The fast path: instructions per malloc/free pair on mixed sizes, under
# callgrind, for smpalloc and every allocator smpbench finds (bench/fastpath.c,
# bench/fastpath.sh; needs valgrind).
BENCH_BINS += $(BUILD)/fastpath

$(BUILD)/fastpath: bench/fastpath.c bench/bench.mk
	@mkdir -p $(BUILD)
	$(CC) $(SEED_CFLAGS) $(CFLAGS) -o $@ $<

.PHONY: bench-fastpath
bench-fastpath: $(LIB_SO) $(BUILD)/smpbench $(BUILD)/fastpath
	@bash bench/fastpath.sh --build $(BUILD)

# The shape sweep (bench/shapes/): a grid of replacement workloads - size
# ranges, live blocks, threads, how much of each block is written, how
# blocks die - under glibc, smpalloc and every peer found, flagged where
# smpalloc is outside the bounds (bench/shapes/run.sh --help).
#
#   make bench-shapes SHAPES_ARGS='--quick --only run/'
BENCH_BINS += $(BUILD)/shape

$(BUILD)/shape: bench/shapes/shape.c bench/suite/suite_common.c bench/bench.mk
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) $(SUITE_CFLAGS) -o $@ $< -pthread -lm

SHAPES_ARGS ?=
.PHONY: bench-shapes
bench-shapes: lib $(BUILD)/smpbench $(BUILD)/shape
	@bash bench/shapes/run.sh --build $(BUILD) $(SHAPES_ARGS)

# The published results, made by one command (bench/report/): the seed
# comparison, the workload suite, the fast path and the shape sweep, each
# with every peer found; writes docs/results.md (the machine, the date, the
# commit, every full table under the exact command that made it, and the
# data the summary is rendered from) and docs/results-{seed,suite}.svg,
# then renders the README's summary block from docs/results.md and splices
# it in between <!-- bench-report:begin --> and <!-- bench-report:end -->
# (it stops at once, before running anything, when they are missing).
# `bash bench/report/report.sh --help` for the options.
#
#   make bench-report                                 everything: ~45 min on 2
#                                                     cores (the shape sweep ~35)
#   make bench-report REPORT_ARGS='--quick'           short runs, to try it: ~10
#                                                     min (~1 with --skip shapes)
#   make bench-report REPORT_ARGS='--skip shapes,fastpath'
#   bash bench/report/render.sh --check               is the README's block
#                                                     what docs/results.md gives?
REPORT_ARGS ?=
.PHONY: bench-report
bench-report: $(LIB_SO) $(BUILD)/smpbench $(BUILD)/seed $(SUITE_BINS) $(BUILD)/fastpath $(BUILD)/shape
	@REPORT_CALL="make bench-report$(if $(strip $(REPORT_ARGS)), REPORT_ARGS='$(strip $(REPORT_ARGS))')" \
	  bash bench/report/report.sh --build $(BUILD) $(REPORT_ARGS)

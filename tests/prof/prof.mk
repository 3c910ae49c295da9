# prof fragment: the programs of the heap profiler's and guard pool's tests
# (see tests/tests.mk for test_prog and the ways).
#
#   prof_sites, prof_sites_static, prof_sites_fullstatic
#                      prof_sites.c (t_prof_sites, t_prof_threads,
#                      t_prof_launcher): three sites of known shares, a
#                      planted leak; threads, fork and a dump by signal.
#                      fullstatic: a -static program (the unwinder linked
#                      in, no loader)
#   prof_guard         prof_guard.c (t_prof_guard): planted memory bugs
#   prof_stripped      prof_stripped.c (t_prof_launcher): a static function's
#                      site, named after the program is stripped

TEST_CC_fullstatic   = $(CC) $(TEST_CFLAGS) -static
TEST_LIBS_fullstatic = $(LIB_A) -lpthread
TEST_DEPS_fullstatic = $(LIB_A)

$(call test_progs,prof_sites,plain static fullstatic,tests/prof/prof_sites.c,,-lpthread)
$(call test_prog,prof_guard,plain,tests/prof/prof_guard.c)
$(call test_prog,prof_stripped,plain,tests/prof/prof_stripped.c,-rdynamic -fno-toplevel-reorder)

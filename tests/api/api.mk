# api fragment: the programs of the API conformance and unit tests (see
# tests/tests.mk for test_prog, test_progs and the ways).
#
#   api, api_static, api_prefix
#                      api.c (t_api, t_static): the conformance suite with the
#                      libc names (glibc, LD_PRELOAD), linked with the archive,
#                      and with the smp_* names; check.h is its
#   static             static.c (t_static): malloc in a program linked with
#                      the archive is smpalloc's
#   internal           internal.c (t_internal): the class table and the
#                      block-start test, exhaustively; built with all of
#                      $(CORE_SRCS) for the internal header
#   options, options_static
#                      options.c (t_options): what each SMPALLOC_* option
#                      does; -fno-builtin-malloc/free so every call reaches
#                      the allocator
#   stress, stress_prefix
#                      stress.c: the multi-threaded stress test.  Not named
#                      after one test: t_stress_preload runs these two builds,
#                      and the sanitizer tests of tests/trust/ and t_real_gcc
#                      use the same source
#   stress_lifecycle, stress_lifecycle_static
#                      stress_lifecycle.c (t_stress_lifecycle): fork and
#                      thread exit while allocating

$(call test_progs,api,plain static prefix,tests/api/api.c,,-ldl,tests/api/check.h)
$(call test_prog,static,static,tests/api/static.c)
$(call test_prog,internal,core,tests/api/internal.c)
$(call test_progs,options,plain static,tests/api/options.c,-fno-builtin-malloc -fno-builtin-free,-ldl)
$(call test_progs,stress,plain prefix,tests/api/stress.c,,-lpthread -ldl)
$(call test_progs,stress_lifecycle,plain static,tests/api/stress_lifecycle.c,,-lpthread)

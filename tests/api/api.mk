# api fragment: the programs of the API conformance and unit tests (see
# tests/tests.mk for test_prog, test_progs and the ways).
#
#   api, api_static, api_prefix
#                      api.c (t_api, t_static): the conformance suite with the
#                      libc names (glibc, LD_PRELOAD), linked with the archive,
#                      and with the smp_* names; check.h is its
#   static_prove       static_prove.c (t_static): malloc in a program linked
#                      with the archive is smpalloc's
#   internal_check     internal_check.c (t_internal): the class table and the
#                      block-start test, exhaustively; built with all of
#                      $(CORE_SRCS) for the internal header
#   opt_prog, opt_prog_static
#                      opt_prog.c (t_options): what each SMPALLOC_* option
#                      does; -fno-builtin-malloc/free so every call reaches
#                      the allocator
#   stress, stress_prefix
#                      stress.c (t_stress_preload); the sanitizer tests of
#                      tests/trust/ and t_real_gcc use the same source
#   stress_lifecycle, stress_lifecycle_static
#                      stress_lifecycle.c (t_stress_lifecycle): fork and
#                      thread exit while allocating

$(call test_progs,api,plain static prefix,tests/api/api.c,,-ldl,tests/api/check.h)
$(call test_prog,static_prove,static,tests/api/static_prove.c)
$(call test_prog,internal_check,core,tests/api/internal_check.c)
$(call test_progs,opt_prog,plain static,tests/api/opt_prog.c,-fno-builtin-malloc -fno-builtin-free,-ldl)
$(call test_progs,stress,plain prefix,tests/api/stress.c,,-lpthread -ldl)
$(call test_progs,stress_lifecycle,plain static,tests/api/stress_lifecycle.c,,-lpthread)

# install fragment: `make install` / `make uninstall`.
#
#   make install [PREFIX=/usr/local] [DESTDIR=staging-root]
#                [BINDIR= LIBDIR= INCLUDEDIR= PKGCONFIGDIR= MANDIR=]
#
# Installs the shared library as libsmpalloc.so.$(VERSION) with the SONAME
# link $(SONAME) and the link libsmpalloc.so, the static library, the
# header, smpalloc.pc, the programs of $(TOOL_BINS) (smpbench, rebuilt as
# $(BUILD)/inst/smpbench to know $(LIBDIR): the installed one preloads the
# installed library), the launcher (tools/smpalloc, its library directory
# and version filled in) and the man pages smpalloc(1), smpbench(1) and
# smpalloc(3) (their @LIBDIR@-style placeholders filled in).  The paths
# written into files are the final ones, without $(DESTDIR).
# `make uninstall`, with the same variables, removes exactly those files
# (directories are left alone).

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR       ?= $(PREFIX)/share/man
INSTALL      ?= install

SO_REAL := libsmpalloc.so.$(VERSION)

# sed script for the @NAME@ placeholders of the launcher, smpalloc.pc and
# the man pages.
INSTALL_SUBST := -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
                 -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
                 -e 's|@VERSION@|$(VERSION)|g'

MAN_PAGES := docs/smpalloc.1 docs/smpbench.1 docs/smpalloc.3

# The installed smpbench: the build's, with LIBDIR compiled in as where
# libsmpalloc.so.0 is (the build tree's looks next to itself).  The stamp
# changes only when LIBDIR does, so a new LIBDIR rebuilds it.
INST_DIR := $(BUILD)/inst
.PHONY: FORCE
$(INST_DIR)/libdir: FORCE
	@mkdir -p $(INST_DIR)
	@echo '$(LIBDIR)' | cmp -s - $@ || echo '$(LIBDIR)' >$@

$(INST_DIR)/smpbench: $(SMPBENCH_SRCS) $(SMPBENCH_HDRS) $(INST_DIR)/libdir \
                      tools/tools.mk mk/install.mk
	$(CC) $(CFLAGS) $(SMPBENCH_CFLAGS) -DSMPBENCH_LIBDIR='"$(LIBDIR)"' \
	  -o $@ $(SMPBENCH_SRCS) -lm
INSTALL_TOOL_BINS := $(filter-out $(BUILD)/smpbench,$(TOOL_BINS)) \
                     $(if $(filter $(BUILD)/smpbench,$(TOOL_BINS)),$(INST_DIR)/smpbench)

# Installed files, relative to $(DESTDIR).
INSTALLED_FILES := $(LIBDIR)/$(SO_REAL) $(LIBDIR)/$(SONAME) $(LIBDIR)/libsmpalloc.so \
                   $(LIBDIR)/libsmpalloc.a $(INCLUDEDIR)/smpalloc.h \
                   $(PKGCONFIGDIR)/smpalloc.pc $(BINDIR)/smpalloc \
                   $(MANDIR)/man1/smpalloc.1 $(MANDIR)/man1/smpbench.1 \
                   $(MANDIR)/man3/smpalloc.3

.PHONY: install uninstall
install: $(LIB_SO) $(LIB_A) $(INSTALL_TOOL_BINS) tools/smpalloc mk/smpalloc.pc.in \
         include/smpalloc.h $(MAN_PAGES)
	$(INSTALL) -D -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/$(SO_REAL)
	ln -sf $(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SO_REAL) $(DESTDIR)$(LIBDIR)/libsmpalloc.so
	$(INSTALL) -D -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libsmpalloc.a
	$(INSTALL) -D -m 644 include/smpalloc.h $(DESTDIR)$(INCLUDEDIR)/smpalloc.h
	$(INSTALL) -d -m 755 $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	sed $(INSTALL_SUBST) mk/smpalloc.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/smpalloc.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/smpalloc.pc
	sed $(INSTALL_SUBST) tools/smpalloc >$(DESTDIR)$(BINDIR)/smpalloc
	chmod 755 $(DESTDIR)$(BINDIR)/smpalloc
	$(foreach t,$(INSTALL_TOOL_BINS),$(INSTALL) -D -m 755 $(t) $(DESTDIR)$(BINDIR)/$(notdir $(t)) &&) true
	$(foreach m,$(MAN_PAGES),$(INSTALL) -d -m 755 $(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m))) && \
	  sed $(INSTALL_SUBST) $(m) >$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)) && \
	  chmod 644 $(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)) &&) true

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES)) \
	      $(foreach t,$(TOOL_BINS),$(DESTDIR)$(BINDIR)/$(notdir $(t)))

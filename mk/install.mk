# install fragment: `make install` / `make uninstall`.
#
#   make install [PREFIX=/usr/local] [DESTDIR=staging-root]
#                [BINDIR= LIBDIR= INCLUDEDIR= PKGCONFIGDIR= MANDIR=]
#
# Installs the shared library as libsmpalloc.so.$(VERSION) with the SONAME
# link $(SONAME) and the link libsmpalloc.so, the static library, the
# header, smpalloc.pc, the programs of $(TOOL_BINS) (smpbench), the launcher
# (tools/smpalloc, its library directory and version filled in) and the man
# pages.  The paths written into smpalloc.pc and the launcher are the final
# ones, without $(DESTDIR).  `make uninstall`, with the same variables,
# removes exactly those files (directories are left alone).

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR       ?= $(PREFIX)/share/man
INSTALL      ?= install

SO_REAL := libsmpalloc.so.$(VERSION)

# sed script for the @NAME@ placeholders of the launcher and smpalloc.pc.
INSTALL_SUBST := -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
                 -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g'

# Installed files, relative to $(DESTDIR).
INSTALLED_FILES := $(LIBDIR)/$(SO_REAL) $(LIBDIR)/$(SONAME) $(LIBDIR)/libsmpalloc.so \
                   $(LIBDIR)/libsmpalloc.a $(INCLUDEDIR)/smpalloc.h \
                   $(PKGCONFIGDIR)/smpalloc.pc $(BINDIR)/smpalloc \
                   $(MANDIR)/man1/smpalloc.1 $(MANDIR)/man3/smpalloc.3

.PHONY: install uninstall
install: $(LIB_SO) $(LIB_A) $(TOOL_BINS) tools/smpalloc mk/smpalloc.pc.in \
         include/smpalloc.h docs/smpalloc.1 docs/smpalloc.3
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
	$(foreach t,$(TOOL_BINS),$(INSTALL) -D -m 755 $(t) $(DESTDIR)$(BINDIR)/$(notdir $(t)) &&) true
	$(INSTALL) -D -m 644 docs/smpalloc.1 $(DESTDIR)$(MANDIR)/man1/smpalloc.1
	$(INSTALL) -D -m 644 docs/smpalloc.3 $(DESTDIR)$(MANDIR)/man3/smpalloc.3

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES)) \
	      $(foreach t,$(TOOL_BINS),$(DESTDIR)$(BINDIR)/$(notdir $(t)))

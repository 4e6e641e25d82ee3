# ptlcc, the MPI compiler wrapper (man/man1/ptlcc.1), made from
# tools/ptlcc.in twice: tools/ptlcc compiles against the build tree (the
# README's `tools/ptlcc -o app app.c` before any install; the tests use
# it), tools/inst/ptlcc against the install paths, installed as ptlcc.
# libptlmpi sits in its own directory in the build tree, libptl in
# lib/.libs. The build tree's has no prefix PTLCC_PREFIX could move.
noinst_SCRIPTS += tools/ptlcc
bin_SCRIPTS += tools/inst/ptlcc
CLEANFILES += tools/ptlcc tools/inst/ptlcc
EXTRA_DIST += tools/ptlcc.in
dist_man_MANS += man/man1/ptlcc.1 man/man7/ptl-mpi.7
PTLCC_SED = sed -e 's|%CC%|$(CC)|g' -e 's|%PACKAGE_VERSION%|$(PACKAGE_VERSION)|g'
tools/ptlcc: $(top_srcdir)/tools/ptlcc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && $(PTLCC_SED) -e 's|%prefix%|(the build tree)|g' \
		-e 's|%includedir%|$(abs_top_srcdir)/include|g' -e 's|%libdir%|$(abs_top_builddir)/lib/mpi-shim/.libs|g' \
		-e 's|%ptllibdir%|$(abs_top_builddir)/lib/.libs|g' \
		$(top_srcdir)/tools/ptlcc.in > $@-t && chmod +x $@-t && mv $@-t $@
tools/inst/ptlcc: $(top_srcdir)/tools/ptlcc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools/inst && $(PTLCC_SED) -e 's|%prefix%|$(prefix)|g' \
		-e 's|%includedir%|$(includedir)|g' -e 's|%libdir%|$(libdir)|g' -e 's|%ptllibdir%||g' \
		$(top_srcdir)/tools/ptlcc.in > $@-t && chmod +x $@-t && mv $@-t $@

# tools/ptlcc: the MPI compiler wrapper, made from tools/ptlcc.in with the
# install paths (man/man1/ptlcc.1).
bin_SCRIPTS += tools/ptlcc
CLEANFILES += tools/ptlcc
EXTRA_DIST += tools/ptlcc.in
dist_man_MANS += man/man1/ptlcc.1 man/man7/ptl-mpi.7
tools/ptlcc: $(top_srcdir)/tools/ptlcc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && sed -e 's|%prefix%|$(prefix)|g' -e 's|%exec_prefix%|$(exec_prefix)|g' \
		-e 's|%includedir%|$(includedir)|g' -e 's|%libdir%|$(libdir)|g' -e 's|%CC%|$(CC)|g' \
		-e 's|%PACKAGE_VERSION%|$(PACKAGE_VERSION)|g' $(top_srcdir)/tools/ptlcc.in > $@-t && \
		chmod +x $@-t && mv $@-t $@

# tools/ptlrun: the single-host launcher. Included from tools/Makefile.inc.
bin_PROGRAMS += tools/ptlrun
tools_ptlrun_SOURCES = tools/ptlrun.c tools/ptlrun_stuck.c tools/ptlrun_stuck.h
tools_ptlrun_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/rt
tools_ptlrun_LDADD = librt_ptl.la
dist_man_MANS += man/man1/ptlrun.1

include tests/rt/Makefile.inc

# bench/shm_ring: raw shm NAL ping-pong and bandwidth (its sources compiled in).
noinst_PROGRAMS += bench/shm_ring
bench_shm_ring_SOURCES = bench/shm_ring.c tests/nal/shm_job.h \
	lib/nal/shm/shm.h lib/nal/shm/shm_seg.c lib/nal/shm/shm_nal.c \
	lib/nal/shm/shm_wake.c lib/nal/shm/shm_bulk.c lib/nal/nal_copy.c lib/rt/rt_proc.h lib/rt/rt_proc.c
bench_shm_ring_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib -I$(top_srcdir)/tests/nal
bench_shm_ring_LDADD = -lpthread -lrt

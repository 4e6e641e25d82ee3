/*
 * bench/bench_bw.h - how long a bandwidth trial of bench/mpi_pingpong.c
 * and bench/ptl_pingpong.c runs (both stream windows of `window` sends).
 */
#ifndef BENCH_BW_H
#define BENCH_BW_H

#include <stddef.h>

/* Windows per trial: 32 MiB a trial at least (a 4 KiB trial ~1 ms), and
 * no fewer than before (20 up to 64 KiB, 4 up to 1 MiB, 1 above). This
 * host's memory system changes speed in stretches of ~1 ms, and for ~1 ms
 * after a phase of ping-pongs: ptl's 4 KiB stream (300 trials of 1.3 MB
 * after 10,000 round trips) read ~23 GB/s for 15-30 trials in a row, then
 * ~31, and a plain two-process ring without any library has such
 * stretches too (at other levels): a trial of 20 windows (2.6 MB, 0.1 ms)
 * right after the latency rows measured that stretch, not the stream.
 * The benchmarks stream unmeasured first for the same reason. */
static inline int bench_bw_rounds(size_t len, size_t window)
{
	size_t per = (32u << 20) / (len * window);
	return per > 20 ? (int)per : len <= 65536 ? 20 : len <= 1048576 ? 4 : 1;
}

#endif

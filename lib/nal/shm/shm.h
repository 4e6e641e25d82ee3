/*
 * lib/nal/shm/shm.h - private to the shared-memory NAL (shm_*.c), its unit
 * tests (tests/nal/) and its raw benchmark (bench/shm_ring.c). lib/ptl sees
 * only nal_shm_ops through lib/nal/nal.h.
 *
 * One POSIX shared-memory segment per job and host, "/ptl.<jobid>.seg",
 * mode 0600, created and initialized by local rank 0 in open(), mapped by
 * the others in start(), unlinked by local rank 0 as soon as every local
 * rank has attached (so a SIGKILL later leaves nothing in /dev/shm).
 *
 * Segment layout (L = local_size, every block 128-byte aligned so no two
 * writers share a cache line or an adjacent-line prefetch pair):
 *
 *   [0]            struct shm_seg_hdr        magic, version, L, sizes, offsets
 *   rank_off       struct shm_rank[L]        per local rank: futex state word, pid and start
 *                                            time, CPU mask
 *   ring_off       L*(L-1) rings, ring_stride each; ring (src, dst) at
 *                  index shm_pair_index(src, dst, L) (none from a rank to
 *                  itself): struct shm_ring_ctl
 *                  (consumer's published head) then ring_size data bytes
 *   bounce_off     L*(L-1) bounce areas, bounce_stride each; area (req,
 *                  tgt) at shm_pair_index(req, tgt, L): SHM_NSLOT struct
 *                  shm_slot then
 *                  SHM_NSLOT*chunk data bytes, a piece (64 KiB at
 *                  most) a hand-over, each lap of the slots at the next
 *                  of a few parts of each (shm_slot_off). The path of
 *                  the bulk moves that do not go by CMA (shm_bulk.c
 *                  chooses per peer). A segment of up to 64 MiB has all its pages
 *                  from the start (shm_seg.c's SHM_SEG_RESERVE_MAX says
 *                  why); in a larger one an unused area costs no memory.
 *
 * Ring records (8-byte aligned, never split across the end of the ring):
 *   u64 word: (len << 40) | (ack << 9) | flags | type, stored last with
 *   release ordering; len bytes of message (hdr then payload) right after it.
 * A small record (SHM_SMALL_REC bytes or fewer, its word included) ends
 * at a cache line boundary, so the next record starts on a line: the
 * record of a put of up to 32 bytes to a process of our user and job (a
 * 24-byte header, lib/ptl/ptl_proto.h) is one line, which the consumer
 * fetches in one transfer, one of 33 to 96 bytes two and one of 97 to
 * 160 three. A larger one ends 8-byte aligned. A zero word follows every
 * record the producer publishes (the terminator), so the consumer polls
 * only the word at its own head, never a shared tail index: stored just
 * before the record word, or ahead, after an earlier record's word: at
 * the next line starts after a small record (shm_nal.c, ring_prezero),
 * and, outside a stream, where a next record as long as a larger one
 * would end (struct shm_tx's zone). A record that does not fit before the
 * end of the ring is preceded by a PAD record covering the rest of the
 * ring.
 *
 * ack is the writer's consumer head of the ring the other way (in 8-byte
 * units, modulo 2^31): what it has consumed of ours, free for the reader to
 * write again, known without a load of the other side's ring_ctl line.
 * SHM_RF_REWIND on a record: the next one starts at the beginning of the
 * ring (the rest of this lap is skipped, as if padded). A producer that
 * knows its ring drained (from an ack, or from ring_ctl when it streams:
 * the consumer stores its head there after every drain) rewinds once it
 * is SHM_HOT_BYTES in (SHM_HOT_BYTES_CROWDED where the ranks outnumber
 * their CPUs; shm_nal.c, ring_rewind_ok; not while the consumer is
 * behind: a burst would find no room after the rewind), so a ping-pong
 * reuses the same few KiB of ring, lines both L1 caches still
 * hold, rather than walking the whole ring through L2 (8-byte ping-pong of
 * the raw ring on this EPYC: 120 ns half round trip with a 16 KiB or
 * larger ring, 75-100 ns with 4-8 KiB).
 *
 * A record that starts a lap (its word in the lap's first line, a PAD
 * word at the lap's start before it or none) rewinds too, so a ping-pong
 * of a few KiB reuses one place rather than alternating between two:
 * the lines, read by the peer since, are still in the writer's cache,
 * which two places of 8 KiB each way no longer fit (raw two-copy 8 KiB
 * ping-pong on this EPYC, modes interleaved every 256 round trips:
 * 765 ns one way in one place, 1095 in two; the writer's copy 370 vs
 * 660 ns). The terminator of such a record would be its own word or its
 * PAD's: the consumer stores those zeros instead, the PAD's as it reads
 * it, the record's after delivering it, before it publishes a head past
 * them (shm_nal.c, ring_drain), so the producer, which writes there again
 * only after that head, never has a store of its overtaken.
 */
#ifndef PTL_SHM_H
#define PTL_SHM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nal/nal.h"

#define SHM_MAGIC 0x70746c73686d3031ULL /* "ptlshm01" */
#define SHM_VERSION 12u /* 2: SHM_REC_HELP (a version-1 peer would drop it and leave the mover waiting); 3: ack, SHM_RF_REWIND; 4: SHM_HELP_FAILED; 5: small records end on a line; 6: a lap's first record rewinds, its consumer zeroes its words; SHM_HELP_PICK; 7: struct shm_rank.start; 8: SHM_ST_ASYM (a version-7 sender would not wake a sleeper that has it); 9: small records up to three lines; 10: pieces walk their slots (shm_slot_off: a version-9 peer would look for them at the slot's start); 11: the header names how many parts they walk (slot_parts: builds with another SHM_WALK_BUDGET agree); 12: no ring or bounce area of a rank to itself (shm_pair_index) */
#define SHM_ALIGN 128u /* two cache lines: the adjacent-line prefetcher pairs them */

/* hdr + payload, when the ring is big enough (a quarter ring: rings of
 * 128 KiB and up, jobs of up to 20 local ranks). A 16 KiB payload with
 * libptl's 72-byte header (NAL_HDR_ROOM), where 16 KiB flat sent it by
 * the bulk path, a collective's quarters of a 64 KiB vector and the reply
 * to a 16 KiB rendezvous get among them: 2 ranks (far state,
 * bench/mpi_pingpong) streaming 16 KiB 5.7 - 5.9 -> 12.1 - 13.5 GB/s,
 * half round trip 3.0 - 3.2 -> 2.6 - 2.7 us; 4 ranks on 2 cores,
 * ring_bidir allreduce of 64 KiB 169 -> 101 - 110 us. */
#define SHM_MAX_INLINE (16384u + NAL_HDR_ROOM)
#define SHM_RING_MIN (16u << 10)
/* Ring sizes (shm_ring_size): SHM_RING_BUDGET shared by the pairs, from
 * SHM_RING_MIN to SHM_RING_MAX, and to SHM_RING_MAX_SMALL in a job of up
 * to SHM_RING_SMALL_JOB local ranks. Why the larger: a ring holds an MPI
 * stream's window, and 32 MPI_Isends of 8 KiB take 264,192 bytes of it
 * (each 8,192, a 40-byte header, the record's word and the 16 bytes that
 * put the payload on a line), past 256 KiB: the sender waited for its
 * receiver to free room before each window ended. bench/mpi_pingpong
 * b8192, 3 interleaved launches in the near state (core_rtt 108 - 121
 * ns): 17.4 - 18.4 GB/s with 256 KiB, 24.4 - 26.9 with 512 KiB (MPICH
 * 32.9 - 35.3); far state, 4 launches: level (9.0 - 10.8 and 9.2 -
 * 10.9; MPICH 12.2 - 12.9), where windows of 32 8 KiB MPI_Isends alone
 * read 10.0 - 10.2 and 11.6 - 11.7 (1 MiB: 11.2 - 11.7); latency,
 * streaming at other sizes and 2-rank allreduces level.
 * Why only there: the segment's pages are allocated up front (shm_seg.c),
 * so 512 KiB rings made 2 ranks' 5 MiB 6 and 4 ranks' 20 MiB 24 (two
 * 4-rank jobs still fit a container's 64 MiB /dev/shm), where at every
 * size they would have grown 8 ranks' 32 MiB to 48 (those segments held
 * each rank's ring to itself too; without them, 2026-12-07: 2 ranks 5
 * MiB with their 512 KiB slots, 4 ranks 18, 8 ranks 28). */
#define SHM_RING_MAX (256u << 10)
#define SHM_RING_MAX_SMALL (512u << 10)
#define SHM_RING_SMALL_JOB 4
#define SHM_RING_BUDGET (48u << 20) /* all rings of a host together */
#define SHM_RX_BUDGET 256 /* records ring_drain takes from one ring per progress() */
#define SHM_NSLOT 4u                /* bounce slots per (requester, target) */
/* The bytes one slot hand-over carries: at most SHM_PIECE, less than a
 * slot holds when the slots are large, so that the two copies overlap
 * (the consumer empties one piece while the producer fills the next)
 * within all but the shortest moves. 2 pinned ranks, 6 interleaved
 * launches, medians, 64 KiB pieces vs whole 256 KiB slots: 256 KiB half
 * round trip 5.60 vs 7.39 us, 1 MiB 28.6 vs 29.2, 1 MiB streaming 55.2
 * vs 49.0 GB/s, 2-rank MPI_Allreduce 256 KiB 21.3 vs 29.7 us (a quarter
 * of the move, 64 KiB to 256 KiB pieces, did no better). Both sides
 * compute it the same way: the READ target fills by it, the requester
 * counts its chunks by it. */
#define SHM_PIECE (64u << 10)
static inline size_t shm_piece(size_t chunk)
{
	return chunk < SHM_PIECE ? chunk : SHM_PIECE;
}
/* Offset of piece number cur in an area's data: in slot cur % SHM_NSLOT,
 * at the next of the slot's first `parts` piece-sized parts each lap
 * (shm_bulk.c says why); parts from shm_slot_parts, within the bytes the
 * areas of a segment (a job's ranks on one host) may walk together
 * (SHM_WALK_BUDGET), chosen by the segment's creator and read by every
 * rank from the header. */
#define SHM_WALK_BUDGET (8u << 20)
/* Ordered pairs of a segment's L ranks, each a ring and a bounce area:
 * what the budgets above are shared among (a lone rank's, which has
 * neither, as one pair's). */
static inline uint64_t shm_pairs(uint32_t L)
{
	return (uint64_t)L * (L > 1 ? L - 1 : 1);
}
/* The index of ordered pair (a, b), a != b, among a segment's L*(L-1):
 * a's peers in rank order, a left out. A rank's messages and moves to
 * itself never touch the segment (libptl's self NAL; shm_bulk.c copies
 * them), so it holds no ring or area of a rank to itself: they had been
 * 5 MiB of a 2-rank segment's 10, reserved up front like the rest. */
static inline uint64_t shm_pair_index(uint32_t a, uint32_t b, uint32_t L)
{
	return (uint64_t)a * (L - 1) + (b < a ? b : b - 1);
}
size_t shm_slot_parts(uint32_t L, size_t chunk);
size_t shm_slot_off(size_t chunk, size_t parts, uint64_t cur);
/* Bounced moves of one op a requester may have asked a peer to serve at
 * once (shm_bulk.c's rq_send says why more than one): the target's FIFO
 * of them (struct shm_bpeer's sv_q) holds this many. */
#define SHM_SV_QUEUE 4u
#define SHM_CHUNK_MIN (16u << 10)
/* A slot's bytes (shm_chunk_size): the bounce budget shared by the pairs,
 * up to SHM_CHUNK_PLAIN, and past it to SHM_CHUNK_MAX only where the
 * pieces then walk more parts (2 ranks: eight parts of 512 KiB slots, 2
 * MiB an area, where four had walked 1 MiB, a core's whole L2 on the Zen
 * 4 guest, and the consumer still held the bytes the producer came back
 * to: 2-rank MPI_Allreduce 32 KiB 6.24 -> 4.52 us, half round trip 32
 * KiB 4.49 -> 2.88, 1 and 4 MiB even; doc/bench-notes.md, 2026-12-07,
 * has the A/B and 1 MiB slots', worse at 1 - 4 MiB). A larger slot whose
 * walk stays the same would only hold bytes no piece reaches. */
#define SHM_CHUNK_PLAIN (256u << 10)
#define SHM_CHUNK_MAX (512u << 10)
#define SHM_BOUNCE_BUDGET (16u << 20)
#define SHM_DEAD_NS 1000000000LL    /* a peer stuck this long gets its pid checked */

/* Record types (low byte of the record word; 0 means "nothing yet"), flags
 * and the ack field above them. */
#define SHM_REC_MSG 1u
#define SHM_REC_PAD 2u
#define SHM_REC_BULK 3u /* a bulk request of the bounce protocol */
#define SHM_REC_HELP 4u /* "copy this part of my CMA move yourself" (struct shm_help_req) */
#define SHM_REC_TYPE 0xffu
#define SHM_RF_REWIND 0x100u /* the next record starts at the ring's beginning */
#define SHM_ACK_SHIFT 9
#define SHM_ACK_MASK ((1ull << 31) - 1) /* 8-byte units: wraps after 16 GiB sent (ring_take_ack) */
#define SHM_LEN_SHIFT 40                 /* records and PADs up to 16 MiB */

/* A stream (SHM_TX_STREAM_SENDS sends or more since this rank last
 * delivered a record from any peer) of records past SHM_SMALL_REC (those
 * zero lines ahead: ring_prezero) and up to SHM_TX_PREFETCHW_MAX bytes:
 * after each, the producer asks for the lines the next one of that size
 * will take past the line it starts in (where the consumer polls), to
 * write (prefetchw), so that they come over from the consumer's cache,
 * which read them a lap before, while the MPI layer readies that send,
 * rather than during its copy: a send waited for its stores to drain
 * (shm_wake_peer's fence, which a registered sender to a registered
 * peer no longer makes: shm_wake.c), 80% of shm_send's time in a 256 B
 * stream. Not after a rewind (the next record goes to the lap's start, where the
 * consumer may still read this one) nor past the free room (lines of
 * records the consumer has yet to read). 2 ranks, far state,
 * bench/mpi_pingpong, 3 interleaved rounds: streaming 256 B 0.707 -
 * 0.713 -> 0.970 - 1.104 GB/s (MPICH 0.78 - 0.80), 512 B 1.58 - 1.60 ->
 * 1.94 - 2.06, 1 KiB 2.19 - 2.41 -> 3.12 - 3.26 (MPICH 2.44 - 2.56), 2
 * KiB level; half round trips (which never prefetch: 256 B 0.500 - 0.508
 * against 0.513 - 0.515 us, code layout or noise) and 2-rank allreduces
 * level. Not after every send: with the peer's answers between (a
 * ping-pong, an exchange) 256 B and 1 KiB half round trips were 5 - 13%
 * longer and allreduces of 256 B - 1 KiB 8 - 10% (the consumer was
 * reading our last record meanwhile); counted over all peers, so a
 * one-way ring (sending to one, hearing from another) is no stream; not
 * for records past 2 KiB: 4 and 8 KiB streams read half as fast (the
 * prefetches met the copy). */
#define SHM_TX_STREAM_SENDS 4u
#define SHM_TX_PREFETCHW_MAX 2048u

/* A producer that knows the consumer has caught up rewinds once its
 * records reach this far into the ring (see SHM_RF_REWIND). */
#define SHM_HOT_BYTES 4096u

/* ... and this far where the local ranks outnumber their CPUs (struct
 * nal's hot_bytes, learned when a send first finds a ring full): room
 * for three of the largest inline records. After a rewind the producer
 * has only the room the consumer read of the lap before, until the
 * consumer reads the record that rewound: crowded, the consumer, caught
 * up when the producer looked, may lose its core for a switch or more at
 * any time, and a producer with a few sends to make found the ring full
 * after 4 KiB of them (4 ranks on 2 cores, a 1 KiB shift of MPI_Isends:
 * ~400 full rings in 4,200 calls) and waited for a turn of the
 * consumer's. 4 ranks bound 2 to a core, near state, 9 interleaved
 * launches of mpi_allreduce's rows, medians: tree 4 KiB 12.0 -> 9.7 us,
 * 32 KiB 18.5 -> 16.1; halving-doubling 4 KiB 10.9 -> 9.9, 32 KiB 28.3
 * -> 23.4; ring 4 KiB 10.6 -> 10.0; but the ring algorithms' long rows
 * slower (ring 256 KiB 95 -> 99, 1 MiB 356 -> 371, ring_bidir 1 MiB 340
 * -> 357), the rest within 2%; MPI_Allreduce's own picks, 5 launches:
 * 32 KiB 18.6 -> 17.5, 4 KiB 5.1 -> 5.0, 8 B-1 MiB otherwise within 2%.
 * Widening only the rings that filled so, each to twice its window at a
 * time (5 of those launches), lost 1-4% on those rows and kept about
 * half the gains. */
#define SHM_HOT_BYTES_CROWDED (64u << 10)

/* A record of at most SHM_SMALL_REC bytes, its word included, ends at a
 * cache line boundary (SHM_LINE): the next record starts on a line. The
 * producer zeroes the line starts ahead where a next one ends (shm_nal.c,
 * ring_prezero), so such a record stores to its own lines only. Larger
 * records end 8-byte aligned.
 *
 * Three lines, not two: a 128-byte MPI message (a 24-byte header: a
 * 160-byte record) packed 8-byte aligned ended on a line every other
 * time, its terminator then in a line of its own stored before the word,
 * which waited for the consumer's copy of that line to go. 2 ranks, near
 * state, 12 interleaved launch pairs of bench/mpi_pingpong's rows (with
 * struct shm_tx's zone): half round trip 128 B 0.223 -> 0.209 us, 160 B
 * 0.217 -> 0.206; streaming 128 B 1.03 -> 0.98 GB/s (a line more a
 * record), 256 B and 1 KiB level. */
#define SHM_LINE 64u
#define SHM_SMALL_REC 192u
_Static_assert(SHM_SMALL_REC % SHM_LINE == 0, "ring_prezero zeroes line starts");

/* A payload at least this long starts on a cache line in the ring (shm_ring_put). */
#define SHM_PAYLOAD_ALIGN 256u

/* A payload at least SHM_STREAM_MIN bytes long, sent while the consumer
 * is SHM_STREAM_BEHIND bytes or more behind (as far as the producer
 * knows: head_cache), is a streamed send: it goes into the ring by plain
 * stores or by non-temporal ones (shm_nt_copy), whichever the
 * ring's struct shm_sc measured faster (shm_nal.c says why).
 *
 * Two 4 KiB records behind, not four (16 KiB): with four, a sender whose
 * consumer kept within three records copied by plain stores whatever
 * the pick, and those copies (taking each line back from the consumer's
 * cache) slowed it enough that the consumer kept up: a launch that fell
 * into that stayed there. MPI b4096 (32-deep windows of MPI_Isend, Zen 4
 * guest, 40 interleaved launches of `mpi_pingpong 40 sizes b4096 b8192`):
 * a launch streamed 1,600-4,500 of its ~12,800 sends at 16 KiB, 11,900-
 * 12,200 at 8 KiB; median 7.21 -> 9.66 GB/s (per-launch ratio 1.31,
 * MPICH 8.33); b8192 11.2 -> 11.9; half round trips (the consumer never
 * behind) unchanged. 4 KiB behind read the same as 8 (9.84 vs 10.02). */
#define SHM_STREAM_MIN 2048u
#define SHM_STREAM_BEHIND (8u << 10)

/* The streamed copy's chooser (shm_sc_note): the methods, the streamed
 * sends a run takes (its cost: their cycles over the ring bytes sent,
 * waits included), the runs a method's estimate is the lowest of (and a
 * warm-up or a probe takes in a row, unless its first is dear:
 * shm_nal.c's sc_dear), the most runs by the pick between two probes of
 * the other, the fewest (after a switch), and the gap (TSC cycles, ~0.3
 * ms) after which the sender was idle, not streaming: that interval is
 * not counted. */
#define SHM_SC_PLAIN 0
#define SHM_SC_NT 1
#define SHM_SC_RUN 32
#define SHM_SC_HIST 3
#define SHM_SC_REPROBE 256
#define SHM_SC_CONFIRM 8
#define SHM_SC_SETTLE 32 /* the first after the warm-up (its runs are the noisiest) */
#define SHM_SC_GAP (1u << 20)
/* Streamed sends before the warm-up's first (the default's, uncounted):
 * a stream's first ring laps run cold, every method alike (an MPI 4 KiB
 * stream after a phase of ping-pongs: its first 160 sends 6 GB/s, the
 * next 20, then 28-31, near state), and warm-up runs taken there chose
 * by noise: plain runs 313-380 cycles per KiB against NT's 253-392 picked
 * NT, whose steady cost was 130 against plain's 70, and the stream ran
 * by NT until the first probe 32 runs later (bench/mpi_pingpong's 4 KiB
 * row, right after its latency rows: 13-15 GB/s against MPICH's 24-31).
 * 256 sends of 4 KiB are two laps of a 2-rank job's ring. */
#define SHM_SC_COLD 256

struct shm_sc {
	uint64_t t_last;     /* TSC at the last streamed send's copy, 0: none since a gap */
	uint64_t run_cyc;    /* the current run's cycles so far */
	uint64_t run_bytes;  /* and the bytes they streamed */
	uint64_t last_pos;   /* the ring tail before the last streamed send, less skipped */
	uint64_t skipped;    /* ring bytes the tail jumped over (SHM_RF_REWIND): none sent */
	uint32_t hist[2][SHM_SC_HIST]; /* [method]: latest run costs, cycles per KiB, a ring */
	uint32_t est[2];     /* [method]: the lowest of them, once SHM_SC_HIST are in */
	uint32_t since;      /* runs by the pick since the last probe */
	uint32_t every;      /* runs by the pick between probes: SHM_SC_CONFIRM doubling to SHM_SC_REPROBE */
	uint32_t switches;   /* times the pick changed after the warm-up */
	uint32_t runs[2];    /* [method]: runs it took, warm-up and probes included (PTL_SHM_BULK_REPORT) */
	uint16_t n;          /* intervals in the current run */
	uint16_t cold;       /* streamed sends so far, up to SHM_SC_COLD */
	uint8_t nhist[2];    /* [method]: runs in hist, saturating */
	uint8_t cur;         /* SHM_SC_*: the method of this run */
	uint8_t pick;        /* the method in use once ready */
	uint8_t ready;       /* warmed up */
	uint8_t left;        /* runs of cur still to take (a warm-up's, a probe's) */
	uint8_t skip;        /* the next interval follows a change of method: not counted */
};

/* len bytes from src to dst by non-temporal stores (whole lines; an
 * unaligned head, a tail and copies under 1 KiB by memcpy), then an
 * sfence: shm_bulk.c. */
void shm_nt_copy(void *dst, const void *src, size_t len);

void shm_sc_init(struct shm_sc *c, int pick, int ready);
void shm_sc_note(struct shm_sc *c, uint64_t now, uint64_t pos);

/* How bulk moves go (struct nal.bulk_mode, shm_bulk.c): each by the
 * method measured faster with its peer and at its size (the default, and
 * with PTL_SHM_CMA=0: struct nal.cma is 0, the chooser picks between plain
 * and non-temporal stores), always by CMA (PTL_SHM_CMA=1; to a peer that
 * refused CMA bounced by plain stores), or, unchosen where the local
 * ranks outnumber the CPUs they may use (unless PTL_SHM_CMA=1), bounced by
 * plain stores (CROWDED). CMA refused by the OS (EPERM) ends CMA with that
 * peer (struct shm_bpeer.cma_refused), whatever the mode. */
#define SHM_BULK_AUTO 1
#define SHM_BULK_CMA 2
#define SHM_BULK_CROWDED 4

/* The methods, as the chooser (struct shm_choice) indexes them: through
 * the bounce area, one CMA copy, or through the bounce area with the
 * producer's copy into the slots by non-temporal stores (shm_bulk.c's
 * shm_nt_copy says when that wins). */
#define SHM_M_BOUNCE 0
#define SHM_M_CMA 1
#define SHM_M_NT 2
#define SHM_M_COUNT 3

/* The chooser (shm_bulk.c says why these figures): the moves a warm-up
 * and every probe take in a row, the samples kept per method (as many:
 * a method's estimate is the lowest of its latest SHM_CH_HIST costs, a
 * probe's the lowest of its own moves, so the two are alike; moves run
 * back to back each cost their run's mean, struct shm_run), moves by
 * the pick between two probes of another method (after the warm-up each
 * other one sooner, and after a switch the old pick: SHM_CH_CONFIRM apart), and the size classes, each chosen for on its own
 * (class k: moves shorter than SHM_CH_CLASS0 << k, the last unbounded:
 * 2x wide to 2 MiB; the smallest bulk move is just over 16 KiB).
 * Narrow because a cost per byte hides a move's fixed cost: with four classes 4x wide
 * (0-64 KiB the first), alternating 16 KiB and 64 KiB moves took the
 * method wrong for each 95% of the time in hR's simulation (1.55x the
 * best); eight cost ~1 KiB of struct shm_choice per peer. */
#define SHM_CH_WIN 4
#define SHM_CH_HIST SHM_CH_WIN /* samples kept per method: the estimate is their lowest */
#define SHM_CH_REPROBE 512
#define SHM_CH_CONFIRM 16 /* a warm-up or a switch is checked by probes this many moves apart */
#define SHM_CH_CLASSES 8
#define SHM_CH_CLASS0 (32u << 10)
/* The pair's one choice (shm_bulk.c): the leader's word again every this
 * many of its moves in a class, unchanged or not; the other follows it
 * for this many of its own. */
#define SHM_CH_TELL_EVERY 16
#define SHM_CH_QUIET 64

/* The bulk method for one local peer and size class, chosen by the moves'
 * measured cost (shm_choice_take, shm_choice_record). */
struct shm_choice {
	uint32_t win[SHM_M_COUNT][SHM_CH_HIST]; /* [method]: latest costs, fs per byte, a ring */
	uint32_t est[SHM_M_COUNT];             /* [method]: their lowest (fs per byte), kept by shm_choice_record */
	uint32_t nwin[SHM_M_COUNT];            /* [method]: samples taken, saturating */
	uint32_t since;              /* moves by the pick since the last probe */
	uint32_t switches;           /* times pick changed after the warm-up */
	uint8_t ready;               /* warmed up: pick holds */
	uint8_t pick;                /* SHM_M_*: the method in use */
	uint8_t mask;                /* 1 << SHM_M_*: the methods permitted (the last take's) */
	uint8_t burst;               /* moves of the current probe still to take */
	uint8_t probe;               /* the method the current or last probe tries */
	uint8_t next_probe;          /* the method the next periodic probe tries */
	uint8_t fresh;               /* samples of probe since the probe began */
	uint8_t early;               /* 1 << SHM_M_*: the methods owed a probe SHM_CH_CONFIRM moves
				      * apart (after the warm-up, after a switch; shm_bulk.c, ch_owed) */
	uint8_t warm[SHM_M_COUNT];   /* [method]: warm-up moves taken */
	uint8_t told;                /* the pair's leader: the method it last told the other; the
				      * other: the method it was told (shm_bulk.c, ch_take) */
	uint8_t word;                /* the leader: its moves since its last word; the other: its
				      * moves the last word it heard still leads */
	uint8_t waited;              /* moves that went a queued move's way in a row while a
				      * CMA probe was due (shm_choice_defer) */
};

/* Which method of those in mask (1 << SHM_M_*) the next move of c's class
 * takes; counts it as taken. */
int shm_choice_take(struct shm_choice *c, unsigned mask);
/* The method the next take would return, not counted; -1 where take
 * decides as it goes (the warm-up, a pick no longer in mask). */
int shm_choice_next(const struct shm_choice *c, unsigned mask);
/* The next move went another way than the CMA that take would have
 * returned (behind a queued move, shm_bulk.c's ch_take): a CMA probe due
 * waits for a take, and is dropped after SHM_CH_CONFIRM such moves. */
void shm_choice_defer(struct shm_choice *c);
/* A move of len bytes by method m took ns: updates the estimates, the
 * pick and whether a probe comes next. */
void shm_choice_record(struct shm_choice *c, int m, size_t len, uint64_t ns);
/* Method m's current estimate, ps per byte (0: none; kept in fs: est[m]): the lowest
 * of its last SHM_CH_HIST costs. */
uint32_t shm_choice_est(const struct shm_choice *c, int m);
/* The size class of a move of len bytes. */
int shm_choice_class(size_t len);
/* Its sizes, for reports: "64K-128K" ("?" out of range). */
const char *shm_choice_class_name(int k);

/* Timed moves that ran back to back (each asked before the one ahead of
 * it ended), of one method and size class: their costs go to the
 * chooser together, each move at the run's mean (shm_bulk.c's
 * rq_time_done says why). */
struct shm_run {
	unsigned n;                  /* moves in it, up to SHM_CH_WIN */
	int m;                       /* their method */
	uint64_t ns;                 /* their time in all */
	size_t len[SHM_CH_WIN];      /* each one's length */
	uint8_t joined[SHM_CH_WIN];  /* it went a queued move's way: its cost is only sampled */
};
/* Whether a move of method m and len bytes ends run r rather than
 * joining it (another method or size class). */
int shm_run_breaks(const struct shm_run *r, int m, size_t len);
/* Adds the move to r (its time ns); whether r is full now. The caller
 * empties r first where shm_run_breaks says so, and once it is full. */
int shm_run_add(struct shm_run *r, int m, size_t len, int joined, uint64_t ns);
/* The cost of r's move k: the run's time shared among its moves by bytes. */
uint64_t shm_run_ns(const struct shm_run *r, unsigned k);

/* CMA moves at least this long are split with the peer (shm_bulk.c).
 * On the Zen 4 guest (vCPUs far apart), PTL_SHM_CMA=1, 2 pinned ranks,
 * bench/mpi_pingpong.c, 4 interleaved launches, medians, split from 64 KiB
 * vs from 128 KiB vs never: half round trip 64 KiB 6.3 vs 8.7 vs 8.3 us
 * (MPICH 6.9), 256 KiB 14.9 (from 64 KiB or 128) vs 43, 1 MiB 48 vs 48
 * vs 150; split from 32 KiB, 32 KiB took 5.1 against 4.8 unsplit, from
 * 16 KiB, 16 KiB 4.4 against 3.4: the peer's answer costs more than half
 * a short copy. Streaming rates the same within noise. */
#define SHM_SPLIT_MIN (64u << 10)

/* Bits of struct shm_rank.state, the futex word. */
#define SHM_ST_POLLING 1u  /* a thread of this rank polls: senders never wake it */
#define SHM_ST_SLEEPING 2u /* in sleep(): the one sender that sees exactly this wakes it */
#define SHM_ST_KICKED 4u   /* kick() happened: the current or next sleep() returns */
#define SHM_ST_ASYM 8u     /* set once, at attach: this rank's sleep() fences the senders
			    * for them (membarrier), so a registered sender needs none */

struct shm_seg_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t local_size;
	uint64_t seg_len;
	uint64_t jobid;
	uint64_t ring_size;   /* data bytes of one ring, a power of two */
	uint64_t ring_stride; /* bytes from one ring to the next */
	uint64_t chunk;       /* bytes of one bounce slot */
	uint64_t slot_parts;  /* parts of each slot the pieces walk (shm_slot_parts) */
	uint64_t bounce_stride;
	uint64_t rank_off, ring_off, bounce_off;
	_Alignas(SHM_ALIGN) _Atomic uint32_t initialized; /* 1 once all of the above is valid (release) */
	_Atomic uint32_t attached;                        /* local ranks that mapped the segment */
};

#define SHM_CPU_WORDS 16 /* u64 words of a published CPU mask: 1024 CPUs, a cpu_set_t */
struct shm_rank {
	_Alignas(SHM_ALIGN) _Atomic uint32_t state; /* SHM_ST_*, futex word (shared futex) */
	/* Who the rank is, for shm_peer_check, stored at attach (pid by a
	 * release store after start). A pid alone is not: once the rank
	 * dies the kernel may give it to any new process, which would keep
	 * a dead peer alive for good. start is the process's start time
	 * (field 22 of /proc/<pid>/stat, clock ticks since boot), which no
	 * later process with that pid shares; 0: the rank could not read
	 * its own entry (no /proc, or not its pid namespace's), so only
	 * kill(0) tells (lib/rt/rt_proc.h, rt_proc_is). */
	_Atomic int32_t pid;
	_Atomic uint64_t start;
	/* The CPUs the rank may run on (its affinity at attach), published
	 * (release) by ncpu, their count (0: not yet): the host's ranks
	 * together may use the union (shm_bulk_crowded). */
	_Atomic uint32_t ncpu;
	uint64_t cpus[SHM_CPU_WORDS];
};

struct shm_ring_ctl {
	_Alignas(SHM_ALIGN) _Atomic uint64_t head; /* consumer's position, stored after each drain */
};

struct shm_slot {
	_Alignas(SHM_ALIGN) _Atomic uint32_t full; /* 1: data valid, owned by the consumer */
	uint32_t len;
};

/* Body of a SHM_REC_BULK record: "serve this move through our bounce area". */
#define SHM_BREQ_NT 1u
struct shm_bulk_req {
	uint32_t op; /* enum nal_bulk_op, from the requester's view */
	uint32_t flags; /* SHM_BREQ_NT: a READ's target fills the slots by non-temporal stores */
	uint64_t raddr;
	uint64_t len;
};

/* Body of a SHM_REC_HELP record: the sender (the target of a move) asks
 * the receiver to copy part of the move by CMA on its own CPU, then to
 * store 1 (done) or 2 (failed) at done_addr in the sender's memory. A
 * receiver whose CMA is refused cannot store it: it answers by a
 * SHM_REC_HELP of op SHM_HELP_FAILED and the same done_addr instead. */
#define SHM_HELP_FAILED 7u /* op of an answer: "I could not, not even store done_addr by CMA" */
#define SHM_HELP_PICK 8u /* op of a pair leader's word: "my moves of size class len now go by method own_addr" (shm_bulk.c) */
struct shm_help_req {
	uint32_t op;    /* NAL_BULK_READ: read [their_addr) into our [own_addr); WRITE: the reverse */
	uint32_t pad;
	uint64_t their_addr; /* in the sender's memory */
	uint64_t own_addr;   /* in the receiver's memory */
	uint64_t len;
	uint64_t done_addr;  /* in the sender's memory */
};

/* Producer side of the ring to one local peer. */
struct shm_tx {
	uint8_t *data;
	struct shm_ring_ctl *ctl;
	uint64_t tail;       /* next byte we write (monotonic) */
	uint64_t head_cache; /* latest consumer head we know (ctl or an ack): free space is at least this */
	uint64_t full_since; /* ns of the first EAGAIN of the current run, 0: none */
	/* EAGAINs of the current run. Atomic (relaxed: plain moves) because
	 * shm_pending reads it from a sleeping thread without ptl's lock. */
	_Atomic uint32_t full_count;
	/* The ring_ctl head shm_pending last reported: written only there,
	 * so the sleeper never stores into head_cache, which the sender (under
	 * ptl's lock) owns. */
	uint64_t sleep_seen;
	/* Our tail when a drain of the ring from this peer found it empty
	 * (ring_drain updates it once a quarter ring): the acks of records
	 * there since are no older than this less a ring (ring_take_ack). */
	uint64_t ack_floor;
	/* Every line start in (tail, zend] holds a zero stored after an
	 * earlier record's word (ring_prezero): a record that ends there
	 * has its terminator in place already. */
	uint64_t zend;
	/* Where a record as long as the last one that stored a zone (one of
	 * SHM_SMALL_REC - SHM_ZONE_MAX bytes outside a stream, with room:
	 * ring_put) would put its terminator, sent next: a zero stored there
	 * after that record's word, in place while the tail has not passed
	 * it (nothing stores past the tail but zeros). 0: none. */
	uint64_t zone;
	/* The latest head an ack told us (ring_ctl's do not count), and
	 * whether it was our tail when we sent the last record: a lap's
	 * first record rewinds only when both were (ring_rewind_ok). */
	uint64_t ack_head;
	int acked_prev;
	struct shm_sc sc; /* streamed sends: plain or non-temporal stores */
};

/* Consumer side of the ring from one local peer. */
struct shm_rx {
	uint8_t *data;
	struct shm_ring_ctl *ctl;
	uint64_t head;      /* next record we read (monotonic) */
	uint64_t stored;    /* last head stored in ctl */
	uint64_t woken;     /* head when we last woke the producer (shm_wake_peer) */
	/* Polling ahead (shm_nal.c, rings_ready): the lines past the head's
	 * that a record as long as the last one read would take (0 past
	 * SHM_RX_POLL_AHEAD), and what a poll asks for: pf_lines once we
	 * have sent the peer something since that record's upcall returned
	 * (ring_put), else 0. */
	uint32_t pf_lines;
	uint32_t pf_now;
	/* We sent the peer something since the last record we read from it
	 * (ring_drain's stop after a record that ended on a line). */
	uint32_t replied;
};

/* A bulk move through the bounce area that we asked a peer to serve. */
struct shm_bop {
	struct shm_bop *next;
	enum nal_bulk_op op;
	uint64_t raddr;
	size_t len;
	size_t nchunk, prod, cons; /* chunks: total, produced, consumed */
	struct iovec *iov;  /* our copy of the caller's iovecs (room for cap), cursor below */
	int niov, iov_i, cap;
	size_t iov_off;
	void *cookie;
	uint64_t stall_since;
	uint32_t stall_count;
	int timed;          /* its cost goes to the chooser */
	int joined;         /* it went the queued move's way (ch_take): its cost is only sampled */
	/* SHM_M_BOUNCE or SHM_M_NT; SHM_M_CMA: a CMA move queued behind a
	 * split move in flight or another queued CMA move, done from
	 * progress() at its turn (shm_bulk.c, cma_run); no request of it or
	 * of the moves behind it goes before */
	int method;
	/* timed moves: ns when its first piece went (WRITE) or its request
	 * (READ), and when we saw it finish (rq_time_done says why both) */
	uint64_t t0, t_done;
};

/* Our bounce traffic with one local peer. */
struct shm_bpeer {
	/* as requester (our area (me, peer)) */
	struct shm_slot *rq_slot;
	uint8_t *rq_data;
	uint64_t rq_cur;    /* chunk counter of the area, as the requester sees it */
	/* WRITE moves: the oldest slot we filled and have not seen the
	 * target free (rq_free <= rq_cur; equal while READ moves run) */
	uint64_t rq_free;
	/* q: the moves in order, the oldest first; the first nsent of them
	 * went to the target (their SHM_REC_BULK is out), unsent is the
	 * next to go (NULL: none) */
	struct shm_bop *q, **qtail, *unsent;
	unsigned nsent;
	uint64_t t_done;    /* when we saw the last timed moves finish */
	struct shm_run run; /* timed moves that ran back to back, not yet sampled */
	int qmethod;        /* SHM_M_*: the last queued move's (while q; SHM_M_CMA: a queued CMA move) */
	/* as target (the peer's area (peer, me)) */
	struct shm_slot *sv_slot;
	uint8_t *sv_data;
	uint64_t sv_cur;
	/* the requests asked of us, in order: sv_n from sv_q[sv_head];
	 * sv_off is the first's progress */
	struct shm_sreq {
		enum nal_bulk_op op;
		int nt;     /* fill by non-temporal stores (SHM_BREQ_NT) */
		uint64_t raddr;
		size_t len;
	} sv_q[SHM_SV_QUEUE];
	unsigned sv_head, sv_n;
	size_t sv_off;
	uint64_t sv_stall_since;
	uint32_t sv_stall_count;
	/* a CMA move we split with the peer (one at a time): the part it
	 * copies, to redo ourselves if it cannot, and its answer. While it
	 * is active every move in q was asked after it, and none has gone
	 * (nsent 0): q waits for it (shm_bulk.c, rq_work) */
	int hp_active;
	_Atomic uint64_t hp_done; /* stored by the peer through CMA: 0, 1 done, 2 failed */
	int hp_status;            /* our own part: 0 or NAL_E* */
	enum nal_bulk_op hp_op;
	struct iovec hp_iov;      /* our memory of the peer's part */
	uint64_t hp_raddr;
	void *hp_cookie;
	uint64_t hp_stall_since;
	uint32_t hp_stall_count;
	uint64_t hp_t0;           /* ns when the split move began (0: not timed) */
	size_t hp_len;            /* its whole length */
	/* our part to bounce once the peer has answered (CMA refused us
	 * mid-move: the bytes from raddr, len hp_redo->len; it holds all the
	 * move's iovecs, so it can take the peer's part too), else NULL */
	struct shm_bop *hp_redo;
	int cma_refused;          /* CMA with this peer refused (EPERM): bounce from now on */
	/* the peer's pidfd, opened at our first CMA move to it: readable once
	 * it exited, so that no CMA move reaches whoever has its pid since
	 * (shm_bulk.c, cma_peer_gone); pidfd_state 0: not opened yet, 1:
	 * open, -1: no pidfds here */
	int pidfd;
	int pidfd_state;
	/* the done word of the peer's split move we could not store by CMA:
	 * a SHM_HELP_FAILED answer goes by the ring when it has room (0: none) */
	uint64_t help_owed;
	/* how our moves to this peer go, per size class */
	struct shm_choice ch[SHM_CH_CLASSES];
};

struct shm_stats {
	uint64_t futex_wakes; /* FUTEX_WAKE system calls made by our senders */
	uint64_t futex_waits; /* FUTEX_WAIT system calls made by sleep() */
	uint64_t eagain;      /* sends refused for lack of room */
	uint64_t bounce_chunks;
	uint64_t split_moves; /* CMA moves whose second part the peer copied */
	uint64_t cma_moves;   /* moves by CMA, split or not, at once or queued */
	/* CMA moves refused before the system call because the peer's
	 * process was gone: exited (its pidfd readable), or its pid another
	 * process's (shm_bulk.c, cma_peer_gone) */
	uint64_t cma_gone;
	uint64_t bounce_moves; /* moves through a bounce area that we asked for */
	uint64_t nt_moves;    /* those of them by non-temporal stores */
	uint64_t nt_chunks;   /* slots we filled by non-temporal stores (either side) */
	uint64_t rewinds;     /* records we sent with SHM_RF_REWIND */
	uint64_t ctl_loads;   /* ring_ctl heads loaded to decide a rewind */
	uint64_t stream_sends;  /* streamed sends (SHM_STREAM_MIN, SHM_STREAM_BEHIND) */
	uint64_t stream_copies; /* those copied by non-temporal stores (struct shm_sc's pick) */
};

struct nal {
	int rank, size, lrank, lsize;
	uint64_t jobid;
	struct nal_upcalls up;
	char name[48];

	uint8_t *base;
	size_t seg_len;
	struct shm_seg_hdr *hdr;
	struct shm_rank *ranks; /* [lsize] */
	struct shm_rank *me;
	uint32_t unheard;   /* our sends since we last delivered a record, up to SHM_TX_STREAM_SENDS */
	uint32_t hot_bytes; /* where a ring's records rewind: SHM_HOT_BYTES, or _CROWDED (ring_full) */
	uint64_t ring_size, ring_mask;
	size_t max_inline;
	size_t chunk;
	size_t slot_parts; /* parts of each slot the pieces walk (shm_slot_parts) */

	int started, unlinked, in_progress, cma;
	int cma_ok;   /* a CMA move succeeded: the peers may copy by CMA too */
	unsigned rr;  /* progress round-robin start */
	int *l2g;     /* [lsize] local index -> rank */
	int *g2l;     /* [size] rank -> local index or -1 */
	uint8_t *dead; /* [lsize] */
	struct shm_tx *tx;   /* [lsize] */
	struct shm_rx *rx;   /* [lsize] */
	struct shm_bpeer *bp; /* [lsize] */
	int nbulk;    /* moves queued or served through bounce areas */
	int bulk_mode; /* SHM_BULK_*: how bulk moves go while cma (0: PTL_SHM_CMA not read yet) */
	int crowded;   /* 1: the local ranks outnumber the CPUs they may use, -1: they do not, 0: not known yet */
	int asym;      /* registered for the sleepers' membarrier: sends to an SHM_ST_ASYM peer skip the fence */
	struct shm_bop *bop_free; /* finished bounce moves, reused (no malloc per move) */
	struct shm_stats st;
};

/* shm_seg.c */
void shm_seg_name(uint64_t jobid, char *buf, size_t len);
/* The bytes of each ring in a segment for L local ranks (shm.h's
 * SHM_RING_* say how). */
uint64_t shm_ring_size(uint32_t L);
/* The bytes of each bounce slot in a segment for L local ranks (shm.h's
 * SHM_CHUNK_* say how). */
uint64_t shm_chunk_size(uint32_t L);
int shm_seg_create(struct nal *n);
int shm_seg_attach(struct nal *n);
void shm_seg_layout(struct nal *n);
void shm_seg_try_unlink(struct nal *n);

/* shm_wake.c */
void shm_wake_slow(struct nal *n, int li, uint32_t v);
/* Registers for the sleepers' membarrier and says so in our state word
 * (SHM_ST_ASYM), where the kernel has it; after shm_seg_layout. */
void shm_wake_publish(struct nal *n);
/* After publishing a record to local peer li: wakes it if it sleeps
 * (shm_wake.c says why the fence, and why none towards an SHM_ST_ASYM
 * peer once we are registered). Inline: every send ends here, and a peer
 * that polls costs one load (the fence too where it is needed), not a
 * call too. */
static inline void shm_wake_peer(struct nal *n, int li)
{
	_Atomic uint32_t *w = &n->ranks[li].state;
	uint32_t v;

	if (n->asym) {
		/* only the compiler must keep the record's stores before the load */
		atomic_signal_fence(memory_order_seq_cst);
		v = atomic_load_explicit(w, memory_order_relaxed);
		if (v & SHM_ST_ASYM) {
			if (v == (SHM_ST_SLEEPING | SHM_ST_ASYM))
				shm_wake_slow(n, li, v);
			return;
		}
	}
	atomic_thread_fence(memory_order_seq_cst);
	v = atomic_load_explicit(w, memory_order_relaxed);
	if ((v & ~SHM_ST_ASYM) == SHM_ST_SLEEPING)
		shm_wake_slow(n, li, v);
}
int shm_sleep(struct nal *n, int timeout_ms);
void shm_kick(struct nal *n);
void shm_set_polling(struct nal *n, int on);

/* shm_nal.c */
uint64_t shm_now_ns(void);
int shm_ring_put(struct nal *n, int li, uint32_t type, const void *a, size_t alen,
		 const void *b, size_t blen);
int shm_pending(struct nal *n);
int shm_peer_check(struct nal *n, int li, int force);
/* Local peer li is dead (once): its moves fail with NAL_EPEER, in order,
 * and the peer_failed upcall tells lib/ptl. */
void shm_peer_dead(struct nal *n, int li);

/* shm_bulk.c */
/* PTL_SHM_CMA's value e: 1 forced, 0 forbidden, -1 chosen (unset; any
 * other value, with a warning on stderr, once per process). */
int shm_cma_env(const char *e);
int shm_bulk_crowded(struct nal *n);
/* The CPUs a cgroup v2 cpu.max quota of our cgroup leaves us (0: no quota). */
int shm_cpu_quota(void);
int shm_mem_reg(struct nal *n, void *addr, size_t len, struct nal_mr *mr);
void shm_mem_dereg(struct nal *n, struct nal_mr *mr);
int shm_bulk(struct nal *n, int peer, enum nal_bulk_op op, const struct iovec *local,
	     int niov, uint64_t raddr, uint64_t rkey, size_t len, void *cookie);
void shm_bulk_serve_req(struct nal *n, int li, const void *body, size_t len);
void shm_bulk_help(struct nal *n, int li, const void *body, size_t len);
int shm_bulk_progress(struct nal *n);
int shm_bulk_pending(struct nal *n);
void shm_bulk_fail_peer(struct nal *n, int li, int status);
void shm_bulk_fini(struct nal *n);
/* Whether PTL_SHM_BULK_REPORT=1 asks for the teardown report (the bulk
 * chooser's lines, then the streamed copy's). */
bool shm_report_wanted(void);

/* Test hook: counters of this instance. */
void shm_get_stats(struct nal *n, struct shm_stats *out);

#endif /* PTL_SHM_H */

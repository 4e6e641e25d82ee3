#!/bin/sh
# ptl's MPI against MPICH and Open MPI, interleaved (A B C A B C ...) so all
# see the same machine: ping-pong latency 0 B - 4 MiB and streaming bandwidth
# (bench/mpi_pingpong.c) with 2 ranks pinned, the 8-byte half round trip
# with 0 and 20,000 unexpected messages of another tag queued (uxlat:
# MPI_Recv, uxpost: MPI_Irecv then MPI_Wait), the 8-byte nonblocking
# exchange (nbx: 2 x MPI_Irecv, 2 x MPI_Isend, MPI_Waitall, us a message),
# what a call that finds nothing costs (testany, test, iprobe: ns a
# call; bench/mpi_pingpong.c's poll_rows), and MPI_Allreduce 8 B - 1 MiB
# (bench/mpi_allreduce.c) with 2 ranks pinned and with 4 ranks on the cores
# there are. Medians of the rounds' medians, [min-max], ratio = ptl / other.
# Every launch runs in the host state the others do where it can: the
# round trip of a cache line between cores 0 and 1 (bench/core_rtt) is
# probed before and after it, and a launch in the far state is retried
# (below, "host state"). Within a ping-pong or allreduce launch whose
# ranks do not outnumber the CPUs, a trial with a rank's core slow right
# before or after it is run again (bench/bench_slow.h; the table's
# launches' counts go under the table).
#
# Then ptl's allreduce per algorithm (ring, ring_bidir, halving_doubling,
# tree, recursive_doubling; in the same rounds, the same program as the
# table's; every algorithm in each launch, on a communicator of its own
# whose hint ptl_coll_algo names it, their trials in turns) beside what
# the cost model (collectives/coll_cost.c, through ptltool coll) predicts
# for it. The
# model predicts an undisturbed machine, and the host is shared: a trial
# that another process's time slice lands in runs 2-10x slower (the same
# forced ring measured 216 us and 6.2 ms at 1 MiB in back-to-back runs,
# the slowness only ever added), so the model's side takes the best trial
# (each one the mean of many calls) of all the rounds, for the rows and
# for every parameter alike. Every parameter comes from its own
# measurement in this run (ptl's, 2 ranks), none from the allreduce rows
# it predicts:
#   o      CPU per message: mpi_allreduce's "overhead" (send and receive
#          of 64 messages that do not wait on the wire)
#   post   CPU to post a receive before its message came (mpi_allreduce's
#          "post": 64 MPI_Irecv); ptl's MPI posts an ME for a schedule's
#          receive of more than COLL_LAZY_MAX (and direct recursive
#          doubling's of more than RD_DIRECT_LAZY_MAX; both read from
#          mpi_coll.c, from DIR/lazy and DIR/rdlazy for a kept run), smaller
#          ones wait unexpected. Charged on top of
#          o (--recv-post): a 2-rank ring allreduce of 64 B - 2 KiB
#          (mpi_allreduce's size form, PTL_COLL_ALGO=ring, best of 30
#          launches, 2026-12-07) steps by +0.065 us from 256 to 320 B,
#          where its two 128 B lazy receives a call become 160 B
#          posted ones (0.032 us each, the "post" figure), and by
#          +0.017 with the lazy limit moved to 1 KiB (where it is since
#          2026-12-07: the 2-rank ring's receives post from its rows
#          above 2 KiB);
#          from 2026-12-01 to 12-07 not charged (o was taken to hold it:
#          in the kept runs of then, best of 3 launches each, ring and
#          tree grew +0.014 to +0.063 from 256 to 384 B, within their
#          launches' spread; 30 launches a size showed the step)
#   alpha  mpi_allreduce's 8-byte half round trip ("pingpong", in the
#          same processes as the rows) less 2 o (a ping-pong pays o twice)
#   eager  what an eager message's bytes cost (inline through the ring,
#          into the posted receive; --beta with --cpu-copies): the slope
#          of the rows' launches' 1 KiB and 8 KiB MPI_Isend ping-pongs
#          (mpi_allreduce's), else of bench/mpi_collcal.c's ("epp");
#          without them, one core's copy rate from mpi_allreduce's 20 KiB
#          and 120 KiB ping-pongs (16 KiB in runs kept before shm
#          carried 16 KiB inline)
#   rndv   the rendezvous' own cost: mpi_collcal's 8-byte MPI_Ssend
#          ping-pong (header, the receiver's get, the reply; nothing to
#          copy) less 3 alpha + 3 o
#   rates  a rendezvous copy's rate at each size a schedule copies (16 KiB
#          - 1 MiB, --copy-rates): mpi_collcal's 2-rank exchanges ("xch":
#          MPI_Irecv, MPI_Isend, MPI_Waitall, both CPUs copying at once
#          into buffers their peers then read, as a 2-rank schedule's
#          step; "xchs": each exchange timed alone, not the read of
#          what came that follows it, which in a schedule is the
#          reduction's, gamma; runs without xchs take xch, timed with
#          it), bytes each CPU copies over what the exchange takes
#          beyond the model's with an instant copy; shm's split copies
#          (CMA from SHM_SPLIT_MIN, 64 KiB) are in them (--split-cost 0)
#   picks  shm picks per peer and size class (below SHM_CH_CLASS0, then twice as wide)
#          among bounce, bounce with non-temporal stores and CMA by timing
#          them; its ranks here say what they picked (PTL_SHM_BULK_REPORT=1,
#          kept in the run's "bulk" file), and the model copies each size
#          the way the 2-rank ping-pongs' moves mostly went there
#          (--bulk-methods: CMA split from SHM_SPLIT_MIN, CMA whole below,
#          or a move through the segment); PTL_SHM_CMA=1: all CMA
#   moves  a move through the segment (bounce or NT): one way (no copy
#          back at once: not an exchange) the sender's core copies out
#          while the receiver's copies in a piece behind (SHM_PIECE), each
#          for the bytes at the move rate (--move-rates): mpi_allreduce's
#          20 KiB, 128 KiB and 1 MiB ping-pongs of the sizes shm moves so,
#          the bytes and a piece over what each takes beyond the model's
#          with an instant move. Checked, not fitted: the 2-rank 1 MiB
#          MPI_Bcast (one move or split copy, one way) beside its
#          prediction. 4 ranks on 2 cores: shm bounces every move, unsplit
#   small  ptl's short allreduce rounds and a schedule's short messages
#          go request-free (inline, ACK-free, no request on the send side;
#          --small-max, up to 4 KiB, where these figures reach): their CPU at
#          each end from mpi_collcal's "sovh" (blocking 8-byte MPI_Send
#          and MPI_Recv of one already there), their alpha its blocking
#          8-byte ping-pong less both; what the receiver's CPU pays beyond
#          that by size (--small-recv-costs: the lines it pulls over) the
#          blocking 64 B - 4 KiB ping-pongs ("spp") beyond both ends, that
#          alpha and the sender's copy at the eager rate
#   gamma  adding two vectors of doubles ("gamma": MPI_Reduce_local of
#          1 MiB, the library's own loop, the one the rows run); rows
#          from 4 KiB take it at their own size ("gamma 4096" ...: in
#          cache, 2-3x faster than 1 MiB's on the Zen 3 guest)
#   cmd    CPU per send and receive a collective posts, beyond o (its
#          bookkeeping): a 2-rank MPI_Barrier (each rank posts a receive
#          and a send before its message goes) less a 2-rank 8-byte
#          MPI_Bcast (the root posts one send; the leaf's receive was
#          posted long before), the one difference the model sees; none
#          where a schedule's short messages go request-free (below,
#          "request-free schedule sends"), the call term taking the rest
#   wake   what a collective's rank pays for each message it takes
#          (--wake-cost: the poll that saw it, the pass over what the
#          collective waits for; o is measured with point-to-point
#          messages that were there): the 8-byte MPI_Bcast from alternating roots (its leaf
#          waits) less mpi_collcal's "bcroot" (its root's side alone: the
#          call and the send), alpha and the leaf's o. Not for direct
#          recursive doubling, whose waits are the ping-pong's
#   call   per call: an MPI_Barrier less what the model gives it without a
#          call term, plus MPI_Allreduce on MPI_COMM_SELF at the same size
#          (the checks and the copy of the input before any schedule);
#          direct recursive doubling (up to RD_DIRECT_MAX) runs no engine
#          and reads the input where it is: no command cost, and for the
#          rows within --small-max (small) no call either, their ends'
#          CPU carrying MPI_Send's and MPI_Recv's checks already (else
#          MPI_COMM_SELF's 8-byte call, the checks alone)
#   acked sends  ptl's MPI finishes an eager send of more than the eager
#          limit (at least 1024 B, at most 8192 B) on the receiver's ACK (o
#          at each end and the 2-rank alpha, also on shared cores); smaller
#          ones at once (none with PTL_MPI_NOACK_OFF); by default every
#          eager send is ACK-free
#   rendezvous  above the eager limit (PTL_MPI_EAGER_LIMIT, 8192 B) a send
#          is a header, the receiver's get, and the copy on the sender's
#          CPU (on shm the rank that serves a get copies), so the copy
#          takes turns with that rank's reductions: --rndv-min
#   cores  with more ranks than cores (nproc) a waiting rank yields its
#          core, so the model schedules the ranks' CPU work on the cores
#          (--cores) instead of stretching it; alpha stays the 2-rank
#          one, and a rank that waited gets a core back after a switch
#          (--switch-cost, most of the latency there): mpi_collcal's
#          "tok4" (a token's hop round 4 ranks in the library's own wait
#          loop, one rank sending while the rest wait, as a collective's
#          chain) less the 2-rank hop (spp 8). Session 14's three kept
#          runs: 12/12/13 of the 4-rank rows within 10% with the core
#          wait below, 14/15/15 so (the 1-element rows' chains from
#          1.14-1.48x to 0.85-1.22x; the ring's 64-512 B rows, every rank
#          shifting at once, 1.07-1.44x to 1.08-1.35x). Not settled: the
#          model's shared cores flip a whole switch on how an arrival
#          falls against its receiver's own work (a 4-rank 8 B recursive
#          doubling predicts 3.46 us with --small-alpha 0.044, 4.46 with
#          0.045): a real arrival's jitter would smooth that step
#          A step where every rank has a message to take at once
#          switches cheaper (--switch-shift, --switch-exchange): a shift's
#          step (each rank to the next: a ring's) solved from mpi_collcal's
#          "eshift4 8" (a round of the 8-byte shift: about one token hop,
#          where the model's chain of the token's switch paid two), a pair
#          exchange's (recursive doubling's, halving-doubling's) from
#          "xch4 8" (two pairs' 8-byte exchanges), each through the
#          model's own shift and pair exchange; on session 31's and 32's
#          kept runs (PTL_BENCH_FROM) the 4-rank rows within 10% went 6 ->
#          15 of 35 (unpinned) and 16 -> 19 (pinned), the ring's 64 -
#          4096 B rows from 1.2 - 1.7x to 0.91 - 1.11x; on the next fresh
#          run (unpinned) 16 -> 19. PTL_BENCH_STEPSW=0: the token's switch
#          in every step (the model before)
#   core wait  (PTL_BENCH_CWAIT=idle: the default before 2026-12-01 21:00)
#          a rank that waits while its core has no work (its ranks all
#          waiting, yielding at every poll) sees its message a while
#          after it came (--core-wait, latency, not core time; whenever
#          in the wait it comes, as the mean per message measured here
#          is): mpi_collcal's 4-rank "pp4idle" (an 8-byte ping-pong
#          between two ranks while the other two wait as a collective's
#          idle ranks do) less the 2-rank one (spp 8); the switch then
#          only follows a core's own work, solved from the barrier on as
#          many ranks in the same launches as the rows
#   loop   the rows' program calls the collective back to back, so the
#          model runs 8 calls and takes the period (--calls: a rank
#          enters the next call when its own part is done) with sends
#          that go before their receives are posted (--unexpected); so do
#          the barriers the switch comes from and the 4-rank checks
#   copies an eager message's bytes are copied by the sender's CPU into
#          the shm ring (--cpu-copies), in turn with its other work; where
#          a collective's sends stay eager above the eager limit
#          (COLL_EAGER_TIMES in mpi_coll.c), the receiver's CPU reads
#          those (--inline-max), at a cost beyond the bytes from the
#          blocking 32 KiB ping-pong (eager up to 8 times the limit; shm
#          carries 16 KiB inline)
#   reads  and the bytes of such a read at the rate mpi_collcal's "rxch"
#          ("rxchs": each exchange alone, as "xchs" above) gives by
#          size (--read-rates, 16-64 KiB: MPI_Irecv, blocking MPI_Send,
#          MPI_Wait at both ranks, as a schedule's step reads
#          its peer's message while the peer reads its), bytes over what
#          one takes beyond the model's exchange with an instant read
#          (the read's fixed cost in its rate, as a rendezvous rate holds
#          its own); 128 KiB - 1 MiB (only a 2-rank allreduce's pulls)
#          the same exchanges in launches of their own whose eager limit
#          is raised so that they stay reads ("collcal reads", "reads1m";
#          through shm's bounce area a read exchange of 512 KiB takes
#          ~100 us, a rendezvous exchange ~70: no stand-in); each by
#          the method shm picked for the 2-rank rows' reads
#          (--read-methods, from their PTL_SHM_BULK_REPORT lines, the
#          method with the most moves, or where CMA and the moves each
#          took a third (PTL_BENCH_MIXED) the faster forced exchange: a
#          move through the segment is the sender's copy out and the
#          receiver's copy in, a CMA read the receiver's copy, split
#          from SHM_SPLIT_MIN), from the same exchanges with that method
#          forced ("rxchm": PTL_SHM_CMA=0, "rxchc": 1; shm picks CMA
#          for these exchanges where the rows' reads go NT), each
#          size's rate solved through the model's exchange by that
#          method. Since 2026-12-02 the rows' own launches time the 2-rank
#          exchanges too (mpi_allreduce's "allgather": MPI_Allgather in
#          place by the ring, one exchange, the collectives' path and the
#          rows' state) and those take the place of the forced ones,
#          solved through the model's allgather: at half a row's size
#          by the kind of read the row's steps make (the same data read
#          back to back, "allgather", or in turns with lines the peer
#          has just written, "ringsteps", from the L2 cache's size up),
#          each 2-rank row with those of the launch that timed its best
#          trial; the 2 KiB copy of the 4 KiB rows' steps (--eager-rates)
#          the same way; with more ranks than cores the reads' times from mpi_collcal's
#          "rxch4" (ranks 0-1 and 2-3 exchanging at once, unpinned),
#          each solved so that the model's pair exchange on the cores
#          (half its 4-rank recursive doubling) takes what rxch4 took,
#          but 16 and 64 KiB (and the eager 1 and 8 KiB below) from
#          the 4-rank ring's MPI_Allgather of the rows' blocks (and of
#          16 KiB halves beside the 32 KiB rows) in the rows' turns;
#          where those launches report shm's crowded mode, each read
#          there moves through the segment, the sender's copy out and
#          then the receiver's copy in (--read-methods move), each at
#          the rate solved; on 2 ranks and 4 alike a read that still
#          fits shm's ring inline (16 KiB, SHM_MAX_INLINE) goes through
#          the ring instead (--read-methods ring: the sender's copy as
#          it sends, the receiver's as it takes it, no request)
#   copies on shared cores  a 4-rank schedule's rendezvous copies (128
#          KiB and up) where the ranks outnumber the cores: a one-way
#          move's copies from mpi_collcal's "shift4" (four ranks each
#          sending to the next at once, the cores kept busy) through a
#          third of the model's 4-rank ring allgather, and what a move
#          takes beyond its copies (--move-gaps: its hand-overs, no CPU)
#          from "pp4one" (a lone move among those ranks) beyond the
#          model's with that rate, the two solved in turn; then, with
#          those moves (the model moves an exchange's copy one way once
#          the other way's is done), an exchange's from "xch4" (two
#          pairs exchanging at once), solved through the model's pair
#          exchange on the cores, and what a pair's exchange takes beyond
#          its copies (--xch-gaps: its hand-overs, no CPU) from "xch4one"
#          (one pair exchanging alone among those ranks, as a tree's
#          inner ranks do: near state, 512 KiB 100 us where two pairs'
#          took 153, 128 KiB 30 against 39, before shm_slot_off) beyond
#          the model's lone exchange with that rate, the two solved in
#          turn (runs kept before 2026-12-06 have no xch4one: no gap;
#          the moves are solved whether or not the run has xch4). The 2-rank
#          rates (each rank on a core of its own) overstate these copies:
#          two pairs' 1 MiB exchanges at once took 152 us at best, two
#          copies per core, one pair's pinned 137 us. Eager messages'
#          copies there (--eager-rates, 1-8 KiB) from "eshift4" (the
#          shift of eager messages) through the same model's shift, 1
#          and 8 KiB from the rows' allgathers where the run has them
#   same core  bound (rank r on core r mod 2), a copy between the two
#          ranks of one core (0 and 2, 1 and 3) keeps its lines in that
#          core's caches, where the exchanges above move them between
#          the cores: mpi_collcal's "rxch4s" and "xch4s" (pairs 0-2 and
#          1-3 exchanging at once), each size's rate solved through the
#          model's exchange between two ranks of one core
#          (--same-core-rates); the pair exchange the cores' rates are
#          solved through (half a 4-rank recursive doubling, a step of
#          each kind) then takes the mean of the two exchanges. Session
#          42's mostly-far kept run with this session's same-core
#          figures: 12 -> 16 of the 4-rank rows within 10% (recursive
#          doubling's 32 KiB - 1 MiB from 1.13-1.16x to 0.99-1.06x)
#   pull   a 2-rank allreduce on one host sends eagerly up to
#          MPI_PULL_EAGER times the eager limit (mpi_coll_pull,
#          MPI_MODE_PULL), read by the receiver: the 2-rank rows' sends
#          are eager up to 1 MiB (--rndv-min)
#   cross  an inline message that crossed one going back (an exchange:
#          a 2-rank ring's, halving-doubling's, direct recursive
#          doubling's rounds) costs its receiver more by size
#          (--cross-costs): mpi_collcal's blocking exchanges ("sxch": MPI_Send
#          then MPI_Recv at both ranks, 8-512 B; at 8 and 64 B "srx",
#          MPI_Sendrecv, where a run has it) less the blocking
#          ping-pongs' half round trips (spp) of the same sizes; a
#          request-free message (direct recursive doubling's) the same
#          from 8 B to 4 KiB (--small-cross-costs). MPI_Sendrecv below
#          512 B takes the rounds' own path (the receive first, posting
#          nothing, then the send, in one call), where MPI_Send then
#          MPI_Recv sends first and makes two calls: at 8 B the
#          exchange took 0.158 - 0.162 us against 0.174 - 0.178 (the
#          2-rank 8 B allreduce by recursive doubling: 0.155 - 0.166),
#          and with it the model's 2-rank recursive doubling 8 and 64 B
#          rows went from 1.10x and 1.11x to 1.03x and 1.06x, the ring
#          family's 64 B rows from 1.02 - 1.04x to 0.99 - 1.01x (s68/q1,
#          re-modelled with srx from launches of its session). From 512
#          B its send goes first (mpi_p2p_api.c), so sxch stays there
#   recv   what an inline message with requests costs its receiver by
#          size (--recv-costs: the lines it pulls over, as small's
#          --small-recv-costs and from the same blocking ping-pongs, 8 -
#          512 B; past that the eager rates hold them)
#   input  where MPI_Allreduce leaves the input apart for every algorithm
#          that reads it so (ptltool accepts --input for the ring), the
#          model's schedule takes it apart too and the call is the checks
#          alone; what a rank copies itself (an eager message out of
#          the unexpected buffer; a schedule's own copies, which no row
#          makes since 2026-12-05) moves at one core's memcpy rate by size
#          (--local-copy-rates): MPI_Allreduce on
#          MPI_COMM_SELF (which copies the input into the output) beyond
#          its 8-byte call
#
#   bench/mpi_bench.sh [rounds] [trials-per-round]       (from the build tree)
#   PTL_BENCH_ALGOS="ring tree" bench/mpi_bench.sh        (fewer algorithms)
#   PTL_BENCH_IMPLS=ptl bench/mpi_bench.sh                (ptl alone: the model)
#   PTL_BENCH_KEEP=DIR / PTL_BENCH_FROM=DIR bench/mpi_bench.sh  (keep the
#          measurements; run the model alone on kept ones)
#   PTL_BENCH_LAUNCHES=N  launches of the algorithms' rows per round (default 3)
#   PTL_BENCH_BIND4=none  the launches of more ranks than cores unpinned:
#          one placement in every launch where the scheduler draws it anew.
#          Default core: pinned too, every implementation's (rank r on core
#          r mod cores; Open MPI's core:overload-allowed), as the model's
#          bound cores take them (PTL_BENCH_CWAIT=bound); far state, 5
#          launches each, 2026-12-03: ptl's 4-rank 8 B 10.5 - 21.3 us
#          unpinned, 10.6 - 12.0 pinned; Open MPI's 12.4 - 23.4 and 12.1 -
#          13.0; 256 KiB ptl 183 - 211 and 183 - 191, Open MPI 183 - 196 and
#          185 - 225. Kept runs (PTL_BENCH_FROM) say theirs in DIR/bind4,
#          older ones count as none
#   PTL_BENCH_STATE=0  no host-state probes: every launch kept as it ran
#          (as before 2026-12-02 09:00); PTL_BENCH_STATE_TRIES=N launches at
#          most per figure (default 4), PTL_BENCH_STATE_WAIT=S seconds the
#          whole run may spend waiting for the near state (default 240)
#   PTL_BENCH_OUTLIER=X  a ping-pong launch whose 8-byte half round trip
#          is over X (default 1.5) times its implementation's lowest
#          launch of the run is run again, every implementation alike
#          (below, "ping-pong launches the probes missed"); 0: never
#   PTL_BENCH_APART=1  each algorithm in launches of its own (PTL_COLL_ALGO),
#          as before 2026-12-02 04:00
#   PTL_BENCH_XCH=collcal  the 2-rank reads' rates from mpi_collcal's forced
#          read exchanges (rxchm, rxchc) and the eager rate from its epp
#          ping-pongs even where the rows' launches timed their own
#          (mpi_allreduce's "allgather", "pingpong 1024/8192"), as before
#          2026-12-02 04:20, for an A/B on the same data;
#          PTL_BENCH_XCH=allgather or ringsteps: that kind of the rows'
#          2-rank exchanges at every size (the default picks by the L2)
#   PTL_BENCH_CAL=all  the 2-rank figures the rows' launches time too
#          (ping-pongs, o, the barrier, the bcast, MPI_COMM_SELF's call)
#          from every launch, not the rows' alone, as before 2026-12-05
#   PTL_BENCH_PAIR=0  each 2-rank row's exchanges the best of all
#          launches, not those of the launch that timed the row's best
#   PTL_BENCH_POST=free  the model does not charge a posted receive's ME
#          (mpi_allreduce's "post"), as from 2026-12-01 16:40 to 2026-12-07,
#          for an A/B on the same data (PTL_BENCH_FROM)
#   PTL_BENCH_SINK=read  the model takes each 2-rank exchange timed with
#          the read of what came after it (xch, rxch), not alone (xchs,
#          rxchs), as before 2026-12-01 19:00, for an A/B on the same data
#   PTL_BENCH_ROWS=all  each algorithm's launches run the whole mpi_allreduce
#          (its bulk ping-pongs too), not "rows", as before 2026-12-01 19:30
#   PTL_BENCH_PICKS=table  the 2-rank rows' read methods from the table's
#          launches' shm reports (the whole program, bulk ping-pongs and
#          all), not the algorithms' own: for an A/B on the same data
#   PTL_BENCH_CWAIT=idle  the 4-rank core wait from pp4idle less the
#          2-rank ping-pong and a switch from the barriers, instead of a
#          switch from the token's hop (token, the default with unpinned
#          launches)
#   PTL_BENCH_CWAIT=bound  (the default with pinned launches) ranks bound to
#          cores taking turns (ptltool coll --bound): the switch solved so
#          that the model's exchange between the two ranks of a core takes
#          mpi_collcal's (xch4s 8; PTL_BENCH_SWFROM=barrier, or a run kept
#          without it: so that the model's 4-rank barrier takes the rows'
#          launches'); the 4-rank figures (rows, barrier, calibration)
#          each the median of their launches' medians (below, "bound
#          cores")
#   PTL_BENCH_CWAIT=barrier  the 4-rank core wait solved from the barrier
#          (the run's best; each algorithm's rows from their own launches'),
#          no switch
#   PTL_BENCH_JITTER=J, PTL_BENCH_PW=F  bound cores: each switch of the
#          model jittered by J (default 0.35), a rank keeping its core for
#          work within F of a switch of its last (default 0.07; 0.1 before
#          2026-12-07); for an A/B
#          on kept runs (PTL_BENCH_FROM; "bound cores" below says why these)
#   PTL_BENCH_MIXED=F  a size class of the 2-rank rows' reads counts as
#          gone both ways when CMA and the moves each took at least F of
#          its moves (default 0.33; 1 never: the method with the most)
#   PTL_BENCH_ARGS=1  prints each row's ptltool coll arguments on stderr
#          ("ARGS ALGO N BYTES: ..."), to rerun one with --steps
#   PTL_BENCH_READS=copy  the model takes every read as one copy by the
#          receiver at the rxch exchanges' rates (the model before
#          --read-methods; with more ranks than cores, before 2026-12-06),
#          for an A/B on the same data (PTL_BENCH_FROM); =move: a read
#          that fits shm's ring inline goes as the others of its size, not
#          through the ring (the model before session 63)
#   PTL_BENCH_CALQ=Q  the model's copy figures (1 KiB and up) take the
#          quantile Q of their launches' best trials (default 0.25; 0: the
#          best of all, as before 2026-12-02), the smaller ones the best
#   PTL_BENCH_STAT=med    the model's side takes each launch's median trial
#          (the best launch's), not the best trial: a trial can also read
#          fast (2-rank 1 MiB ping-pong 48.9 us in one trial of a launch
#          whose median was 123, the 2 vCPUs placed close for a while), and
#          the best trial then calibrates every copy from that moment
#   PTL_BENCH_SENDS=req|free  how the model prices a schedule's short
#          messages: req with a request each, as ptl's MPI sent them before
#          2026-12-06; free request-free, as it sends them since (below,
#          "request-free schedule sends"). A run that measures is free
#          (the tree's own MPI) unless this says otherwise, and keeps that
#          in DIR/sends; PTL_BENCH_FROM takes DIR/sends, req where there is
#          none (runs kept before it). Likewise DIR/lazy and DIR/rdlazy:
#          COLL_LAZY_MAX and RD_DIRECT_LAZY_MAX as the run's MPI had them
#          (128 and this tree's where there are none)
set -u
B=$(cd "$(dirname "$0")/.." && pwd)
S=${PTL_TOP_SRCDIR:-$B}
ROUNDS=${1:-3}
TRIALS=${2:-3}
ALGOS=${PTL_BENCH_ALGOS:-ring ring_bidir halving_doubling tree recursive_doubling}
CALQ=${PTL_BENCH_CALQ:-0.25}
# kept runs say how their launches were placed (bind4); older ones were
# unpinned unless PTL_BENCH_BIND4 says otherwise
BIND4=${PTL_BENCH_BIND4:-}
[ -n "${PTL_BENCH_FROM:-}" ] && [ -z "$BIND4" ] && BIND4=$(cat "$PTL_BENCH_FROM/bind4" 2>/dev/null)
[ -n "${PTL_BENCH_FROM:-}" ] && [ -z "$BIND4" ] && BIND4=none
BIND4=${BIND4:-core}
case $BIND4 in core | none) ;; *) echo "mpi_bench.sh: PTL_BENCH_BIND4 takes core or none, not $BIND4" >&2; exit 1 ;; esac
# how the measured MPI sent a schedule's short messages: free (this tree's),
# or what a kept run says (DIR/sends), req for runs kept before it;
# PTL_BENCH_SENDS prices them otherwise (an A/B on the same data)
SENT=free
[ -n "${PTL_BENCH_FROM:-}" ] && { SENT=$(cat "$PTL_BENCH_FROM/sends" 2>/dev/null) || SENT=req; }
case $SENT in free | req) ;; *) echo "mpi_bench.sh: $PTL_BENCH_FROM/sends says $SENT, not free or req" >&2; exit 1 ;; esac
SENDS=${PTL_BENCH_SENDS:-$SENT}
# schedule receives up to mpi_coll.c's COLL_LAZY_MAX post no ME: this
# tree's limit, or the one a kept run was measured with (DIR/lazy), 128
# for runs kept before it says (the limit from 2026-11-30 to 2026-12-07);
# the same for direct recursive doubling's RD_DIRECT_LAZY_MAX (DIR/rdlazy;
# this tree's for runs kept before it says: 4096 since 2026-12-04)
# cdef NAME DEFAULT: mpi_coll.c's #define NAME, else DEFAULT
cdef() { v=$(sed -n "s/^#define $1 \([0-9][0-9]*\).*/\1/p" "$S/lib/mpi-shim/mpi_coll.c" 2>/dev/null); echo "${v:-$2}"; }
LAZY=$(cdef COLL_LAZY_MAX '')
RDLAZY=$(cdef RD_DIRECT_LAZY_MAX '')
[ -n "${PTL_BENCH_FROM:-}" ] && { LAZY=$(cat "$PTL_BENCH_FROM/lazy" 2>/dev/null) || LAZY=128; }
[ -n "${PTL_BENCH_FROM:-}" ] && [ -f "$PTL_BENCH_FROM/rdlazy" ] && RDLAZY=$(cat "$PTL_BENCH_FROM/rdlazy")
case $LAZY$RDLAZY in *[!0-9]*) false ;; *) [ -n "$LAZY" ] && [ -n "$RDLAZY" ] ;; esac ||
	{ echo "mpi_bench.sh: no lazy limit (COLL_LAZY_MAX and RD_DIRECT_LAZY_MAX in $S/lib/mpi-shim/mpi_coll.c, or ${PTL_BENCH_FROM:-.}/lazy and rdlazy): '$LAZY' '$RDLAZY'" >&2; exit 1; }
case $SENDS in free | req) ;; *) echo "mpi_bench.sh: PTL_BENCH_SENDS takes free or req, not $SENDS" >&2; exit 1 ;; esac
# bound cores' model (below, "bound cores"), checked before anything is measured
BOUND_PW=${PTL_BENCH_PW:-0.07} BOUND_JITTER=${PTL_BENCH_JITTER:-0.35}
[ "$(awk -v j="$BOUND_JITTER" 'BEGIN { print (j ~ /^[0-9]*\.?[0-9]+$/ && j + 0 < 1) }')" = 1 ] ||
	{ echo "mpi_bench.sh: PTL_BENCH_JITTER takes a number from 0 to below 1, not $BOUND_JITTER" >&2; exit 1; }
[ "$(awk -v p="$BOUND_PW" 'BEGIN { print (p ~ /^[0-9]*\.?[0-9]+$/) }')" = 1 ] ||
	{ echo "mpi_bench.sh: PTL_BENCH_PW takes a number, 0 or more, not $BOUND_PW" >&2; exit 1; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
echo "$BIND4" > "$W/bind4"
echo "$SENT" > "$W/sends"
echo "$LAZY" > "$W/lazy"
echo "$RDLAZY" > "$W/rdlazy"
# PTL_BENCH_KEEP=DIR keeps this run's measurements (DIR/all, DIR/algo,
# DIR/bulk, DIR/states) and how they were taken (DIR/bind4, DIR/sends,
# DIR/lazy, DIR/rdlazy);
# PTL_BENCH_FROM=DIR measures nothing and runs the model on DIR's instead
# (to work on the model without rerunning the machine's part)
if [ -n "${PTL_BENCH_FROM:-}" ]; then
	cp "$PTL_BENCH_FROM/all" "$PTL_BENCH_FROM/algo" "$W/" || exit 1
	for f in bulk states relaunched; do
		[ -f "$PTL_BENCH_FROM/$f" ] && cp "$PTL_BENCH_FROM/$f" "$W/"
	done
	ROUNDS=0
fi
# the build tree's ptlcc (CC, when set, the compiler it runs)
for p in pingpong allreduce collcal; do
	PTLCC_CC=${CC:-} "$B/tools/ptlcc" -O2 -o "$W/ptl_$p" "$S/bench/mpi_$p.c" || exit 1
done
impls="ptl"
want_impl() { case " ${PTL_BENCH_IMPLS:-ptl mpich openmpi} " in *" $1 "*) return 0 ;; esac; return 1; }
if want_impl mpich && command -v mpicc.mpich >/dev/null 2>&1 && command -v mpiexec.hydra >/dev/null 2>&1; then
	mpicc.mpich -O2 -o "$W/mpich_pingpong" "$S/bench/mpi_pingpong.c" &&
	mpicc.mpich -O2 -o "$W/mpich_allreduce" "$S/bench/mpi_allreduce.c" && impls="$impls mpich"
fi
if want_impl openmpi && command -v mpicc.openmpi >/dev/null 2>&1 && command -v mpirun.openmpi >/dev/null 2>&1; then
	mpicc.openmpi -O2 -o "$W/ompi_pingpong" "$S/bench/mpi_pingpong.c" &&
	mpicc.openmpi -O2 -o "$W/ompi_allreduce" "$S/bench/mpi_allreduce.c" && impls="$impls openmpi"
fi
# a comparison that lost a column says so (scripts/deps.sh installs both)
for i in mpich openmpi; do
	want_impl $i || continue
	case " $impls " in *" $i "*) ;; *) echo "# $i: not built or not installed, its columns are left out (run scripts/deps.sh)" ;; esac
done

# run IMPL NRANKS PROG: 2 ranks pinned to cores 0 and 1; more ranks unpinned
# (PTL_BENCH_BIND4=core: pinned round the cores).
# ptl's ranks report how shm's chooser went (PTL_SHM_BULK_REPORT=1, at
# teardown: per peer and size class the method picked and each one's
# median cost), kept in $W/bulk as "NRANKS PROG ALGO ARG <report>" for the
# model's copy structure (below)
run() {
	bind=$BIND4; [ "$2" -le 2 ] && bind=core
	obind=$bind; [ "$bind" = core ] && [ "$2" -gt "$(nproc)" ] && obind=core:overload-allowed
	case $1 in
	ptl) PTL_SHM_BULK_REPORT=1 "$B/tools/ptlrun" -n "$2" --bind-to $bind --timeout 900 "$W/ptl_$3" "$T" ${4:-} ${5:-} 2>"$W/err"
		rc=$?
		sed -n "s/^ptl shm bulk: /$2 $3 ${PTL_COLL_ALGO:-${ALGOTAG:-any}} ${4:--}${PTL_SHM_CMA:+,cma$PTL_SHM_CMA} /p" "$W/err" > "$W/bulk1"
		grep -v '^ptl shm bulk: ' "$W/err" >&2
		return $rc ;;
	mpich) mpiexec.hydra -n "$2" -bind-to $bind "$W/mpich_$3" "$T" ${4:-} ;;
	openmpi) mpirun.openmpi --allow-run-as-root --oversubscribe -n "$2" --bind-to $obind \
		--mca btl self,vader "$W/ompi_$3" "$T" ${4:-} ;;
	esac
}
# The host state. The host decides where the guest's two vCPUs run and
# moves them every few seconds to minutes: a cache line's round trip
# between them near or far (bench/core_rtt.c has the figures), and every
# figure that moves lines between cores follows it. Three launches of
# each figure drawn at random states compare the states more than the
# implementations (session 19's "4-rank 1 MiB 2.05x of Open MPI" was
# ptl's launches far and Open MPI's near). So each launch is probed
# before and after (core_rtt, 5-50 ms a probe); each launch waits first
# for a near probe (a second apart, PTL_BENCH_STATE_WAIT seconds for the
# whole run), and one with a probe far (over twice the lowest of the run
# so far) is run again, up to PTL_BENCH_STATE_TRIES launches, while the
# budget lasts (once it is spent, a far stretch would only repeat
# launches back to back). The launch kept goes to $W/states ("IMPL N
# PROG ARG BEFORE AFTER LAUNCHES LOWEST", LOWEST the lowest probe it was
# judged by), its output and shm's report lines (run's bulk1) only then
# to the figures. A run that starts far counts far as the lowest until a
# near probe comes.
digits() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }
STATE_TRIES=${PTL_BENCH_STATE_TRIES:-4}
STATE_WAIT=${PTL_BENCH_STATE_WAIT:-240}
digits "$STATE_TRIES" && [ "$STATE_TRIES" -ge 1 ] && digits "$STATE_WAIT" || {
	echo "mpi_bench.sh: PTL_BENCH_STATE_TRIES ($STATE_TRIES) and PTL_BENCH_STATE_WAIT ($STATE_WAIT) take whole numbers, TRIES at least 1" >&2
	exit 1
}
# (the ping-pong outliers' mark: below, "ping-pong launches the probes missed")
OUTLIER=${PTL_BENCH_OUTLIER:-1.5}
awk -v x="$OUTLIER" 'BEGIN { exit !(x ~ /^[0-9]*\.?[0-9]+$/) }' || {
	echo "mpi_bench.sh: PTL_BENCH_OUTLIER ($OUTLIER) takes a number, 0 for never" >&2
	exit 1
}
echo 0 > "$W/waited"
# probe: the round trip in ns now, or nothing (PTL_BENCH_STATE=0, no
# core_rtt, CPUs 0 and 1 not both ours)
probe() {
	[ "${PTL_BENCH_STATE:-}" = 0 ] || [ ! -x "$B/bench/core_rtt" ] && return
	ns=$("$B/bench/core_rtt" 2>/dev/null | awk '{ print $4 }')
	digits "$ns" || return
	low=$(cat "$W/rtt_low" 2>/dev/null)
	digits "$low" && [ "$ns" -ge "$low" ] || echo "$ns" > "$W/rtt_low"
	echo "$ns"
}
# far NS: whether NS (a probe, maybe empty) is over twice the lowest
far() {
	low=$(cat "$W/rtt_low" 2>/dev/null)
	digits "$1" && digits "$low" && [ "$1" -gt $((2 * low)) ]
}
budget_left() { [ "$(cat "$W/waited")" -lt "$STATE_WAIT" ]; }
# near_wait: a probe, after waiting (within the run's budget) for it to be near
near_wait() {
	ns=$(probe)
	while far "$ns" && budget_left; do
		sleep 1
		echo $(($(cat "$W/waited") + 1)) > "$W/waited"
		ns=$(probe)
	done
	echo "$ns"
}
# rrun ARGS: run ARGS (in the near state where it can be had, above) at
# the head of a pipeline, which reports its last command's status, not
# the launch's: the launch's kept for rcheck (none if rrun itself died)
rrun() {
	rm -f "$W/rc"
	tries=1
	while :; do
		p0=$(near_wait)
		rm -f "$W/bulk1"
		run "$@" > "$W/launch"
		rc=$?
		p1=$(probe)
		if [ "$rc" != 0 ] || [ "$tries" -ge "$STATE_TRIES" ] || ! budget_left || ! { far "$p0" || far "$p1"; }; then
			break
		fi
		tries=$((tries + 1))
	done
	echo "$rc" > "$W/rc"
	echo "$1 $2 $3 ${4:--}${PTL_SHM_CMA:+,cma$PTL_SHM_CMA} ${p0:--} ${p1:--} $tries $(cat "$W/rtt_low" 2>/dev/null || echo -)" >> "$W/states"
	[ ! -f "$W/bulk1" ] || cat "$W/bulk1" >> "$W/bulk"
	cat "$W/launch"
}
# rcheck WHAT: says that WHAT failed if the last rrun's launch did
rcheck() {
	rc=$(cat "$W/rc" 2>/dev/null)
	[ "${rc:-1}" = 0 ] || echo "mpi_bench.sh: $1 failed (exit ${rc:-unknown})" >&2
}

# ring_bidir needs two ports per rank to be itself (else it is the ring)
ports_of() { [ "$1" = ring_bidir ] && echo 2 || echo 1; }
# mpi_allreduce's list of algorithms for launches that run them all
each=
for a in $ALGOS; do
	p=$(ports_of "$a")
	each="$each${each:+,}$a$([ "$p" -gt 1 ] && echo ":$p")"
done

# the model's rows take best trials: three times as many per round, in
# three launches (PTL_BENCH_LAUNCHES) of TRIALS each. A launch that shares
# a core with another tenant's process is slow throughout (2-rank 8-byte
# allreduce 1.4 us against 0.75, every size about 2x, in both rounds of
# one run), so more launches, not more trials in one, find the machine
# the model describes - as the calibration's figures do, which come from
# every launch.
LAUNCHES=${PTL_BENCH_LAUNCHES:-3}
load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
# pplaunch IMPL: the ping-pong launch (rrun), its lines' range in $W/all
# and its line in $W/states noted in $W/pplaunch ("IMPL FIRST LAST
# STATE"), for the outliers' second look below
: > "$W/pplaunch"
: >> "$W/all"
pplaunch() {
	f=$(($(wc -l < "$W/all") + 1))
	rrun "$1" 2 pingpong | sed "s/^/$1 2 /" >> "$W/all"; rcheck "$1 pingpong"
	echo "$1 $f $(wc -l < "$W/all") $(wc -l < "$W/states")" >> "$W/pplaunch"
}
for r in $(seq "$ROUNDS"); do
	T=$TRIALS
	for i in $impls; do
		pplaunch "$i"
		rrun "$i" 2 pingpong ux | sed "s/^/$i 2 /" >> "$W/all"; rcheck "$i pingpong ux"
		rrun "$i" 2 allreduce | sed "s/^/$i 2 /" >> "$W/all"; rcheck "$i allreduce"
		rrun "$i" 4 allreduce | sed "s/^/$i 4 /" >> "$W/all"; rcheck "$i 4-rank allreduce"
	done
	T=$TRIALS
	for l in $(seq "$LAUNCHES"); do
		# the model's own figures (bench/mpi_collcal.c, ptl's), in every
		# launch beside the rows and with five times the trials (about
		# a second): a copy rate from a trial that another tenant's
		# memory traffic slowed (2-rank exchange of 1 MiB 111 us at best,
		# 343 us in one loaded launch) spoils every row that copies
		T=$((TRIALS * 5))
		rrun ptl 2 collcal | sed "s/^/ptl 2 /" >> "$W/all"; rcheck "ptl collcal"
		# the long reads (rxch 128 KiB - 1 MiB) stay eager, as a 2-rank
		# allreduce's pulls do, in launches of their own whose limit is
		# 8 and 16 times ours (a blocking send's 8 times that: 512 KiB,
		# 1 MiB; sizes up to the limit would go through its slots)
		for rd in reads:8 reads1m:16; do
			PTL_MPI_EAGER_LIMIT=$(( ${PTL_MPI_EAGER_LIMIT:-8192} * ${rd#*:} )) rrun ptl 2 collcal "${rd%:*}" |
				sed "s/^/ptl 2 /" >> "$W/all"; rcheck "ptl collcal ${rd%:*}"
		done
		# the same reads with shm's method forced, through the segment
		# (PTL_SHM_CMA=0: "rxchm") and by CMA (1: "rxchc"): the rows'
		# reads go by the method shm picks for them, which need not be
		# the one it picks for these exchanges, and the model takes
		# each size's rates from the rows' method's
		for cma in 0 1; do
			[ "$cma" = 0 ] && fig=rxchm || fig=rxchc
			for rd in reads16:1 reads:8 reads1m:16; do
				PTL_SHM_CMA=$cma PTL_MPI_EAGER_LIMIT=$(( ${PTL_MPI_EAGER_LIMIT:-8192} * ${rd#*:} )) \
					rrun ptl 2 collcal "${rd%:*}" | sed "s/^rxch\(s\{0,1\}\) /$fig\1 /; s/^/ptl 2 /" >> "$W/all"
				rcheck "ptl collcal ${rd%:*} PTL_SHM_CMA=$cma"
			done
		done
		[ "$(nproc)" -lt 4 ] && { rrun ptl 4 collcal | sed "s/^/ptl 4 /" >> "$W/all"; rcheck "ptl 4-rank collcal"; }
		T=$TRIALS
		# each algorithm's launches leave out the ping-pongs above 8 B
		# and the 1 MiB bcast (mpi_allreduce's "rows"), so that shm's
		# report of them (the model's read methods, --read-methods)
		# counts the rows' moves, not the 128 KiB ping-pong's of the
		# same size class; the small figures stay, best of every launch
		# (PTL_BENCH_ROWS=all: the whole program, as before 2026-12-01
		# 19:30)
		rowsarg=rows
		[ "${PTL_BENCH_ROWS:-}" = all ] && rowsarg=
		if [ "${PTL_BENCH_APART:-}" = 1 ] || [ -z "$rowsarg" ]; then
			for a in $ALGOS; do
				for n in 2 4; do
					PTL_COLL_ALGO=allreduce=$a PTL_COLL_PORTS=$(ports_of "$a") rrun ptl $n allreduce $rowsarg |
						sed "s/^/$a $n /" >> "$W/algo"; rcheck "ptl allreduce $a on $n ranks"
				done
			done
			continue
		fi
		# every algorithm in each launch, on a communicator of its own
		# (its hints), their trials in turns: the rows of one schedule
		# under two names (at 2 ranks the ring, halving-doubling and
		# the tree exchange the same halves) measured 5.8 against 9.5
		# us (32 KiB) in launches of their own, a launch's speed being
		# drawn anew each time. The figures besides the rows, timed
		# once a launch, count for each algorithm
		for n in 2 4; do
			ALGOTAG=allreduce=each rrun ptl $n allreduce rows "$each" |
				awk -v n="$n" -v algos="$ALGOS" 'BEGIN { k = split(algos, a, " "); for (i = 1; i <= k; i++) is[a[i]] = 1 }
					($2 == "allreduce" || $2 == "switches") && ($1 in is) { $1 = $1 " " n; print; next }
					{ for (i = 1; i <= k; i++) print a[i], n, $0 }' >> "$W/algo"
			rcheck "ptl allreduce (each algorithm) on $n ranks"
		done
	done
done

# Ping-pong launches the probes missed. The host moves the two vCPUs
# within a launch too, so a launch probed near before and after can run
# far throughout: in one run (2026-12-05, kept as s49/g1) ptl's 8-byte
# half round trip read 0.45 and 0.38 us in rounds 1 and 2, probes 92-109
# ns, where the launch right after read 0.17-0.20 and round 3's 0.167,
# and the latency table said 2.2x MPICH. A launch whose 8-byte half
# round trip is over PTL_BENCH_OUTLIER (default 1.5; 0: never) times the
# same implementation's lowest launch of the run is run again the same
# way (rrun), up to PTL_BENCH_STATE_TRIES times while it stays over and
# the state budget lasts, every implementation alike. A relaunch under
# the mark replaces its lines (and its line in $W/states); one still over
# after the last try, or one that failed, leaves the launch as it was.
# Either way the table says so. shm's report (run's bulk1) stays the
# first launch's: what it picked, not how fast
# lat8 [FILE]: the 8-byte half round trip of a ping-pong launch's lines;
# pplines F L: those lines of $W/all (none where the launch printed none)
lat8() { awk '$3 == "lat" && $4 == 8 { print $5; exit }' "$@"; }
pplines() { [ "$2" -ge "$1" ] && sed -n "$1,$2p" "$W/all"; }
over() { [ -n "$1" ] && awk "BEGIN { exit !($1 > $OUTLIER * $2) }"; }
[ -n "${PTL_BENCH_FROM:-}" ] || : > "$W/relaunched"
if awk -v x="$OUTLIER" 'BEGIN { exit !(x + 0 > 0) }' && [ -s "$W/pplaunch" ]; then
	for i in $impls; do
		awk -v i="$i" '$1 == i' "$W/pplaunch" > "$W/pp1"
		low=$(while read -r _ f l _; do pplines "$f" "$l" | lat8; done < "$W/pp1" | sort -g | head -n 1)
		[ -n "$low" ] || continue
		k=0
		while read -r _ f l st; do
			k=$((k + 1))
			v=$(pplines "$f" "$l" | lat8) v2=$v tries=0 failed= n0=$(wc -l < "$W/states") b0=$(wc -l < "$W/bulk" 2>/dev/null || echo 0)
			over "$v" "$low" || continue
			while over "$v2" "$low" && [ "$tries" -lt "$STATE_TRIES" ] && budget_left; do
				tries=$((tries + 1))
				rrun "$i" 2 pingpong < /dev/null | sed "s/^/$i 2 /" > "$W/redo"
				v2=$(lat8 "$W/redo")
				# a launch that failed or printed other rows: the old one stays
				[ "$(cat "$W/rc")" = 0 ] && [ "$(wc -l < "$W/redo")" -eq $((l - f + 1)) ] && [ -n "$v2" ] ||
					{ v2= failed=1; rcheck "$i pingpong (run again)"; break; }
			done
			# none run (the state budget spent): said, kept
			[ "$tries" -gt 0 ] || { echo "$i $k $v budget 0 $OUTLIER" >> "$W/relaunched"; continue; }
			over "$v2" "$low" && v2=
			if [ -f "$W/bulk" ]; then
				awk -v n="$b0" 'NR <= n' "$W/bulk" > "$W/bulk.new"
				mv "$W/bulk.new" "$W/bulk"
			fi
			last=$(tail -n 1 "$W/states")
			awk -v n="$n0" -v s="$st" -v r="$last" -v ok="$v2" 'NR > n { exit } NR == s && ok != "" { print r; next } 1' \
				"$W/states" > "$W/states.new"
			mv "$W/states.new" "$W/states"
			if [ -n "$v2" ]; then
				awk -v f="$f" -v l="$l" -v redo="$W/redo" 'NR == f { while ((getline x < redo) > 0) print x }
					NR < f || NR > l' "$W/all" > "$W/all.new"
				mv "$W/all.new" "$W/all"
				echo "$i $k $v $v2 $tries $OUTLIER" >> "$W/relaunched"
			else
				echo "$i $k $v ${failed:+failed}${failed:-over} $tries $OUTLIER" >> "$W/relaunched"
			fi
		done < "$W/pp1"
	done
fi

[ -n "${PTL_BENCH_KEEP:-}" ] && mkdir -p "$PTL_BENCH_KEEP" && cp "$W/all" "$W/algo" "$PTL_BENCH_KEEP/" &&
	for f in bulk states bind4 sends lazy rdlazy relaunched; do
		[ ! -f "$W/$f" ] || cp "$W/$f" "$PTL_BENCH_KEEP/"
	done

# med FILE KEY...: median of the per-round medians of the rows that start with KEY
med() {
	f=$1; shift
	awk -v k="$*" 'index($0, k " ") == 1 { print $(NF - 2) }' "$f" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

echo "# ptl MPI vs MPICH / Open MPI: $ROUNDS interleaved rounds x $TRIALS trials; $(uname -r), $(nproc) cores;" \
	"load average ${load0:-?} at the start, $(cut -d' ' -f1 /proc/loadavg 2>/dev/null) at the end (over $(nproc): other work shared the cores)"
echo "# medians of per-round medians [min-max]; lat/nbx/allreduce in us, testany/test/iprobe in ns, bw in GB/s; ratio = ptl / other"
echo "# targets: lat <= MPICH, bw >= MPICH, allreduce <= Open MPI (lat, allreduce: ratio <= 1; bw: >= 1)"
awk '$3 == "lat" || $3 == "uxlat" || $3 == "uxpost" || $3 == "nbx" || $3 == "testany" || $3 == "test" ||
	$3 == "iprobe" || $3 == "bw" || $3 == "allreduce"' "$W/all" | awk -v impls="$impls" '
{ key = $1 " " $2 " " $3 " " $4; n[key]++; val[key, n[key]] = $5
  if (!(key in lo) || $6 < lo[key]) lo[key] = $6
  if (!(key in hi) || $7 > hi[key]) hi[key] = $7
  row = $2 " " $3 " " $4; if (!(row in seen)) { seen[row] = 1; order[++no] = row } }
function med(key,   i, j, t, m, a) { m = n[key]; for (i = 1; i <= m; i++) a[i] = val[key, i]
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return a[int((m + 1) / 2)] }
END {
  k = split(impls, im, " ")
  hdr = sprintf("%-2s %-9s %9s", "n", "figure", "bytes"); for (i = 1; i <= k; i++) hdr = hdr sprintf("  %-24s", im[i])
  for (i = 2; i <= k; i++) hdr = hdr sprintf("  ptl/%-7s", im[i]); print hdr
  for (o = 1; o <= no; o++) {
    split(order[o], f, " ")
    line = sprintf("%-2s %-9s %9s", f[1], f[2], f[3])
    for (i = 1; i <= k; i++) { key = im[i] " " order[o]
      if (key in n) line = line sprintf("  %8.3f [%.3f-%.3f]", med(key), lo[key], hi[key]); else line = line sprintf("  %-24s", "-") }
    for (i = 2; i <= k; i++) { a = "ptl " order[o]; b = im[i] " " order[o]
      if ((a in n) && (b in n) && med(b) > 0) line = line sprintf("  %8.2fx  ", med(a) / med(b)); else line = line sprintf("  %-11s", "-") }
    print line } }'
# the host state the launches ran in (rrun), by the lowest probe of the
# whole run (each launch's last field: the lowest when it ran, relaunches'
# and waits' probes counted): a launch of a run that started far, kept
# while far was the lowest known, is reported far
[ -s "$W/states" ] && awk '
function num(v) { return v ~ /^[0-9]+$/ }
{ l[NR] = $0; for (i = 5; i <= 8; i++) if (i != 7 && num($i) && (low == "" || $i + 0 < low)) low = $i + 0 }
END {
  if (low == "") { print "# host state: not probed (PTL_BENCH_STATE=0, no bench/core_rtt, or CPUs 0 and 1 not both ours): every launch kept as it ran"; exit }
  for (r = 1; r <= NR; r++) { split(l[r], f, " ")
    lim = 2 * low; isfar = 0
    for (i = 5; i <= 6; i++) if (num(f[i])) { s = f[i] + 0 > lim ? "far" : "near"; if (s == "far") isfar = 1
      if (!((s, "lo") in v) || f[i] + 0 < v[s, "lo"]) v[s, "lo"] = f[i] + 0; if (f[i] + 0 > v[s, "hi"]) v[s, "hi"] = f[i] + 0 }
    if (!(f[1] in seen)) { seen[f[1]] = 1; im[++k] = f[1] }
    n[f[1]]++; again[f[1]] += f[7] - 1
    if (isfar) { nf[f[1]]++; which[f[1]] = which[f[1]] " " f[2] "-rank " f[3] (f[4] != "-" ? " " f[4] : "") } }
  line = "# host state: the round trip of a cache line between cores 0 and 1 (bench/core_rtt)"
  if (("near", "lo") in v) line = line sprintf(" near %d-%d ns", v["near", "lo"], v["near", "hi"])
  if (("far", "lo") in v) line = line sprintf(", far %d-%d ns", v["far", "lo"], v["far", "hi"])
  line = line "; launches kept (of them far, relaunches for the state):"
  for (i = 1; i <= k; i++) line = line sprintf(" %s %d (%d, %d)", im[i], n[im[i]], nf[im[i]], again[im[i]])
  print line
  for (i = 1; i <= k; i++) if (nf[im[i]]) print "#   kept far, " im[i] ":" which[im[i]] }' "$W/states"
[ -s "$W/relaunched" ] && awk '{ x = $6
    how = $4 == "budget" ? "the state budget spent, kept" : $4 == "failed" ? "a relaunch failed, kept" \
      : $4 == "over" ? "none under the mark, kept" : $4 " us"
    s = s sprintf("%s %s round %d (%s us -> %s, %d relaunch%s)", NR > 1 ? ";" : "", $1, $2, $3, how, $5, $5 == 1 ? "" : "es") }
  END { print "#   ping-pong launches run again, their 8 B half round trip over " (x == "" ? "PTL_BENCH_OUTLIER" : x "x") " the implementation'"'"'s lowest launch:" s }' "$W/relaunched"
# the trials run again because a rank's core ran slow around them
# (bench/bench_slow.h): the ping-pong launches' "slow" lines, and the
# table's allreduce launches' "slowrows" (from 2026-12-07; 4 ranks on 2
# cores take no probes: every trial kept); runs kept before them have none
awk -v impls="$impls" '($3 == "slow" || $3 == "slowrows") && NF >= 6 { w = $3 == "slow" ? "ping-pong" : $2 "-rank allreduce"
    if (!(w in seen)) { seen[w] = 1; ws[++nw] = w }
    a[w, $1] += $4; k[w, $1] += $5; n[w, $1] += $6 }
  END { m = split(impls, im, " ")
    for (j = 1; j <= nw; j++) { w = ws[j]; s = ""
      for (i = 1; i <= m; i++) if ((w, im[i]) in n) s = s sprintf("%s %s %d runs again for %d trials (%d kept slow)", s == "" ? "" : ";", im[i], a[w, im[i]], n[w, im[i]], k[w, im[i]])
      print "#   " w " trials run again for a core that ran slow around them (bench/bench_slow.h):" s } }' "$W/all"

# The cost model's prediction beside each algorithm's measured time.
# cal N FIG BYTES: of ptl's N-rank runs, a figure that moves 1 KiB or more:
# the lower quartile of its launches' best trials (PTL_BENCH_CALQ); a
# smaller one: the best trial of all. The copies come in two states, the
# fast one in a few launches only (8 KiB MPI_Isend ping-pong 0.60 us
# against 1.05-1.6 in the rest, 16 KiB read exchange 2.2 against 3.1,
# 2026-12-02) which the rows' own best trials reach in some runs only:
# the best of every launch took it whenever one launch had it (the 2-rank
# 32 KiB and 256 KiB rows 0.62-0.88x, 4 KiB 0.88x), the median of the
# launches never (256 KiB 1.1-1.3x). On the eight kept runs of sessions
# 15-16 (PTL_BENCH_FROM): rows within 10% 177 -> 223 of 280 at 2 ranks,
# 126 -> 138 at 4. (PTL_BENCH_STAT=med: the best launch's median, for
# cal, best and algo)
cal() {
	q=$([ "$3" -ge 1024 ] && echo "$CALQ" || echo 0)
	mm "$1" && q=0.5
	# a 2-rank figure the rows' launches time too (the ping-pongs, o,
	# the barrier, the bcast, MPI_COMM_SELF's call) from those alone:
	# a launch's host state holds for all it times, and the best of
	# every launch came from another state where the run's wait for the
	# near one ran out (a run, 2026-12-05, with its first launches near
	# and the rest far: the 2-rank ring's 8 B rows measured 0.86 us, far,
	# and predicted 0.45 from the near launches' ping-pong; 17 of the
	# 35 2-rank rows within 10%). PTL_BENCH_CAL=all: every launch's
	cf="$W/all $W/algo"
	[ "$1" -le "${cores:-2}" ] && [ "${PTL_BENCH_CAL:-}" != all ] &&
		awk -v n="$1" -v f="$2" -v b="$3" '$2 == n && $3 == f && $4 == b { ok = 1; exit } END { exit !ok }' "$W/algo" 2>/dev/null &&
		cf="$W/algo"
	awk -v n="$1" -v f="$2" -v b="$3" -v med="$(mm "$1" && echo 1)" '(FILENAME ~ /algo$/ || $1 == "ptl") && $2 == n && $3 == f && $4 == b { print (ENVIRON["PTL_BENCH_STAT"] == "med" || med ? $5 : $6) }' \
		$cf 2>/dev/null | sort -g |
		awk -v q="$q" '{ v[NR] = $1 } END { if (NR) print v[1 + int(q * (NR - 1) + 0.5)] }'
}
# mm N: whether N-rank figures go by the median of their launches' medians
# (bound cores, PTL_BENCH_CWAIT=bound: where the ranks take turns on the
# cores a launch's trials spread both ways - 4-rank 8 B shifts 3.0 - 8.9
# us in one launch, medians 5.5 - 7.5 - and its best trial is the tail:
# the model takes the launches' typical call, as the rows it predicts)
mm() { [ "$1" -gt "${cores:-0}" ] && [ "${cwmode:-}" = bound ]; }
# fig STAT: how a launch's figure stands in for the launches (its median
# over the launches, or the best): pick from lines of "LAUNCH-MEDIAN BEST"
fig() { if [ "$1" = mm ]; then awk '{ print $1 }' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[1 + int((NR - 1) / 2 + 0.5)] }'
	else awk '{ print $2 }' | sort -g | head -n 1; fi; }
# best FILE KEY...: the best trial of the rows that start with KEY
best() {
	f=$1; shift
	awk -v k="$*" 'index($0, k " ") == 1 { print $(NF - 2), (ENVIRON["PTL_BENCH_STAT"] == "med" ? $(NF - 2) : $(NF - 1)) }' "$f" |
		fig "$(mm "$2" && echo mm)"
}
# predict_turns ARGS...: "TIME TURNS", the model's time in us and, bound
# cores, its switches a core a call (ptltool coll --json's predicted_us
# and turns; 0 when not bound); nothing where it predicts none
predict_turns() {
	"$B/tools/ptltool" coll "$@" --json 2>/dev/null | awk '
		match($0, /"predicted_us": [0-9.e+-]+/) { t = substr($0, RSTART + 16, RLENGTH - 16) }
		match($0, /"turns": [0-9.e+-]+/) { w = substr($0, RSTART + 9, RLENGTH - 9) }
		END { if (t != "") print t, (w == "" ? 0 : w) }'
}
# predict ARGS...: the model's time in us
predict() { predict_turns "$@" | awk '{ print $1 }'; }
calc() { awk "BEGIN { v = $1; printf \"%.6g\", v }"; }
# algo N ALGO FIG BYTES: the best trial of ALGO's N-rank rows' launches
# (every algorithm's since 2026-12-02: the figures besides the rows appear
# once per algorithm there, and count so in cal's quantiles, which they
# shift little: each launch's figure the same number of times)
algo() { awk -v a="$2" -v n="$1" -v f="$3" -v b="$4" '$1 == a && $2 == n && $3 == f && $4 == b { print $5, (ENVIRON["PTL_BENCH_STAT"] == "med" ? $5 : $6) }' "$W/algo" |
	fig "$(mm "$1" && echo mm)"; }
# secant FN SIZE GOAL: the time T (us, from 0.001) for which FN SIZE T,
# which grows with T, gives GOAL; nothing, and status 1, where FN takes
# no longer with T of 1000 us than with none (or gave nothing): T does
# not move its model. It steps from 0.001 and 1 us, or from 0.001 and
# 1000 where 1 is no longer than none: flat (a model that takes no such
# copy, or takes it only past a step) or falling (a copy that ends in a
# wait the model makes anyway, and the order of what follows changes).
# From a flat start it had stayed at 1 and answered that (the 2-rank 2
# KiB eager copy read 2.048 GB/s, 1 KiB's on bound cores 1.024), from a
# falling one gone to 0.001 (the 4-rank exchanges' copy at 128 KiB,
# 131,072 GB/s), in s69/r1 - r3, 2026-12-07
notlonger() { [ -z "$1" ] || [ -z "$2" ] || [ "$(calc "$2 - $1 <= 1e-9 * $1")" = 1 ]; }
# unsolved FN SIZE: why secant answered nothing for FN at SIZE, for the
# calibration's lines
unsolved() { if [ -n "$($1 "$2" 0.001)" ]; then echo "the model's takes no copy there"; else echo "the model gave nothing"; fi; }
secant() {
	sf=$1 sl=$2 sh=$3
	t0=0.001 p0=$($sf "$sl" 0.001) t1=1 p1=$($sf "$sl" 1)
	if notlonger "$p0" "$p1"; then
		t1=1000 p1=$($sf "$sl" 1000)
		notlonger "$p0" "$p1" && return 1
	fi
	for it in 1 2 3 4 5; do
		t2=$(calc "$p1 != $p0 ? $t1 + ($sh - $p1) * ($t1 - $t0) / ($p1 - $p0) : $t1")
		t2=$(calc "$t2 > 0.001 ? $t2 : 0.001")
		t0=$t1 p0=$p1 t1=$t2 p1=$($sf "$sl" "$t2")
	done
	# (a model that gave nothing midway leaves calc nothing to answer)
	[ -n "$t1" ] || return 1
	echo "$t1"
}
hrt=$(cal 2 pingpong 8)
gamma=$(cal 2 gamma 0)
o=$(cal 2 overhead 8)
post=$(cal 2 post 8)
# postm keeps the measured figure for the calibration line, which names
# it either way; PTL_BENCH_POST=free takes it from the model alone
postm=$post
[ "${PTL_BENCH_POST:-}" = free ] && post=0
bar2=$(cal 2 barrier 0)
[ -s "$W/algo" ] && [ -n "$hrt" ] && [ -n "$gamma" ] && [ -n "$o" ] && [ -n "$bar2" ] || exit 0
alpha=$(calc "$hrt - 2 * $o > 0.001 ? $hrt - 2 * $o : 0.001")
# The rendezvous' calibration: the smallest ping-pong above what shm
# carries inline (16 KiB and a header since nal.h's NAL_HDR_ROOM, whose
# 16 KiB get is answered inline); runs kept before that have 16 KiB.
rl=20480
pprl=$(cal 2 pingpong $rl)
[ -n "$pprl" ] || { rl=16384; pprl=$(cal 2 pingpong $rl); }
pp120k=$(cal 2 pingpong 122880)
pp128k=$(cal 2 pingpong 131072)
pp1m=$(cal 2 pingpong 1048576)
[ -n "$pprl" ] && [ -n "$pp120k" ] && [ -n "$pp128k" ] || exit 0
# How shm moves a rendezvous's bytes, by size: by CMA, split between the
# two cores from SHM_SPLIT_MIN (one copy on each, at the exchange rates
# below: --split-min), or through the segment (bounce, or bounce with
# non-temporal stores: two copies pipelined over both cores, at the move
# rates: --move-rates). Unforced, shm picks per peer and size class the
# one it measured fastest (shm_bulk.c), and says which with
# PTL_SHM_BULK_REPORT=1 (run() keeps its lines in $W/bulk): each class's
# method is the one that took the most timed moves in the 2-rank
# ping-pongs (those the move rates and the checks come from; the pick
# swings between two close methods in a run, the counts say which led),
# passed as --bulk-methods. With PTL_SHM_CMA=1 every move is CMA; where
# the ranks outnumber the cores (4 ranks here) every move bounces,
# unchosen (with PTL_SHM_CMA=1 by CMA, not split: split4).
# shm.h's SHM_SPLIT_MIN (KiB, shifted), 64 KiB when unreadable
split=$(sed -n 's/^#define SHM_SPLIT_MIN (\([0-9][0-9]*\)u << 10).*/\1/p' "$S/lib/nal/shm/shm.h" 2>/dev/null)
split=$(( ${split:-64} * 1024 ))
split4=1099511627776
class0=$(sed -n 's/^#define SHM_CH_CLASS0 (\([0-9][0-9]*\)u << 10).*/\1/p' "$S/lib/nal/shm/shm.h" 2>/dev/null)
class0=$(( ${class0:-32} * 1024 ))
last=$(sed -n 's/^#define SHM_CH_CLASSES \([0-9][0-9]*\).*/\1/p' "$S/lib/nal/shm/shm.h" 2>/dev/null)
last=$(( ${last:-8} - 1 )) # the last class has no upper bound
bulkm= bulksays=
if [ "${PTL_SHM_CMA:-}" = 1 ]; then
	splitsays="copies from $split B split with the receiver (PTL_SHM_CMA=1)"
elif [ -s "$W/bulk" ] && grep -q '^2 pingpong .* class ' "$W/bulk"; then
	# "K:METHOD MOVES..." per class K: the timed moves by each method
	picks=$(awk '$1 == 2 && $2 == "pingpong" && $9 == "class" {
		k = $10; for (i = 16; i + 1 <= NF; i += 2) { split($(i + 1), v, ":"); n[k, $i] += v[1]; cl[k] = 1 } }
		END { for (k in cl) { best = ""; says = ""
			split("bounce nt cma", ms, " ")
			for (j = 1; j <= 3; j++) { c = n[k, ms[j]] + 0; says = says " " ms[j] " " c
				if (best == "" || c > n[k, best]) best = ms[j] }
			print k, best, says } }' "$W/bulk" | sort -n)
	# a class's bounds: class k from class0 << (k-1) to class0 << k (class 0 from 0)
	bulkm=$(echo "$picks" | awk -v c0="$class0" -v sp="$split" -v last="$last" '{
		lo = $1 ? c0 * 2 ^ ($1 - 1) : 0; hi = c0 * 2 ^ $1
		if ($2 != "cma") { printf "%s%d:move", sep, lo; sep = "," }
		else if (lo >= sp) { printf "%s%d:split", sep, lo; sep = "," }
		else { printf "%s%d:copy", sep, lo; sep = ","; if (sp < hi && $1 < last) printf ",%d:split", sp } }')
	bulksays=$(echo "$picks" | awk -v c0="$class0" '{ lo = $1 ? c0 * 2 ^ ($1 - 1) / 1024 "K" : "0"
		printf "%s%s: %s (%s %s, %s %s, %s %s)", sep, lo, $2, $3, $4, $5, $6, $7, $8; sep = "; " }')
	splitsays="shm's picks by size (PTL_SHM_BULK_REPORT, the 2-rank ping-pongs' timed moves by method; split CMA from $split B): $bulksays"
	bulkm="--bulk-methods $bulkm"
else
	split=1099511627776 splitsays="copies through the segment, none split (no chooser report: older measurements)"
fi
beta=$(awk -v a="$pprl" -v l="$pp120k" -v rl="$rl" 'BEGIN { d = l - a; if (d <= 0) d = l;
	printf "%.0f", (122880 - rl) / (d * 1e-6) }')
rndv=$(calc "$pprl - $rl / $beta * 1e6 - 3 * $alpha - 3 * $o")
rndvfrom="$((rl / 1024)) KiB ping-pong - bytes/beta - 3 alpha - 3 o"
# bench/mpi_collcal.c's figures, when the run has them (PTL_BENCH_FROM on
# older measurements: the figures above stand in):
#   the rendezvous' own cost: an 8-byte MPI_Ssend ping-pong (header, the
#   receiver's get, the reply; nothing to copy) less 3 alpha + 3 o
ss8=$(cal 2 ssend 8)
if [ -n "$ss8" ]; then
	rndv=$(calc "$ss8 - 3 * $alpha - 3 * $o")
	rndvfrom="8 B MPI_Ssend ping-pong $ss8 us - 3 alpha - 3 o"
fi
rndv=$(calc "$rndv > 0 ? $rndv : 0")
#   eager messages (up to the eager limit: inline through the ring, from
#   the user's buffer into the posted receive): what their bytes cost,
#   the slope of the 1 KiB - 8 KiB MPI_Isend ping-pongs (epp); without
#   them, beta
# The rows' launches time those two too (mpi_allreduce's "pingpong 1024"
# and "pingpong 8192"), in the rows' state: the figures from there where
# they are (a quartile of the collcal launches' 8 KiB, 0.61 us where the
# rows' launches' best was 0.95, had the 2-rank 4 KiB rows at 0.72x);
# PTL_BENCH_XCH=collcal the collcal launches' always
a1=${ALGOS%% *}
e1k= e8k=
[ "${PTL_BENCH_XCH:-}" != collcal ] && e1k=$(algo 2 "$a1" pingpong 1024) e8k=$(algo 2 "$a1" pingpong 8192)
[ -n "$e1k" ] && [ -n "$e8k" ] || e1k=$(cal 2 epp 1024) e8k=$(cal 2 epp 8192)
ebeta=$beta
[ -n "$e1k" ] && [ -n "$e8k" ] &&
	ebeta=$(awk -v a="$e1k" -v b="$e8k" -v d="$beta" 'BEGIN { printf "%.0f", (b > a ? (8192 - 1024) / ((b - a) * 1e-6) : d) }')
#   request-free messages (ptl's short allreduce rounds: inline,
#   ACK-free, no request at either end): their CPU at each end (sovh: a
#   blocking MPI_Send's and an MPI_Recv's of one that is there) and the
#   time between, the blocking 8-byte ping-pong less both
so=$(cal 2 sovh 8)
spp8=$(cal 2 spp 8)
# rsize: what a message costs its receiver by size (--recv-costs,
# --cross-costs)
small= rsize=
if [ -n "$so" ] && [ -n "$spp8" ]; then
	# both ends' CPU is at most the whole half round trip (a flood
	# measured while another process had the core says more)
	so=$(calc "2 * $so > $spp8 - 0.001 ? ($spp8 - 0.001) / 2 : $so")
	salpha=$(calc "$spp8 - 2 * $so")
	small="--small-overhead $so --small-alpha $salpha"
	# and what the receiver's CPU pays by size (the lines it pulls over
	# from the sender's core, one at a time at first): each blocking
	# ping-pong (8 B - 4 KiB, as far as the direct rounds go request-free) beyond both ends, the 8-byte alpha and the
	# sender's copy at the eager rate
	srecv= rrecv=
	for l in 8 64 128 256 512 1024 2048 4096; do
		h=$(cal 2 spp "$l")
		[ -n "$h" ] || continue
		a=$(calc "$h - 2 * $so - $salpha - $l / $ebeta * 1e6")
		srecv="$srecv${srecv:+,}$l:$(calc "$a > 0 ? $a : 0")"
		[ "$l" -le 512 ] && rrecv="$rrecv${rrecv:+,}$l:$(calc "$a > 0 ? $a : 0")"
	done
	[ -n "$srecv" ] && small="$small --small-recv-costs $srecv"
	# The same lines for the messages with requests (--recv-costs), up to
	# 512 B: past it the eager rates (ping-pongs of 1 and 8 KiB) hold
	# them. Without it the 2-rank 512 B rows of the ring family, tree
	# and halving-doubling (256 B and 512 B messages into posted MEs)
	# read 0.83-0.89x in every run, the 64 B rows 0.95-0.98x: a 256 B
	# ping-pong took 0.04 us over the 64 B one, as long as a 512 B one,
	# where interpolating 64 - 512 B gave 256 B half that
	[ -n "$rrecv" ] && rsize="--recv-costs $rrecv"
	# and what one costs its receiver when it crossed one going back
	# (an exchange, as direct recursive doubling's rounds are): the
	# blocking exchange (srx: MPI_Sendrecv, at 8 and 64 B from
	# 2026-12-07; else sxch: MPI_Send then MPI_Recv at both ranks)
	# beyond the ping-pong's half round trip of the same size
	cross= scross= bysr=
	for l in 8 64 512 1024 2048 4096; do
		h=$(cal 2 srx "$l") hp=$(cal 2 spp "$l")
		[ -n "$h" ] && bysr=", the exchanges by MPI_Sendrecv where the run has them" || h=$(cal 2 sxch "$l")
		[ -n "$h" ] && [ -n "$hp" ] || continue
		c=$(calc "$h > $hp ? $h - $hp : 0")
		scross="$scross${scross:+,}$l:$c"
		[ "$l" -le 512 ] && cross="$cross${cross:+,}$l:$c"
	done
	[ -n "$cross" ] && rsize="$rsize --cross-costs $cross"
	# request-free messages (direct recursive doubling) take the whole
	# table, measured on their path; the messages with requests keep
	# 8-512 B (coll_cost.c: past that the request-free 4 KiB point
	# overstated the 2 KiB messages of the ring family's 4 KiB rows)
	[ -n "$scross" ] && small="$small --small-cross-costs $scross"
fi
eager=${PTL_MPI_EAGER_LIMIT:-8192}
# A collective's sends may stay eager beyond the eager limit (mpi_coll.c's
# COLL_EAGER_TIMES, as a blocking MPI_Send does): above the limit the
# model has the receiver read such a message (its CPU copies, no get hop)
# and acknowledge it; shm carries up to 16 KiB and a header inline
# (nal.h's NAL_HDR_ROOM), and reads from there. What that read costs
# beyond its bytes: the blocking 32 KiB ping-pong (bench/mpi_pingpong.c,
# eager up to 8 times the limit; the first power of two shm reads) less
# o + alpha + o + bytes/beta.
ctimes=$(sed -n 's/^#define COLL_EAGER_TIMES \([0-9][0-9]*\).*/\1/p' "$S/lib/mpi-shim/mpi_coll.c" 2>/dev/null)
ceager=$((eager * ${ctimes:-1}))
rcopy=
if [ "$ceager" -gt "$eager" ]; then
	latrd=$(cal 2 lat 32768)
	rc=$(calc "${latrd:-0} - 2 * $o - $alpha - 32768 / $beta * 1e6")
	rc=$(calc "$rc > 0 ? $rc : 0")
	rcopy="--inline-max $eager --recv-copy-cost $rc"
fi
# A 2-rank allreduce on one host sends eagerly further still
# (mpi_coll.c's mpi_coll_pull: MPI_MODE_PULL, mpi_pt2pt.c's
# MPI_PULL_EAGER times the limit), read by the receiver the same way.
ptimes=$(sed -n 's/^#define MPI_PULL_EAGER \([0-9][0-9]*\).*/\1/p' "$S/lib/mpi-shim/mpi_pt2pt.c" 2>/dev/null)
peager=$((eager * ${ptimes:-${ctimes:-1}}))
# Whether MPI_Allreduce leaves the input apart for every algorithm that
# can read it (coll_input_apart; ptltool refuses --input for the others):
# then none of them copies it first, and the call is the checks alone. If
# the rings cannot, only recursive doubling up to 4 KiB does (below).
allapart=
"$B/tools/ptltool" coll --op allreduce --ranks 4 --bytes 4K --algo ring --input >/dev/null 2>&1 && allapart=1
bc8=$(cal 2 bcast 8)
cmd=$(calc "${bc8:-$bar2} < $bar2 ? $bar2 - ${bc8:-$bar2} : 0")
# What a collective's wait for a message costs its rank when the message
# comes (the poll that saw it, the pass over what it waits for; o is
# measured with messages that were there already): the 8-byte MPI_Bcast
# from alternating roots (the leaf waits) beyond bench/mpi_collcal.c's
# root side of it alone ("bcroot": the call and its send, no wait), alpha
# and the leaf's o
wake=0 wk=
br=$(cal 2 bcroot 8)
if [ -n "$br" ] && [ -n "$bc8" ]; then
	wake=$(calc "$bc8 - $br - $alpha - $o > 0 ? $bc8 - $br - $alpha - $o : 0")
	wk="--wake-cost $wake"
fi
# The rows' program calls the collective back to back (no barrier
# between), so a rank enters the next call as soon as its own part of
# the last is done, and its sends go before their receives are posted
# (they wait as unexpected messages): the model runs 8 calls so and takes
# the period (--calls, --unexpected), for the rows, the barriers that
# calibrate them and the checks that are loops of collectives too.
loop=${PTL_BENCH_LOOP-"--calls 8 --unexpected"}
cores=$(nproc)
# ACK-free up to the eager limit, at least 1024 B, at most 8192 B (mpi_pt2pt.c;
# a limit written with K or M is taken as 8 KiB or more)
case $eager in
*[!0-9]*) noack=8192 ;;
*) noack=$((eager > 8192 ? 8192 : eager < 1024 ? 1024 : eager)) ;;
esac
[ -n "${PTL_MPI_NOACK_OFF:-}" ] && noack=0
# mpi_coll.c's limits: schedule receives up to COLL_LAZY_MAX post no ME;
# allreduces up to RD_DIRECT_MAX on 2^k ranks run recursive doubling
# directly (no engine), their receives up to RD_DIRECT_LAZY_MAX posting no
# ME and their sends request-free when ACK-free (mpi_send_small_ctx)
clazy=$LAZY
rdmax=$(cdef RD_DIRECT_MAX 4096)
rdlazy=$RDLAZY
rdsmall=$((rdmax < noack ? rdmax : noack))
# Request-free schedule sends: a schedule's send that can go inline and
# ACK-free leaves with no request (mpi_coll.c's cb_send, since
# 2026-12-06), as direct recursive doubling's rounds do. So every model of
# a schedule here (the rows, the barrier the call term comes from, the
# allgathers and barriers that solve rates and switches, the checks)
# prices its messages up to --small-max as those rounds' (small: sovh at
# each end, salpha between, their receivers' costs) and charges no cost
# per command (--cmd-cost, the barrier less the 8-byte bcast: the
# bookkeeping of the request each command made), what is left of the
# engine's own per call going to the call term. --small-max stays where
# the request-free figures were measured (rdsmall, 4 KiB; sends go so up
# to noack): priced request-free up to noack on the tables' last points,
# the 4-rank rows within 10% fell by 2 - 3 in each run below. Runs kept
# with such sends, re-modelled: 2-rank rows within 10% 28 -> 33 (s55/n1),
# 32 -> 34 (s56/a1), 34 -> 35 (s56/a3), 4-rank 27 -> 30, 26 -> 30, 32 ->
# 32. PTL_BENCH_SENDS=req: with requests and the command cost, as before.
engsmall= engcmd=$cmd
if [ "$SENDS" = free ] && [ "$rdsmall" -gt 0 ] && [ -n "$small" ]; then
	engsmall="--small-max $rdsmall $small" engcmd=0
fi
b0=$(predict --op barrier --ranks 2 --bytes 0 $loop --alpha "$alpha" --beta "$beta" --overhead "$o" --cmd-cost "$engcmd" $wk $engsmall)
callb=$(calc "$bar2 - $b0 > 0 ? $bar2 - $b0 : 0")
echo
echo "# predicted (collectives/coll_cost.c via ptltool coll) vs measured ptl allreduce (best of $ROUNDS rounds x $LAUNCHES launches x $TRIALS trials), us; ratio = predicted / measured"
echo "# a schedule's messages priced $([ -n "$engsmall" ] && echo "request-free up to $rdsmall B (--small-max), no cost per command" || echo "with requests, $cmd us per command") (the measured MPI sent them $SENT; PTL_BENCH_SENDS)"
echo "# calibration from this run (its figures below 1 KiB: the best trial of every launch; from 1 KiB: the $CALQ quantile of the launches' best trials, PTL_BENCH_CALQ)"
echo "# calibration from this run (2 ranks, a core each): o $o us/message; receive posted $postm us (above $clazy B; direct recursive doubling: $rdlazy B; $([ "${PTL_BENCH_POST:-}" = free ] && echo "not charged: PTL_BENCH_POST=free" || echo charged)); $cmd us per command (barrier $bar2 us - 8 B bcast ${bc8:-?} us); alpha $alpha us ($hrt us 8 B half round trip - 2 o);"
[ -n "$wk" ] && echo "#   a collective's rank that waited for a message pays $wake us when it comes (8 B MPI_Bcast $bc8 us - its root's side alone $br us - alpha - o)"
echo "#   beta $beta B/s (one core's copy; ping-pongs $((rl / 1024)) KiB $pprl us, 120 KiB $pp120k us); rendezvous above $eager B, $rndv us each ($rndvfrom); $splitsays; gamma $gamma ns/B (rows from 4 KiB at their size:$(for b in 4096 32768 262144; do v=$(CALQ=0; cal 2 gamma $b); printf ' %s' "$((b / 1024))K ${v:-?}"; done)); call $callb us (barrier $bar2 us - model's $b0 us) + MPI_COMM_SELF allreduce of the size; acked sends"
# one BYTES CALL SPLIT-COST CMD [ARGS]: one copy of BYTES; a 2-rank bcast
# is one transfer, without the collective's call and commands a half
# round trip
# (by shm's picks; osplit= obulk= for a move among 4 ranks: bounced, unsplit)
one() { b=$1 c=$2 sc=$3 cm=$4; shift 4
	predict --op bcast --ranks 2 --bytes "$b" --alpha "$alpha" --beta "$beta" --overhead "$o" --call "$c" --cmd-cost "$cm" \
	--rndv-min "$eager" --rndv-cost "$rndv" --split-min "${osplit:-$split}" --split-cost "$sc" ${obulk-$bulkm} "$@"; }
splitc=$(calc "$pp128k - $(one 128K 0 0 0)")
splitc=$(calc "$splitc > 0 ? $splitc : 0")
# The rendezvous copy's rate at each size a schedule copies (16 KiB -
# 1 MiB; bench/mpi_collcal.c's exchanges, both CPUs copying at once into
# buffers their peers then read, as a 2-rank schedule's step): the bytes
# each CPU copies (the peer's message, or when split its own half and the
# peer's) over what the exchange takes beyond the model's with an instant
# copy. A split's own cost is in its rate (--split-cost 0).
# xfixed BYTES: the model's 2-rank exchange (recursive doubling without
# its call, commands or reduction) with an instant copy
xfixed() { predict --op allreduce --ranks 2 --bytes "$1" --elem 8 --algo recursive_doubling --input --alpha "$alpha" \
	--beta "$ebeta" --gamma 0 --overhead "$o" --cpu-copies --rndv-min "$eager" --rndv-cost "$rndv" --split-min "$split" $bulkm \
	--recv-post "${post:-0}" --lazy-max "$clazy" --copy-rates 1:1e18; }
# xf FIG SIZE: FIG's exchange of SIZE alone where the run has it
# (mpi_collcal's "xchs", "rxchs", "rxchms", "rxchcs": each round's
# exchange timed without the read of what came that follows it, which is
# the reduction's, gamma, in a schedule, and comes after none of a 2-rank
# allreduce's second step), else FIG (timed with that read: kept runs
# from before 2026-12-01 19:00); PTL_BENCH_SINK=read takes FIG always
# (the model before, for an A/B on the same data)
xf() {
	if [ "${PTL_BENCH_SINK:-}" != read ] && [ -n "$(cal 2 "${1}s" "$2")" ]; then echo "${1}s"; else echo "$1"; fi
}
# xrates FIG FIXED SIZE...: the rates of FIG's exchanges of each SIZE,
# bytes over what one takes beyond FIXED's (the model's with an instant
# copy): "SIZE:RATE,...|what to print"
xrates() {
	fig=$1 fx=$2 lst= says=
	shift 2
	for l; do
		h=$(cal 2 "$(xf "$fig" "$l")" "$l")
		[ -n "$h" ] || continue
		f=$($fx "$l")
		r=$(calc "$h > $f ? $l / (($h - $f) * 1e-6) : 0")
		[ "$r" = 0 ] && continue
		lst="$lst${lst:+,}$l:$r"
		says="$says $((l / 1024))K $(calc "$r / 1e9") ($h us)"
	done
	echo "$lst|$says"
}
x=$(xrates xch xfixed 16384 32768 65536 131072 262144 524288 1048576)
rates=${x%%|*} ratesays=${x#*|}
# The receiver's read of an eager message past the inline limit (a
# schedule's sends up to COLL_EAGER_TIMES times the eager limit, a 2-rank
# allreduce's up to MPI_PULL_EAGER times; read by CMA into the posted
# receive, no get and no split) is a path of its own: its rate at each
# size from mpi_collcal's rxch exchanges (MPI_Irecv, blocking MPI_Send,
# MPI_Wait: eager up to 8 times the limit, both ranks reading at once as
# a schedule's step does), over what one takes beyond the model's exchange
# with an instant read; the read's fixed cost is in its rate. Past 64 KiB
# (a 2-rank allreduce's pulls) the model takes the rendezvous exchanges'
# rates, whose fixed cost is in them too: from 128 KiB their copies are
# split, each CPU copying as many bytes from the other's memory as a read
# does (128 KiB 15.4 us either way, the read by a blocking send with
# PTL_MPI_EAGER_LIMIT=131072). --recv-copy-cost is then for runs without
# the tables.
rfixed() { predict --op allreduce --ranks 2 --bytes "$1" --elem 8 --algo recursive_doubling --input --alpha "$alpha" \
	--beta "$ebeta" --gamma 0 --overhead "$o" --cpu-copies --acked-sends="$alpha" --noack-max "$noack" \
	--rndv-min "$peager" --inline-max "$eager" --read-rates 1048576:1e18 --recv-post "${post:-0}" --lazy-max "$clazy"; }
# How the 2-rank rows' reads go, by size (--read-methods): shm's picks
# for them (PTL_SHM_BULK_REPORT), class by class the method with the most
# timed moves, as --bulk-methods says the ping-pongs'. A read moved
# through the segment (bounce, NT) is two copies, out on the sender's CPU
# and in on the receiver's a piece behind (an exchange's CPUs each copy
# both); a CMA read one, the receiver's (split from SHM_SPLIT_MIN: half
# each). Each size's rate then from the read exchanges by the rows'
# method (rxchm: PTL_SHM_CMA=0, rxchc: 1; kept runs without them: rxch,
# whatever shm picked there), solved through the model's exchange with
# that method (rxm, secant), as the 4-rank reads are (rx4).
# shm.h's SHM_PIECE: the bytes a move through the segment hands over at a time
piece=$(sed -n 's/^#define SHM_PIECE (\([0-9][0-9]*\)u << 10).*/\1/p' "$S/lib/nal/shm/shm.h" 2>/dev/null)
piece=$(( ${piece:-64} * 1024 ))
# shm.h's SHM_MAX_INLINE: the largest payload shm's ring carries inline
ringmax=$(sed -n 's/^#define SHM_MAX_INLINE (\([0-9][0-9]*\)u + NAL_HDR_ROOM).*/\1/p' "$S/lib/nal/shm/shm.h" 2>/dev/null)
# ringing: reads above the eager limit up to ringmax go through the ring
# (--read-methods ring; PTL_BENCH_READS=move: not)
ringing() { [ "${ringmax:-0}" -gt "$eager" ] && [ "${PTL_BENCH_READS:-}" != move ]; }
readm= readmsays= reads= readsays=
# steps PICKS: "K METHOD ..." per class K as --bulk-methods steps
steps() { echo "$1" | awk -v c0="$class0" -v sp="$split" -v last="$last" '{
	lo = $1 ? c0 * 2 ^ ($1 - 1) : 0; hi = c0 * 2 ^ $1
	if ($2 != "cma") { printf "%s%d:move", sep, lo; sep = "," }
	else if (lo >= sp) { printf "%s%d:split", sep, lo; sep = "," }
	else { printf "%s%d:copy", sep, lo; sep = ","; if (sp < hi && $1 < last) printf ",%d:split", sp } }'; }
if [ -n "$rcopy" ] && [ "${PTL_SHM_CMA:-}" != 1 ] && [ "${PTL_BENCH_READS:-}" != copy ] && [ -s "$W/bulk" ]; then
	# (PTL_BENCH_PICKS=table: from the table's launches instead, the whole
	# mpi_allreduce with its bulk ping-pongs, ptl's own choice of algorithm:
	# for an A/B on the same data with the rows' launches' "rows")
	rsel='$3 ~ /^allreduce=/'
	[ "${PTL_BENCH_PICKS:-}" = table ] && rsel='$3 == "any"'
	rpicks=$(awk "\$1 == 2 && \$2 == \"allreduce\" && $rsel && \$9 == \"class\" {"'
		k = $10; for (i = 16; i + 1 <= NF; i += 2) { split($(i + 1), v, ":"); n[k, $i] += v[1]; cl[k] = 1 } }
		END { for (k in cl) { best = ""; split("bounce nt cma", ms, " ")
			for (j = 1; j <= 3; j++) if (best == "" || n[k, ms[j]] + 0 > n[k, best] + 0) best = ms[j]
			t = n[k, "bounce"] + n[k, "nt"] + n[k, "cma"]; print k, best, t ? n[k, "cma"] / t : 0 } }' "$W/bulk" | sort -n)
	# A class whose reads went both ways in earnest (CMA and a move each
	# at least PTL_BENCH_MIXED of them, a third: the ranks' choosers settled
	# differently from launch to launch, and the two ranks of a pair pick
	# apart) gives the model's best trial by the faster of the two: the
	# one the forced read exchanges of its size (rxchm, rxchc) took less
	# time by. Without both figures, the method with the most moves.
	mixed=${PTL_BENCH_MIXED:-0.33} mixsays=
	rpicks=$(echo "$rpicks" | while read -r k m cs; do
		[ -n "$k" ] || continue
		l=$((k ? class0 << (k - 1) : 16384))
		hm=$(cal 2 "$(xf rxchm "$l")" "$l") hc=$(cal 2 "$(xf rxchc "$l")" "$l")
		if [ -n "$hm" ] && [ -n "$hc" ] && [ "$(calc "$cs >= $mixed && $cs <= 1 - $mixed")" = 1 ]; then
			m=$(calc "$hm < $hc") && { [ "$m" = 1 ] && m=nt || m=cma; }
			echo "$k $m mixed $cs"
		else
			echo "$k $m"
		fi
	done)
	mixsays=$(echo "$rpicks" | awk '$3 == "mixed" { printf " %dK %s (CMA %.0f%%)", $1 ? 32 * 2 ^ ($1 - 1) : 0, $2 == "cma" ? "cma" : "move", 100 * $4 }')
	[ -n "$rpicks" ] && readm="--read-methods $(steps "$rpicks")"
	# Up to what shm's ring carries inline there is no bulk move to
	# report: such a read goes through the ring (the sender's copy as it
	# sends, the receiver's as it takes it), and from just past it the
	# method in effect there (the last step at or below it, else the
	# first's). Seven kept runs' 2-rank rows came out the same to the
	# digit (each rank has its core; the 16 KiB rate solved per copy,
	# twice the one copy's): not for the figures, for the model to say
	# what shm does.
	if [ -n "$readm" ] && ringing; then
		readm="--read-methods $(echo "${readm#--read-methods }" | awk -F, -v r="$ringmax" -v e="$eager" '{
			split($1, f, ":"); h = f[2]
			for (i = 1; i <= NF; i++) { split($i, f, ":"); if (f[1] <= r + 1) h = f[2] }
			printf "%d:ring,%d:%s", e, r + 1, h
			for (i = 1; i <= NF; i++) { split($i, f, ":"); if (f[1] > r + 1) printf ",%s", $i } }')"
	fi
fi
# rhow SIZE: copy, split, move or ring, as the model takes a read of SIZE
# (ring: inline, whatever PTL_SHM_CMA says, so readrates takes either
# forced exchange, rxchc, where the rows' launches have none)
rhow() { echo "${readm#--read-methods }" | tr ',' '\n' | awk -F: -v l="$1" 'NR == 1 || $1 <= l { h = $2 } END { print h ? h : "copy" }'; }
# rxm SIZE T: the model's 2-rank read exchange of SIZE, each copy T us
rxm() { predict --op allreduce --ranks 2 --bytes "$1" --elem 8 --algo recursive_doubling --input --alpha "$alpha" \
	--beta "$ebeta" --gamma 0 --overhead "$o" --cpu-copies --acked-sends="$alpha" --noack-max "$noack" \
	--rndv-min "$peager" --inline-max "$eager" --read-rates "1048576:$(calc "$1 / ($2 * 1e-6)")" $readm \
	--move-piece "$piece" --recv-post "${post:-0}" --lazy-max "$clazy"; }
# agcall: what an MPI_Allgather call costs beyond its steps (as the
# rows' calls: the engine's, and the checks, MPI_COMM_SELF's 8-byte call)
agself=$(cal 2 self 8)
agcall=$(calc "$callb + ${agself:-0}")
# agm SIZE T [ARGS]: the model's 2-rank MPI_Allgather in place of SIZE
# each way (one exchange by the ring), each read T us
agm() { ag_l=$1 ag_t=$2; shift 2
	predict --op allgather --ranks 2 --bytes "$((ag_l * 2))" --algo ring --alpha "$alpha" --beta "$ebeta" \
	--overhead "$o" --call "$agcall" $wk --cmd-cost "$engcmd" $engsmall --cpu-copies \
	--acked-sends="$alpha" --noack-max "$noack" --rndv-min "$peager" --inline-max "$eager" \
	--read-rates "1048576:$(calc "$ag_l / ($ag_t * 1e-6)")" $readm --move-piece "$piece" --recv-post "${post:-0}" \
	--lazy-max "$clazy" $loop "$@"; }
# age SIZE T: the same of an eager SIZE, its sender's copy T us (from
# 1 KiB down the eager rate's)
age() { agm "$1" 1 --eager-rates "1024:$ebeta,$1:$(calc "$1 / ($2 * 1e-6)")"; }
# The rows' launches time these exchanges too (mpi_allreduce's
# "allgather", the ring's one step on 2 ranks, in place): where they have
# them, each size's read rate comes from there, through agm, the launch's
# state being the rows' (128 KiB: 16-17 us there, while the forced read
# exchanges of the collcal launches, a quartile of their best, gave 18.4,
# and the 2-rank 256 KiB rows came out 1.15-1.27x over the measured);
# PTL_BENCH_XCH=collcal takes the collcal launches' always. At half a
# row's size they time two kinds (mpi_allreduce.c's struct xchg):
# "allgather", the same data read back to back, the reader's cache
# keeping the peer's lines from one call to the next, as the ring's
# first step reads the peer's input; "ringsteps", one read of such lines
# and one of lines the peer has just written, in turns. A row at least
# the size of a core's L2 cache (getconf, PTL_BENCH_L2 for a kept run
# from another machine; 1 MiB here) does not keep its input there from
# one call to the next beside the rest of its lines: those rows' reads
# by "ringsteps", the others' by "allgather" (in one run, 2026-12-02,
# "allgather" put the 1 MiB rows at 0.82-0.88x, the 32 KiB and 256 KiB
# ones at 0.85-0.98x; "ringsteps" 0.96-1.11x and 1.07-1.30x).
# PTL_BENCH_XCH=allgather or ringsteps: that kind at every half size.
l2=${PTL_BENCH_L2:-$(getconf LEVEL2_CACHE_SIZE 2>/dev/null)}
digits "$l2" && [ "$l2" -gt 0 ] || l2=1048576
# The 2-rank launches in $W/algo, numbered from 1 in the order they ran:
# each begins with its "gamma" lines (1 MiB's, then 4, 32 and 256 KiB's;
# repeated once per algorithm in a row of lines where the launch timed
# several).
# launchawk: awk that numbers them (l) on the 2-rank lines, skipping the
# others
launchawk='$2 != 2 { next } $3 == "gamma" && !g { l++ } { g = $3 == "gamma" }'
# lfig L FIG BYTES: FIG BYTES of launch L's (the first algorithm's lines)
lfig() { awk -v a="$a1" -v want="$1" -v f="$2" -v b="$3" "$launchawk"'
	l == want && $1 == a && $3 == f && $4 == b { print (ENVIRON["PTL_BENCH_STAT"] == "med" ? $5 : $6); exit }' "$W/algo"; }
# bestlaunch ALGO BYTES: the launch of ALGO's 2-rank row of BYTES whose
# trial best() took
bestlaunch() { awk -v a="$1" -v b="$2" "$launchawk"'
	$1 == a && $3 == "allreduce" && $4 == b { v = ENVIRON["PTL_BENCH_STAT"] == "med" ? $(NF - 2) : $(NF - 1)
		if (bl == "" || v + 0 < best + 0) { best = v; bl = l } }
	END { print bl }' "$W/algo"; }
# xchfig SIZE: the rows' launches' exchange figure of SIZE, "FIG US": of
# launch XL when set, else the best of all launches
XL=
xchfig() {
	[ "${PTL_BENCH_XCH:-}" != collcal ] || return 0
	# the other kind where the run has not the one due
	xfs="allgather ringsteps"
	[ $(($1 * 2)) -ge "$l2" ] && xfs="ringsteps allgather"
	# (ringsteps: allgather where there is none, the whole rows' sizes)
	case ${PTL_BENCH_XCH:-} in allgather) xfs=allgather ;; ringsteps) xfs="ringsteps allgather" ;; esac
	for f in $xfs; do
		if [ -n "$XL" ]; then v=$(lfig "$XL" "$f" "$1"); else v=$(algo 2 "$a1" "$f" "$1"); fi
		[ -n "$v" ] && echo "$f $v" && return 0
	done
}
# readrates: the 2-rank reads' rates by size, "LIST|SAYS" (XL: from
# that launch's exchanges where they are)
readrates() {
	rr= rs=
	for l in 16384 32768 65536 131072 262144 524288 1048576; do
		fig=$(xf rxch "$l")
		case $(rhow "$l") in move) f=rxchm ;; *) f=rxchc ;; esac
		f=$(xf "$f" "$l")
		h=$(cal 2 "$f" "$l")
		[ -n "$h" ] && fig=$f || h=$(cal 2 "$fig" "$l")
		ag=$(xchfig "$l")
		if [ -n "$ag" ]; then
			fig=${ag% *} h=${ag#* }
			f=agm
		else
			[ -n "$h" ] || continue
			f=rxm
		fi
		if ! t1=$(secant "$f" "$l" "$h"); then
			rs="$rs $((l / 1024))K none ($fig $h us: $(unsolved "$f" "$l"))"
			continue
		fi
		rr="$rr${rr:+,}$l:$(calc "$l / ($t1 * 1e-6)")"
		rs="$rs $((l / 1024))K $(rhow "$l") $(calc "$l / ($t1 * 1e3)") ($fig $h us)"
	done
	echo "$rr|$rs"
}
rcopy0=$rcopy
if [ -n "$rcopy" ] && [ -n "$readm" ]; then
	x=$(readrates)
	reads=${x%%|*} readsays=${x#*|}
	[ -n "$reads" ] && rcopy="$rcopy --read-rates $reads" && readmsays=" (each copy; the rows' reads by method: ${readm#--read-methods })"
elif [ -n "$rcopy" ]; then
	x=$(xrates rxch rfixed 16384 32768 65536 131072 262144 524288 1048576)
	reads=${x%%|*} readsays=${x#*|}
	[ -n "$reads" ] && rcopy="$rcopy --read-rates $reads"
fi
rt=
if [ -n "$rates" ]; then
	rt="--copy-rates $rates"
	splitc=0
fi
# shm's moves through the segment (bounce or NT, where it picks them;
# never with PTL_SHM_CMA=1): a rendezvous copy that goes one way is two copies pipelined over the two cores, the
# sender's out into the segment and the receiver's in from the first
# piece (SHM_PIECE) on, so it takes one copy and a piece's; an exchange's
# copies (each core copies both directions' pieces) keep the exchange
# rates above. The one-way rate at each size from mpi_allreduce's
# ping-pongs (20 KiB, 128 KiB, 1 MiB; rendezvous, one move each way in
# turn): the bytes and a piece over what the ping-pong takes beyond the
# model's with an instant move.
mv= mvsays=
# Only the sizes that shm moves through the segment (the picks above;
# every size when it bounces unchosen): a split CMA ping-pong says
# nothing of a move's rate.
# how SIZE: copy, split or move, as the model takes a rendezvous of SIZE
how() {
	if [ -n "$bulkm" ]; then
		echo "${bulkm#--bulk-methods }" | tr ',' '\n' | awk -F: -v l="$1" 'NR == 1 || $1 <= l { h = $2 } END { print h }'
	elif [ "$1" -ge "$split" ]; then echo split
	elif [ "$split" -gt 1048576 ]; then echo move
	else echo copy; fi
}
for l in $rl 131072 1048576; do
	[ "$(how "$l")" = move ] || continue
	h=$(cal 2 pingpong "$l")
	[ -n "$h" ] || continue
	f=$(one "$l" 0 0 0 --move-piece "$piece" --move-rates 1:1e18)
	r=$(calc "$h > $f ? ($l + ($l < $piece ? $l : $piece)) / (($h - $f) * 1e-6) : 0")
	[ "$r" = 0 ] && continue
	mv="$mv${mv:+,}$l:$r"
	mvsays="$mvsays $((l / 1024))K $(calc "$r / 1e9") ($h us)"
done
[ -n "$mv" ] && rt="$rt --move-piece $piece --move-rates $mv"
# A rank's local copies (an eager message taken out of the unexpected
# buffer, by a lazy receive or one posted late; a schedule's own, which no
# allreduce row makes since recursive doubling's upper ranks add in
# place): one core's memcpy by size, from MPI_Allreduce on MPI_COMM_SELF
# (the checks, then the input copied into the output) beyond its 8-byte
# call
lrates= lsays=
s8=$(cal 2 self 8)
for l in 4096 32768 262144 1048576; do
	h=$(cal 2 self "$l")
	[ -n "$h" ] && [ -n "$s8" ] || continue
	r=$(calc "$h > $s8 ? $l / (($h - $s8) * 1e-6) : 0")
	[ "$r" = 0 ] && continue
	lrates="$lrates${lrates:+,}$l:$r"
	lsays="$lsays $((l / 1024))K $(calc "$r / 1e9")"
done
lc="${lrates:+--local-copy-rates $lrates}"
# The 2-rank 4 KiB rows' messages, 2 KiB each way a step, eager (inline:
# the sender's CPU copies them): their copy's rate from the rows'
# launches' ring steps of 2 KiB through the model's allgather (age), as
# the reads' above, for the rows whose schedules send them (not direct
# recursive doubling's request-free rounds). Why not the eager rate:
# the 1 KiB / 8 KiB ping-pongs' slope is two small figures' difference,
# and the 8 KiB one came out 0.59-0.61 us in some runs, 1.0-1.26 in
# others, while the 4 KiB rows took 1.2-1.3 us in both (0.72-0.75x in
# the first kind, 2026-12-02)
# eagerrate: "ARGS|SAYS", the rows' --eager-rates and what they came from
# (XL: that launch's)
eagerrate() {
	ag=$(xchfig 2048)
	[ -n "$ag" ] || { echo "|"; return 0; }
	t1=$(secant age 2048 "${ag#* }") ||
		{ echo "|2 KiB none: $(unsolved age 2048) (exchanges of 2 KiB, ${ag% *} ${ag#* } us)"; return 0; }
	echo "--eager-rates 1024:$ebeta,2048:$(calc "2048 / ($t1 * 1e-6)")|2 KiB $(calc "2048 / ($t1 * 1e3)") GB/s (exchanges of 2 KiB, ${ag% *} ${ag#* } us)"
}
x=$(eagerrate)
eager2=${x%%|*} eager2says=${x#*|}
if [ -n "$reads" ]; then
	echo "#   a collective's sends stay eager up to $ceager B (COLL_EAGER_TIMES $ctimes; 2 ranks: $peager B, MPI_PULL_EAGER $ptimes), above $eager B read by the receiver, GB/s by size (2-rank exchanges, blocking sends)$readmsays:$readsays; past them at the rendezvous rates"
elif [ -n "$rcopy" ]; then
	echo "#   a collective's sends stay eager up to $ceager B (COLL_EAGER_TIMES $ctimes; 2 ranks: $peager B, MPI_PULL_EAGER $ptimes), above $eager B read by the receiver: $rc us each beyond the bytes (blocking 32 KiB ping-pong ${latrd:-?} us - 2 o - alpha - bytes/beta)"
fi
# picksof AWKCOND: per size class of the 2-rank launches AWKCOND selects
# in $W/bulk, the method with the most timed moves and the counts
picksof() {
	[ -s "$W/bulk" ] && awk "\$1 == 2 && \$9 == \"class\" && ($1)"' {
		k = $10; for (i = 16; i + 1 <= NF; i += 2) { split($(i + 1), v, ":"); n[k, $i] += v[1]; cl[k] = 1 } }
		END { for (k = 0; k < 4; k++) { if (!(k in cl)) continue; best = ""; split("bounce nt cma", ms, " ")
			for (j = 1; j <= 3; j++) if (best == "" || n[k, ms[j]] > n[k, best]) best = ms[j]
			printf " %d:%s (nt %d, cma %d)", k, best, n[k, "nt"], n[k, "cma"] } }' "$W/bulk"
}
# The 2-rank rows' sends are reads (eager up to the pull limit); shm
# picks the reads' method in each launch, the rows' and the exchanges'
# apart (the model takes the rows' picks, --read-methods above, and the
# rates of exchanges with that method forced)
rrows=$(picksof "\$2 == \"allreduce\" && ${rsel:-\$3 ~ /^allreduce=/}") rxch=$(picksof '$2 == "collcal" && $4 !~ /,cma/')
[ -n "${mixsays:-}" ] && echo "#   the rows' reads went both ways (CMA and a move each at least ${mixed} of them) at:$mixsays: each by the faster (forced read exchanges of its size)"
[ -n "$rrows" ] && echo "#   shm's picks by size class (0: <32K, k: up to 32K << k, 7: 2M and above), timed moves: the 2-rank rows' reads$rrows; mpi_collcal's (the read and copy exchanges)$rxch"
[ -n "$allapart" ] && echo "#   MPI_Allreduce leaves the input apart where the algorithm reads it (--input; the call: the checks alone, MPI_COMM_SELF's 8-byte call; none for direct recursive doubling's rows within --small-max, whose request-free ends carry checks)"
if [ -n "$rt" ]; then
	echo "#   rendezvous copy rates, GB/s by message size (2-rank exchanges):$ratesays"
	[ -n "$mv" ] && echo "#   one-way moves through the segment ($piece B pieces, out on the sender's core, in on the receiver's), GB/s each core by size (2-rank ping-pongs):$mvsays"
else
	echo "#   a split copy costs the receiver $splitc us beyond its half (128 KiB ping-pong $pp128k us - the model's $(one 128K 0 0 0) us without)"
fi
[ "$ebeta" != "$beta" ] && echo "#   eager copies $ebeta B/s (MPI_Isend ping-pongs 1 KiB $e1k us, 8 KiB $e8k us)"
[ -n "$eager2says" ] && echo "#   the 2-rank rows' schedules' eager copies: $eager2says"
[ -n "$small" ] && echo "#   request-free messages (direct recursive doubling up to $rdsmall B): $so us at each end (blocking send and receive), $salpha us between (blocking 8 B ping-pong $spp8 us - 2 x that); the receiver's CPU beyond that by size ${srecv:-?} (blocking ping-pongs of each size - 2 x that - alpha - bytes at the eager rate); crossing one going back ${scross:-?} (blocking exchanges - ping-pongs${bysr:-}; with requests up to 512 B)"
[ -n "$lrates" ] && echo "#   local copies, GB/s by size (MPI_COMM_SELF allreduce beyond its 8-byte call):$lsays"
bc1m=$(cal 2 bcast 1048576)
if [ -n "$mv" ] && [ "$(how 1048576)" = move ]; then
	echo "# check (no parameter comes from it), one move of 1 MiB: 2-rank MPI_Bcast measured ${bc1m:-?} us, predicted $(one 1M "$callb" "$splitc" "$engcmd" $rt $wk $engsmall) us (the 1 MiB ping-pong's ${pp1m:-?} us gave the move rate)"
else
	echo "# checks (no parameter comes from them), one $(how 1048576) copy of 1 MiB: ping-pong measured ${pp1m:-?} us, predicted $(one 1M 0 "$splitc" 0 $rt) us; 2-rank MPI_Bcast measured ${bc1m:-?} us, predicted $(one 1M "$callb" "$splitc" "$engcmd" $rt $wk $engsmall) us"
fi
# barrier N SWITCH: the model's N-rank barrier on the cores there are
# (while bound cores' switch is solved, its poll window that switch's
# share: pwshare)
pwshare=
barrier() { predict --op barrier --ranks "$1" --bytes 0 --alpha "$alpha" --beta "$beta" --overhead "$o" --call "$callb" $wk \
	--cmd-cost "$engcmd" $engsmall --cores "$cores" --switch-cost "$2" $cwait \
	${pwshare:+--poll-window $(calc "$2 * $pwshare")} $loop; }
# switch N BARRIER: ranks share the cores, each waiting rank yielding its
# core at every poll, so the model schedules the CPU work on the cores and
# a rank that waited gets one back after a switch, solved here from an
# N-rank barrier, where every rank is busy as in a collective (not from a
# ping-pong between two of N ranks: the others sleep in their barrier
# after 2000 polls, and whether the two share a core decides it, 0.67-1.47
# us in three runs). The barrier's time grows with the switch, but not
# smoothly: bound cores' turns jump between counts (the model's 4-rank
# barrier on kept run s47/p5, jitter 0.3: 2.79 us at a 0.3 us switch,
# 1.94 at 0.5; 3.36 at 1.16, 3.32 at 1.18), and a secant's step off
# such a jump went from 1.14 us to 0.23 (the short rows 0.3-0.6x). So
# the switch is kept in a bracket [lo, hi] whose ends' barriers lie
# either side of the goal:
# secant steps inside it, every other step its midpoint (secant steps
# alone crept up on the goal from one side, the far end never moving,
# and a last step that fell outside by rounding took the midpoint: 1.68
# us where the crossing was at 1.36, s47/p4 with jitter 0.25), and the
# answer the line between its ends.
switch() {
	lo=0 plo=$(barrier "$1" 0) hi=1 phi=$(barrier "$1" 1)
	# no switch at all already takes the goal or longer: none
	[ "$(calc "$plo < $2")" = 1 ] || { echo 0; return; }
	for it in 1 2 3 4 5; do
		[ "$(calc "$phi < $2")" = 1 ] || break
		lo=$hi plo=$phi hi=$(calc "$hi * 2") phi=$(barrier "$1" "$hi")
	done
	if [ "$(calc "$phi < $2")" = 1 ]; then
		echo "mpi_bench.sh: the model's $1-rank barrier takes $phi us with a $hi us switch, short of the measured $2 us: the switch taken as $hi" >&2
		echo "$hi"
		return
	fi
	for it in 1 2 3 4 5 6 7 8 9 10; do
		s1=$(calc "($lo + $hi) / 2")
		[ $((it % 2)) = 1 ] && [ "$(calc "$phi > $plo")" = 1 ] &&
			s1=$(calc "$lo + ($2 - $plo) * ($hi - $lo) / ($phi - $plo)")
		[ "$(calc "$s1 > $lo && $s1 < $hi")" = 1 ] || s1=$(calc "($lo + $hi) / 2")
		p1=$(barrier "$1" "$s1")
		if [ "$(calc "$p1 < $2")" = 1 ]; then lo=$s1 plo=$p1; else hi=$s1 phi=$p1; fi
	done
	calc "$phi > $plo ? $lo + ($2 - $plo) * ($hi - $lo) / ($phi - $plo) : ($lo + $hi) / 2"
}
# A rank that waits while its core has no work (the core's ranks all
# waiting, passing it round at every poll) sees its message core_wait
# after it came, a latency that books no core time: mpi_collcal's 4-rank
# 8-byte ping-pong between two ranks while the other two wait as a
# collective's idle ranks do (pp4idle) less the 2-rank one (spp 8)
# cloop: the loop of the calibration models that take no $loop (x4, s4,
# es4, rx4), where bound cores need their calls back to back
cwait= cw= cloop= xgap= xmove=
p4i=$(cal 4 pp4idle 8)
if [ -n "$p4i" ] && [ -n "${spp8:-}" ]; then
	cw=$(calc "$p4i > $spp8 ? $p4i - $spp8 : 0")
	cwait="--core-wait $cw"
fi
# pairx RANKS CORES HOW RATES SIZE T: an exchange in pairs, one step of
# the model's recursive doubling of SIZE on RANKS ranks (2: its one step;
# 4: half of it) on CORES cores, each copy T us by RATES (--copy-rates,
# --read-rates, --same-core-rates); HOW rndv: by rendezvous; read:
# blocking sends, eager, read by the receiver
pairx() {
	if [ "$3" = read ]; then
		px_how="--rndv-min $ceager --inline-max $eager"
		[ "$1" -gt "$2" ] && px_how="$px_how $rmeth4"
	else
		px_how="--rndv-min $eager --rndv-cost $rndv --split-min $split4 --split-cost 0"
	fi
	p=$(predict --op allreduce --ranks "$1" --bytes "$5" --elem 8 --algo recursive_doubling --input --alpha "$alpha" \
		--beta "$ebeta" --gamma 0 --overhead "$o" --cpu-copies --acked-sends="$alpha" --noack-max "$noack" \
		$px_how "$4" "1048576:$(calc "$5 / ($6 * 1e-6)")" \
		--recv-post "${post:-0}" --lazy-max "$clazy" --cores "$2" --switch-cost "$sw" $cwait $cloop ${xgap:-} ${xmove:-})
	if [ "$1" -gt 2 ]; then calc "${p:-0} / 2"; else echo "$p"; fi
}
# x4 SIZE COPY: the model's pair exchange of SIZE by rendezvous on the
# cores there are (half a 4-rank recursive doubling), each copy COPY us;
# x4one SIZE COPY: one pair's alone, each rank on a core of its own (the
# other ranks idle); both with the exchange gap xgap gives (--xch-gaps)
# and the one-way moves xmove gives (--move-rates), if any
x4() { pairx 4 "$cores" rndv --copy-rates "$@"; }
x4one() { pairx 2 2 rndv --copy-rates "$@"; }
# bisect FN SIZE GOAL HI: the T in (0.001, HI] where FN SIZE T, rising
# with T, crosses GOAL. For where secant's steps miss: with an exchange's
# gap the model's time can jump as T grows (the cores' turns reorder),
# and s59/b2's 512 KiB pair exchange went from 109 to 114 us between
# copies of 40 and 42 us round its 111.7; secant answered 96 (186 us)
bisect() {
	bf=$1 bl=$2 bg=$3 blo=0.001 bhi=$4
	for bi in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		bm=$(calc "($blo + $bhi) / 2")
		if [ "$(calc "$($bf "$bl" "$bm") < $bg")" = 1 ]; then blo=$bm; else bhi=$bm; fi
	done
	calc "($blo + $bhi) / 2"
}
# x4solve SIZE GOAL: x4's copy for GOAL us: secant's, or bisect's where
# secant's is more than 2% off
x4solve() {
	x4t=$(secant x4 "$1" "$2") || return 1
	x4d=$(calc "($(x4 "$1" "$x4t") - $2) / $2")
	[ "$(calc "$x4d > 0.02 || $x4d < -0.02")" = 1 ] && x4t=$(bisect x4 "$1" "$2" "$2")
	echo "$x4t"
}
# s4 SIZE COPY: the model's shift of SIZE round 4 ranks on these cores (a
# third of a 4-rank ring allgather of 4 x SIZE), each move's copies COPY us
s4() { p=$(predict --op allgather --ranks 4 --bytes "$(($1 * 4))" --algo ring --alpha "$alpha" \
	--beta "$ebeta" --overhead "$o" --cpu-copies --acked-sends="$alpha" --noack-max "$noack" \
	--rndv-min "$eager" --rndv-cost "$rndv" --split-min "$split4" --split-cost 0 --copy-rates "1048576:1e18" \
	--move-piece "$piece" --move-rates "1048576:$(calc "$1 / ($2 * 1e-6)")" --move-gaps "1048576:$g4" \
	--recv-post "${post:-0}" --lazy-max "$clazy" --cores "$cores" --switch-cost "$sw" $cwait $cloop)
	calc "${p:-0} / 3"; }
rt4=
# es4 SIZE COPY: the model's shift of SIZE eager bytes round 4 ranks on
# these cores (a third of a 4-rank ring allgather of 4 x SIZE), each
# eager copy COPY us
es4() { p=$(predict --op allgather --ranks 4 --bytes "$(($1 * 4))" --algo ring --alpha "$alpha" --beta "$ebeta" \
	--eager-rates "$1:$(calc "$1 / ($2 * 1e-6)")" --overhead "$o" --cpu-copies --acked-sends="$alpha" --noack-max "$noack" \
	--rndv-min "$eager" --rndv-cost "$rndv" --recv-post "${post:-0}" --lazy-max "$clazy" \
	--cores "$cores" --switch-cost "$sw" $cwait $cloop)
	calc "${p:-0} / 3"; }
# shsw L SW: the model's 4-rank shift of L-byte blocks (a third of its ring
# allgather) on these cores, a shift's step switching in SW us; xsw L SW:
# its pair exchange of L bytes (half a 4-rank recursive doubling), a pair
# exchange's step switching in SW us; back to back, as mpi_collcal's
# rounds go
shsw() { p=$(predict --op allgather --ranks 4 --bytes "$(($1 * 4))" --algo ring --alpha "$alpha" --beta "$ebeta" \
	--overhead "$o" --cpu-copies --acked-sends="$alpha" --noack-max "$noack" --rndv-min "$eager" --rndv-cost "$rndv" \
	--recv-post "${post:-0}" --lazy-max "$clazy" --cores "$cores" --switch-cost "$sw" --switch-shift "$2" $loop)
	calc "${p:-0} / 3"; }
xsw() { p=$(predict --op allreduce --ranks 4 --bytes "$1" --elem 8 --algo recursive_doubling --input --alpha "$alpha" \
	--beta "$ebeta" --gamma 0 --overhead "$o" --cpu-copies --acked-sends="$alpha" --noack-max "$noack" \
	--rndv-min "$ceager" --inline-max "$eager" --recv-post "${post:-0}" --lazy-max "$clazy" --cores "$cores" \
	--switch-cost "$sw" --switch-exchange "$2" $loop)
	calc "${p:-0} / 2"; }
# xss L SW: the model's exchange of L bytes between the two ranks of each
# core (0 and 2, 1 and 3: the middle step of a 4-rank pairwise
# MPI_Alltoall, the others' blocks empty) on bound cores switching in SW
# us, as mpi_collcal's xch4s rounds go, back to back
xss() { predict --op alltoall --ranks 4 --algo pairwise --counts "0,0,$1,0,0,0,0,$1,$1,0,0,0,0,$1,0,0" \
	--alpha "$alpha" --beta "$ebeta" --overhead "$o" --cpu-copies --acked-sends="$alpha" --noack-max "$noack" \
	--rndv-min "$ceager" --inline-max "$eager" --recv-post "${post:-0}" --lazy-max "$clazy" --cores "$cores" \
	--switch-cost "$2" $cwait --poll-window "$(calc "$2 * $BOUND_PW")" $loop; }
# ag4 SIZE ARGS: the model's 4-rank ring MPI_Allgather of SIZE blocks on
# these cores as the rows' launches call it
ag4() { ag_l=$1; shift
	predict --op allgather --ranks 4 --bytes "$((ag_l * 4))" --algo ring --alpha "$alpha" --beta "$ebeta" \
	--overhead "$o" --call "$agcall" $wk --cmd-cost "$engcmd" $engsmall --cpu-copies --acked-sends="$alpha" \
	--noack-max "$noack" --rndv-min "$ceager" --inline-max "$eager" $rmeth4 --recv-post "${post:-0}" \
	--lazy-max "$clazy" --cores "$cores" --switch-cost "$sw" $cwait $loop "$@"; }
# ra4 SIZE READ: its blocks read by their receivers, each read READ us
ra4() { ag4 "$1" --read-rates "1048576:$(calc "$1 / ($2 * 1e-6)")"; }
# ea4 SIZE COPY: its blocks eager, each one's copy COPY us
ea4() { ag4 "$1" --eager-rates "$1:$(calc "$1 / ($2 * 1e-6)")"; }
# instant FN SIZE GOAL T: whether secant's T for FN SIZE GOAL says nothing
# of the copy: T at secant's floor, or FN with an instant copy already
# GOAL or longer (over4 says why)
instant() { [ "$(calc "$4 <= 0.001 || $($1 "$2" 0.001) >= $3")" = 1 ]; }
# over4 SIZE FN: solved's (and says') entry of SIZE from the rows'
# launches' 4-rank ring MPI_Allgather of SIZE blocks, timed in the rows'
# turns, through FN, where the run has it (not PTL_BENCH_XCH=collcal).
# Where the model's allgather takes that long with an instant copy (the
# solve at secant's floor: its switches alone hold the time, and a
# switch more or less is a step of several us) the figure says nothing
# of the copy, and the calibration's stays: two runs' 8 KiB steps, 41.5
# and 41.7 us, solved to 8192 GB/s and predicted the 32 KiB rows 0.41-0.54x,
# the run before's, 40.2 us, to 2.2 GB/s. The model at the floor is asked
# too: a step-like model can hold the secant at its start, 1 us (and one
# can drive it to the floor while an instant copy reads faster)
over4() {
	[ -n "$solved" ] && [ "${PTL_BENCH_XCH:-}" != collcal ] || return 0
	h=$(algo 4 "$a1" allgather "$1")
	[ -n "$h" ] || return 0
	ag="from the rows' launches (4-rank ring allgather of $(($1 / 1024)) KiB blocks $h us"
	# Where no copy moves the model's allgather (its messages go
	# request-free, --small-max, priced at the 2-rank costs: 1 KiB on
	# bound cores, s69/r1) the calibration's rate stays.
	if ! t1=$(secant "$2" "$1" "$h"); then
		says="$says; not at $(($1 / 1024))K $ag: $(unsolved "$2" "$1"))"
		return 0
	fi
	if instant "$2" "$1" "$h" "$t1"; then
		# OVER4_FLOOR=RATE: then the copy at RATE (the eager one's
		# at the 2-rank rate: too short for the allgather to see, and
		# no shorter than on a core of its own), else the calibration's
		if [ -z "${OVER4_FLOOR:-}" ]; then
			says="$says; not at $(($1 / 1024))K $ag: no longer than the model's with an instant copy)"
			return 0
		fi
		t1=$(calc "$1 / $OVER4_FLOOR * 1e6")
		ag="$ag: no longer than the model's with an instant copy, so the 2-rank rate"
	fi
	solved=$({ echo "$solved" | tr ',' '\n' | awk -F: -v l="$1" '$1 != l'; echo "$1:$(calc "$1 / ($t1 * 1e-6)")"; } |
		sort -t: -k1,1n | paste -sd, -)
	says="$says; used at $(($1 / 1024))K instead: $(calc "$1 / ($t1 * 1e3)") $ag)"
}
# solve4 CAL MODEL SIZE...: for each SIZE the 4-rank calibration CAL took,
# the rate at which MODEL (es4, rx4) takes as long: solved as
# "SIZE:B/s,...", says as " 16K GB/s (us)..." for the run's comments. A
# size whose solve says nothing (instant) is left out, the model taking
# its rate from the sizes around it (the nearest one's, below the first):
# the 1 KiB eager shift solved to the floor (1024 GB/s) in every kept run
# of 2026-12-02
solve4() {
	c=$1 m=$2 solved= says= h0= m0=
	shift 2
	# SOLVE4_REL=L0: by the difference from L0's figure instead (the
	# model's L0 the measured L0 plus that difference)
	if [ -n "${SOLVE4_REL:-}" ]; then
		h0=$(cal 4 "$c" "$SOLVE4_REL") m0=$($m "$SOLVE4_REL" 0.001)
	fi
	for l; do
		h=$(cal 4 "$c" "$l")
		[ -n "$h" ] || continue
		[ -n "$h0" ] && h=$(calc "$m0 + $h - $h0")
		h=$(within "$c" "$l" "$h")
		if ! t1=$(secant "$m" "$l" "$h"); then
			says="$says $((l / 1024))K none ($h us: $(unsolved "$m" "$l"))"
			continue
		fi
		if instant "$m" "$l" "$h" "$t1"; then
			says="$says $((l / 1024))K none ($h us: no longer than the model's with an instant copy)"
			continue
		fi
		solved="$solved${solved:+,}$l:$(calc "$l / ($t1 * 1e-6)")"
		says="$says $((l / 1024))K $(calc "$l / ($t1 * 1e3)") ($h us)"
	done
}
# within CAL SIZE T: what a pair exchange of the model's (half its 4-rank
# recursive doubling: 0 and 1 across the cores, then 0 and 2 within one)
# takes where CAL (xch4, rxch4: across) took T: the mean of T and CAL's
# within one core (xch4s, rxch4s) once the model has those rates (same4,
# cwait's --same-core-rates), else T (both steps as CAL's: before
# 2026-12-05)
within() {
	[ -n "${same4:-}" ] || { echo "$3"; return; }
	hs=$(cal 4 "${1}s" "$2")
	if [ -n "$hs" ]; then calc "($3 + $hs) / 2"; else echo "$3"; fi
}
# rx4 SIZE READ: the model's pair exchange of SIZE on the cores there are
# (half a 4-rank recursive doubling) with each read taking READ us
rcopy4= eager4=
rx4() { pairx 4 "$cores" read --read-rates "$@"; }
# Reads where the ranks outnumber the cores: there shm moves every bulk
# message through the segment (the 4-rank launches' PTL_SHM_BULK_REPORT
# lines say "mode bounce (crowded)"), so an eager read is the sender's
# copy out and then the receiver's copy in (--read-methods move), each
# at the read rates solved below, in the solves (rx4, ra4; rs1's pairs
# of one core copy whole whatever the method) and the rows alike. Taken
# as one copy on the receiver's CPU instead, the rows that reduce
# between their reads paid each reduction on top of steps whose reads
# the solve (the ring's allgather, no reduction) had made all CPU:
# the 4-rank 256 KiB ring and ring_bidir rows read 1.12 - 1.15x and
# 1.26 - 1.28x in four kept runs (s59/b1, b2, m2, s60/f1; measured, the
# ring's reduce-scatter took as long as its allgather, 67 us each).
# An eager message that still fits shm's ring inline (shm.h's
# SHM_MAX_INLINE: 16 KiB and a header, with rings of 128 KiB and up: jobs
# of up to 20 local ranks, these 2 and 4) is no bulk move: its sender copies
# it into the ring as it sends, its receiver copies it out when it takes
# it, no request between (--read-methods ring). Timed in the 4-rank tree's
# 32 KiB row (16 KiB messages; each copy's clock_gettime around
# nal_copy_big, 2026-12-06): the sender's copy 1.2 - 1.7 us at its send
# whether or not its receiver had a core, the receiver's 0.3 - 0.5; the
# cores switched 4.3 - 5.7 times a core a call, the model 13.3 where it
# took the message as a move (the sender's copy once asked), 4.3 through
# the ring.
# PTL_BENCH_READS=copy: one copy (the model before); =move: no ring
rmeth4=
if [ "${PTL_BENCH_READS:-}" != copy ] && grep -q '^4 allreduce .* mode bounce (crowded)' "$W/bulk" 2>/dev/null; then
	rmeth4="--read-methods $eager:move"
	ringing && rmeth4="--read-methods $eager:ring,$((ringmax + 1)):move"
fi
# rs1 SIZE READ, xs1 SIZE COPY: the model's exchange of SIZE between the
# two ranks of one core (a 2-rank recursive doubling bound to one core),
# each read READ us (rs1: blocking sends, eager, read by the receiver, as
# rx4's) or each rendezvous copy COPY us (xs1, as x4's)
rs1() { pairx 2 1 read --same-core-rates "$@"; }
xs1() { pairx 2 1 rndv --same-core-rates "$@"; }
# bcw N CW: the model's N-rank barrier on the cores there are, no switch,
# a waiting rank seeing its message CW us after it came
bcw() { predict --op barrier --ranks "$1" --bytes 0 --alpha "$alpha" --beta "$beta" --overhead "$o" --call "$callb" $wk \
	--cmd-cost "$engcmd" $engsmall --cores "$cores" --switch-cost 0 --core-wait "$2" $loop; }
# cwsolve N BARRIER: the core wait for which the model's N-rank barrier
# takes BARRIER (PTL_BENCH_CWAIT=barrier)
cwsolve() { secant bcw "$1" "$2" || echo 0; }
# how a waiting rank gets its core back (PTL_BENCH_CWAIT): token (a
# switch from tok4), idle (a core wait from pp4idle, a switch from the
# barriers; where there is no tok4 too), barrier (a core wait from the
# barriers), bound (ranks bound to cores taking turns, the switch from the
# barriers; the default where those launches were pinned)
cwmode=${PTL_BENCH_CWAIT:-$([ "$BIND4" = core ] && echo bound || echo token)}
# Bound cores. Ranks pinned 2 to a core (ptlrun --bind-to core) take
# turns on it: one runs until it waits, then yields, and the switch took
# 4.7-5.6 us here (far state, 2026-12-04: each sched_yield of a waiting
# rank timed, every one switched), its turn after it 1-2 us; a 4-rank
# 8 B allreduce took 6.0-7.2 us a turn whatever the algorithm, 2 turns a
# core a call (one a rank) by recursive doubling, 4.3 by
# halving-doubling, 3.4 by the ring, 4.4 by the tree (each rank's
# scheduler slices from /proc/self/schedstat). ptltool coll --bound
# schedules the ranks' work so, and gives the counts for those
# schedules once the two cores' switches drift apart as real ones do
# (BOUND_JITTER: each switch 1 - J to 1 + J of the switch; in lockstep every
# message between the cores finds its receiver on its core, and
# recursive doubling took one turn a core), a rank keeping its core for
# work that comes within BOUND_PW of a switch of its last piece (its last
# poll and the yield's way into the kernel, which scale with the core as
# the switch does: 0.5 us of the 5 us switch above; on a host whose
# switch solved to 1.2 us, 2026-12-04, a fixed 0.5 us gave recursive
# doubling 1.06 turns a core a call where 2.0 were measured, 0.12 us
# 2.09, and halving-doubling 4.36 against 4.5; wider is worse: re-modelled
# at 0.5 and 1.0 of a switch, seven kept runs, s59/b1-b2, s60/f1-f4 and
# s61/g1, had 105 and 74 of their 245 4-rank rows within 10%, against 166
# at 0.1, 2026-12-06; narrower, with this tree's model 2026-12-07: those
# seven 173 at 0.1, 186 at 0.07; the Zen 4 guest's nine (s65/m3,
# s66/n2-n3, s67/p1-p3, s68/q1-q3) 269 at 0.1, 282 at 0.07, 273 at 0.05,
# 214 at 0.04, every run at 0.07 within one row of its 0.1 count or
# above it, and some at 0.04 falling to 11 - 15 rows: the turns the
# model takes tip over there, so not nearer; the tree's 4-rank 64 B - 4
# KiB rows switched 4.6 - 4.3 times a core a call in the model at 0.07
# against the cores' 4.7 - 4.6, 4.4 - 4.2 at 0.1, in s68/q3). Over
# BOUND_CALLS calls,
# as the jitter's sequence averages out. The switch is solved from
# mpi_collcal's exchange between the two ranks of each core (xch4s 8: a
# switch a round and little else) through the model's own such exchange
# (xss). It was solved from the barrier of the rows' own launches (the
# dissemination barrier's turns, 2 a core a call, are switches and little
# else), but that barrier moved from run to run (its launches' median
# 5.9 - 8.1 us over 22 kept runs, s48 - s53, 7% spread) while the 4-rank
# 8 - 512 B rows kept within 2 - 4% (recursive doubling's 8 B 6.07 - 6.37
# us but on a loaded host), so the switch solved from it (1.86 - 2.92 us)
# took those rows 0.82x - 1.04x on average; xch4s 8 read 3.04 - 3.14 us
# in three launches by hand and 3.07 in k2 (a switch of 2.50). Session
# 53's fresh runs: k1 (barrier: 2.03 us) 20 of the 35 4-rank rows within
# 10%, k2 and k3 (xch4s: 2.50, 2.54) 31 and 31, the 8 B - 4 KiB rows
# 0.95x - 1.12x but ring_bidir's 8 B (1.14x - 1.32x: 7.3 - 8.5 us where
# the ring's is 9.6 - 9.8); k2 and k3 re-modelled with the barrier's
# switch (2.05, 2.04): 18 and 18.
# PTL_BENCH_SWFROM=barrier: the switch from the barrier (and so on runs
# kept without xch4s 8).
# The jitter stands for how the cores drift apart, their work's times
# as much as their switches' (a switch alone varies little: two ranks of
# one core both waiting yielded to each other in 2.0 - 2.25 us, 95% of
# 6,268 round trips, 2026-12-05), so it is set by the rows. The 4-rank
# rows within 10% in ten kept runs (session 46's k3 far and k4, k7, k8
# near; 2026-12-05's ptl-only p1 - p6, near; the switch solved as below),
# by jitter: 0.2 248 of 350 (16 20 26 24 25 27 28 28 26 28), 0.25 247,
# 0.3 259, 0.35 271 (18 26 27 27 28 30 29 31 26 29), 0.4 255: the rows
# ask for a drift of about that size, and 0.35 is the best of those
# tried, not a figure measured. The turns the model then takes are about
# the measured ones (a core's switches a call, getrusage, 3 launches
# each, near state, against the model's on p1 with 0.3): the tree's 8 B
# - 4 KiB rows 4.1 - 4.6 against 4.2 - 4.3 (3.9 - 4.2 with 0.2),
# halving-doubling's 4.0 - 4.6 against 4.2 - 4.4, recursive doubling's
# 2.0 against 2.1 - 2.2.
# (BOUND_PW and BOUND_JITTER are set, and checked, before the run measures)
BOUND_CALLS=200
loop0=$loop loop4=$loop
for n in 2 4; do
	[ "$n" -gt "$cores" ] || continue
	barn=$(cal "$n" barrier 0)
	[ -n "$barn" ] || continue
	tk=$(cal "$n" tok4 8) px=$(cal "$n" xch4 8) sx=$(cal "$n" eshift4 8)
	if [ "$cwmode" = bound ]; then
		loop="--calls $BOUND_CALLS --unexpected" loop4="--calls $BOUND_CALLS --unexpected"
		cw= cwait="--bound --switch-jitter $BOUND_JITTER" cloop=$loop
		ba=$(algo "$n" "$a1" barrier 0)
		[ -n "$ba" ] || ba=$barn
		xs= sw=
		[ "$n" = 4 ] && [ "${PTL_BENCH_SWFROM:-xch4s}" != barrier ] && xs=$(cal "$n" xch4s 8)
		# (xss leaves out the copies' --same-core-rates, solved
		# below from this switch: 8 bytes copy in no time)
		[ -n "$xs" ] && sw=$(secant xss 8 "$xs") && [ -n "$sw" ] &&
			swfrom="the model's 8 B exchange between the two ranks of each core takes mpi_collcal's xch4s $xs us ($(xss 8 "$sw") us at that switch); its $n-rank barrier then $(pwshare=$BOUND_PW barrier "$n" "$sw") us, the rows' launches' $ba"
		if [ -z "$sw" ]; then
			sw=$(pwshare=$BOUND_PW switch "$n" "$ba")
			swfrom="the model's $n-rank barrier takes the rows' launches' $ba us"
		fi
		pw=$(calc "$sw * $BOUND_PW")
		cwait="$cwait --poll-window $pw"
		echo "# $n ranks bound to $cores cores (rank r on core r mod $cores), taking turns: a switch of $sw us ($swfrom); a rank keeps its core for work $pw us after its last ($BOUND_PW of a switch), switches jittered by $BOUND_JITTER, $BOUND_CALLS calls back to back; $n-rank figures the median of their launches' medians"
		# Copies between the two ranks of one core (0 and 2, 1 and
		# 3): their lines stay in its caches, where the exchanges
		# below (xch4, rxch4: 0 and 1, 2 and 3) move them between the
		# cores, which recursive doubling's second step and
		# halving-doubling's middle ones then paid (far state,
		# 2026-12-05: 1 MiB 100-106 us within a core against 163
		# between the cores; near, 100 against 124). mpi_collcal's
		# rxch4s and xch4s (the pairs 0-2 and 1-3 exchanging at once),
		# each size's rate solved through the model's exchange
		# between two ranks of one core; every model below takes
		# them (--same-core-rates: bound pairs of one core alone)
		solve4 rxch4s rs1 16384 32768 65536
		same4=$solved samesays=$says
		solve4 xch4s xs1 131072 262144 524288 1048576
		same4="$same4${same4:+${solved:+,}}$solved" samesays="$samesays$says"
		if [ -n "$same4" ]; then
			cwait="$cwait --same-core-rates $same4"
			echo "#   copies between the two ranks of one core, GB/s by size (4-rank exchanges, pairs 0-2 and 1-3 at once; reads to 64K, rendezvous above):$samesays"
		fi
	elif [ "$cwmode" = token ] && [ -n "$tk" ] && [ -n "${spp8:-}" ]; then
		# a token's hop round the ranks in the library's own wait
		# loop (mpi_collcal's tok4: one rank sends, the rest wait, as
		# in a collective's chain) is one switch beyond the 2-rank
		# hop: the receiver gets a core back from a waiting rank. No
		# core wait: the switch is the whole of it, on every algorithm
		sw=$(calc "$tk > $spp8 ? $tk - $spp8 : 0") cw= cwait=
		echo "# $n ranks on $cores cores: CPU work scheduled on the cores; a rank that waited gets one back after a switch of $sw us (4-rank token hop $tk us - the 2-rank hop $spp8 us; pp4idle would say a core wait of $(calc "${p4i:-0} - ${spp8:-0}") us)"
	elif [ "$cwmode" = barrier ]; then
		# the waits a collective's ranks make, all of them at once,
		# from the barrier itself (no switch: it solved to 0 in every
		# kept run); pp4idle's idle ranks loop on MPI_Test and a yield
		cw=$(cwsolve "$n" "$barn") cwait="--core-wait $cw" sw=0
		echo "# $n ranks on $cores cores: a rank that waits while its core has no work sees its message $cw us after it came, no switch (PTL_BENCH_CWAIT=barrier: the model's barrier takes the best $n-rank barrier of the run, $barn us; pp4idle says $(calc "${p4i:-0} - ${spp8:-0}") us)"
	else
		cwmode=idle
		sw=$(switch "$n" "$barn")
		[ -n "$cw" ] && echo "# $n ranks on $cores cores: a rank that waits while its core has no work sees its message $cw us after it came (4-rank 8 B ping-pong beside two idle ranks $p4i us - the 2-rank one $spp8 us)"
	fi
	# the other waits in the library's own loop, every rank taking part
	# (xch4 8: two pairs' 8 B exchanges; eshift4 8: the 8 B shift)
	[ -n "$tk$px$sx" ] && echo "#   waits in the library's own loop: token hop ${tk:-?} us$([ "$cwmode" = token ] && echo ' (used)'), 8 B pair exchanges ${px:-?} us, 8 B shift ${sx:-?} us a round$([ "$cwmode" = token ] && [ "${PTL_BENCH_STEPSW:-1}" != 0 ] && [ -n "$sx" ] && [ -n "$px" ] && echo ' (used: below)' || echo ' (printed, not used)')"
	# A switch is not the same cost in every kind of step: where every
	# rank has a message to take at once (a shift: each rank sends to
	# the next; pair exchanges) a core's ranks run turn about, each
	# finding its message there, and a round of the 8 B shift took
	# about one token hop, where the model's chain paid two switches
	# (its 4-rank ring rows of 64 - 4096 B 1.3 - 1.7x over, recursive
	# doubling's small rows 1.25 - 1.47x). So a step's switch goes by
	# the step's pattern (coll_cost.c step_switches): a shift's solved
	# so that the model's 8 B shift takes eshift4's round, a pair
	# exchange's so that its pair exchange takes xch4's, the token's
	# elsewhere (trees, a bidirectional ring's two-way steps).
	# PTL_BENCH_STEPSW=0: the token's everywhere (the model before)
	if [ "$cwmode" = token ] && [ "${PTL_BENCH_STEPSW:-1}" != 0 ] && [ -n "$sx" ] && [ -n "$px" ]; then
		if swsh=$(secant shsw 8 "$sx") && swx=$(secant xsw 8 "$px"); then
			cwait="--switch-shift $swsh --switch-exchange $swx"
			echo "#   a switch in a shift's step $swsh us (the model's 8 B shift takes eshift4's $sx us), in a pair exchange's $swx us (the model's 8 B pair exchange takes xch4's $px us), $sw us elsewhere"
		else
			echo "#   a switch in a shift's step or a pair exchange's: none solved (the model's 8 B shift or pair exchange takes no longer with a longer one), the token's everywhere"
		fi
	fi
	[ "$cwmode" = token ] || [ "$cwmode" = bound ] ||
		echo "# $n ranks on $cores cores: CPU work scheduled on the cores; a rank that waited gets one back after a switch: $sw us from the best $n-rank barrier of the run ($barn us); each algorithm's rows take it from the barrier of their own launches (the host's load changes from launch to launch):"
	# Rendezvous copies where the ranks outnumber the cores: from 128 KiB
	# a 4-rank schedule's sends go by rendezvous, whose copies the 2-rank
	# rates above (each rank on a core of its own, its peer's lines on
	# the other) overstate here: two pairs' 1 MiB exchanges at once
	# took 152 us at best, two copies of 1 MiB per core, against 137 us
	# for one pair's pinned. So each size's copy time solved as the
	# reads': an exchange's (mpi_collcal's xch4, two pairs exchanging)
	# through the model's pair exchange on these cores, a one-way
	# move's (shift4, four ranks each sending to the next at once, as a
	# ring's step) through a third of the model's 4-rank ring allgather
	rates4= x4says= moves4= gaps4= m4says= rt4= xgaps4=
	for l in 131072 262144 524288 1048576; do
		[ "$n" -eq 4 ] || break
		h=$(cal 4 shift4 "$l") hl=$(cal 4 pp4one "$l")
		if [ -n "$h" ] && [ -n "$hl" ]; then
			# the copies' time (shift4, through s4) and the gap (the
			# lone move beyond the model's with those copies and no
			# gap), each from the other, three rounds from no gap
			g4=0 t1=
			for it in 1 2 3; do
				t=$(secant s4 "$l" "$h") || break
				t1=$t
				f=$(osplit=$split4 obulk= one "$l" 0 0 0 --move-piece "$piece" --move-rates "1048576:$(calc "$l / ($t1 * 1e-6)")")
				g4=$(calc "$hl > $f ? $hl - $f : 0")
			done
			[ -n "$t1" ] || m4says="$m4says $((l / 1024))K none ($h us: $(unsolved s4 "$l"))"
		fi
		if [ -n "$h" ] && [ -n "$hl" ] && [ -n "$t1" ]; then
			moves4="$moves4${moves4:+,}$l:$(calc "$l / ($t1 * 1e-6)")"
			gaps4="$gaps4${gaps4:+,}$l:$g4"
			m4says="$m4says $((l / 1024))K $(calc "$l / ($t1 * 1e3)") gap $g4 us ($h us, alone $hl us)"
		fi
		h=$(cal 4 xch4 "$l")
		[ -n "$h" ] && [ -n "$rates" ] || continue
		h=$(within xch4 "$l" "$h")
		# the copies' rate (xch4: two pairs at once, one pair's waits
		# passing in the other's copies) and, where the run has xch4one
		# (one pair alone), the gap: the lone exchange beyond the
		# model's with that rate and no gap, each from the other, three
		# rounds from no gap, the rate last with the last gap. Solved
		# with the moves above (xmove), as the rows take them: an
		# exchange's copy served once the other way's is done goes as
		# a one-way move there (coll_cost.c, EV_COPIED), and solved
		# without them the 4-rank recursive doubling's 1 MiB exchange
		# took 194 us in the solve and 125 in the row (s64/k1: every
		# exchange row at 1 MiB 0.71x - 0.79x)
		xmove=${moves4:+--move-piece $piece --move-rates $moves4 --move-gaps $gaps4}
		ho=$(cal 4 xch4one "$l") xg4=0 xgap=
		if ! t1=$(secant x4 "$l" "$h"); then
			x4says="$x4says $((l / 1024))K none ($h us: $(unsolved x4 "$l"))"
			xmove=
			continue
		fi
		for it in 1 2 3; do
			[ -n "$ho" ] || break
			xgap=
			f=$(x4one "$l" "$t1")
			xg4=$(calc "$ho > ${f:-0} ? $ho - ${f:-0} : 0")
			xgap="--xch-gaps 1048576:$xg4"
			t=$(x4solve "$l" "$h") || break
			t1=$t
		done
		xgap= xmove=
		rates4="$rates4${rates4:+,}$l:$(calc "$l / ($t1 * 1e-6)")"
		if [ -n "$ho" ]; then
			xgaps4="$xgaps4${xgaps4:+,}$l:$xg4"
			x4says="$x4says $((l / 1024))K $(calc "$l / ($t1 * 1e3)") gap $xg4 us ($h us, alone $ho us)"
		else
			x4says="$x4says $((l / 1024))K $(calc "$l / ($t1 * 1e3)") ($h us)"
		fi
	done
	[ -n "$rates4" ] && rt4="--copy-rates $rates4${xgaps4:+ --xch-gaps $xgaps4}" &&
		echo "#   rendezvous exchanges' copies on these cores, GB/s by size and the rest of a pair's alone (4-rank exchanges, two pairs at once; one pair alone):$x4says"
	[ -n "$moves4" ] && rt4="$rt4 --move-piece $piece --move-rates $moves4 --move-gaps $gaps4" &&
		echo "#   one-way moves on these cores, their copies' GB/s each core and the rest by size (4-rank shifts, each rank to the next at once; a move alone, 4-rank ping-pong):$m4says"
	# checks: the N-rank MPI_Bcast (binomial, the root alternating
	# between ranks 0 and 1) of 8 B and 1 MiB, best of the run
	for b in 8 1048576; do
		bm=$(cal "$n" bcast "$b")
		[ -n "$bm" ] || continue
		bp=$(predict --op bcast --ranks "$n" --bytes "$b" --alpha "$alpha" --beta "$ebeta" --overhead "$o" --call "$callb" $wk \
			--cmd-cost "$engcmd" $engsmall --acked-sends="$alpha" --noack-max "$noack" --rndv-min "$eager" --rndv-cost "$rndv" \
			--split-min "$split4" --split-cost "$splitc" --recv-post "${post:-0}" --lazy-max "$clazy" --cpu-copies \
			--cores "$cores" --switch-cost "$sw" $cwait $loop $rt $rt4)
		echo "#   check: $n-rank MPI_Bcast of $b B measured $bm us, predicted $bp us"
	done
	for a in $ALGOS; do
		ba=$(algo "$n" "$a" barrier 0)
		if [ "$cwmode" = token ] || [ "$cwmode" = bound ]; then
			break
		elif [ "$cwmode" = barrier ]; then
			[ -n "$ba" ] && printf '#   %s: core wait %s us (barrier %s us)\n' "$a" "$(cwsolve "$n" "$ba")" "$ba"
		else
			[ -n "$ba" ] && printf '#   %s %s us (barrier %s us)\n' "$a" "$(switch "$n" "$ba")" "$ba"
		fi
	done
	# Reads where the ranks outnumber the cores: mpi_collcal's rxch4
	# (ranks 0-1 and 2-3 exchanging at once, unpinned), each size's
	# read time solved (secant, as the switch) so that the model's pair
	# exchange on these cores - half its 4-rank recursive doubling, two
	# rounds of pairs - with reads of that time takes what rxch4 took
	[ "$n" -eq 4 ] && [ -n "$reads" ] || continue
	solve4 rxch4 rx4 16384 32768 65536
	# The rows' launches time the 4-rank ring's 64 KiB steps too, in the
	# rows' turns ("allgather 65536": its MPI_Allgather of the 256 KiB
	# rows' blocks): the 64 KiB read from there, through the model's
	# 4-rank allgather (ra4), where the run has it. Why: the pair
	# exchanges (rxch4) are not the ring's shift, and timed in launches
	# of their own; the 256 KiB rows of ring, ring_bidir,
	# halving-doubling came out 1.02-1.31x in every kept run. The
	# 16 KiB read likewise from the allgather of 16 KiB blocks beside
	# the 32 KiB rows (halving-doubling's first step, the tree's
	# halves): the exchanges' 13.6 - 14.1 GB/s (4.8 us a pair exchange,
	# most of it turns) put 32 KiB halving-doubling 1.09 - 1.16x and
	# the tree 1.18 - 1.21x in three ptl-only runs of 2026-12-05, the
	# allgather's 24 - 29 GB/s 0.91 - 0.98x and 0.85 - 0.89x (the
	# tree's one-way reads lie between the two)
	over4 16384 ra4
	over4 65536 ra4
	[ -n "$solved" ] && rcopy4="--inline-max $eager --read-rates $solved $rmeth4"
	[ -n "$says" ] && echo "#   reads on these cores, GB/s by size (4-rank exchanges, blocking sends, two pairs at once):$says"
	# Eager messages where the ranks outnumber the cores: their copies
	# at the 2-rank rate (epp: each rank on a core of its own, the
	# lines it writes read on the other) were cheap here (a 4-rank
	# ring's 8 KiB steps, its 32 KiB rows, predicted 0.42-0.59x). Each
	# size's rate solved (as the shifts' above) so that the model's
	# 4-rank shift of it on these cores takes what mpi_collcal's eshift4
	# took (four ranks each sending it eagerly to the next at once) -
	# beyond eshift4's 8 B round: the probe's rounds (MPI_Irecv,
	# MPI_Isend, MPI_Waitall in a loop) are not a collective's steps,
	# and the model's 8 B shift took 1.37 us a round where eshift4 took
	# 2.12 (the rows' 8 B steps predicted within 10%), so solved on the
	# whole round the 1 KiB copy took that gap too: 1.26 GB/s, 0.8 us a
	# copy, and the 4-rank 4 KiB rows of the ring family and
	# halving-doubling (1 KiB steps) read 1.58-1.89x; by the difference
	# 7.2 GB/s, 1.09-1.11x and 0.95x (kept run s36/q2, 2026-12-04)
	SOLVE4_REL=8 solve4 eshift4 es4 1024 4096 8192
	# and the 8 KiB copy from the ring's 8 KiB steps (the 32 KiB rows'
	# blocks) in the rows' launches, as the 64 KiB read above; the 1 KiB
	# one likewise from the 4 KiB rows' (eshift4's by the difference,
	# 2.5 - 4.3 GB/s, put the ring's 4 KiB row 1.21 - 1.42x in each of
	# ten kept runs and ring_bidir's and halving-doubling's 1.10 -
	# 1.24x; the allgather's 7 - 18 GB/s 0.97 - 1.07x, 0.95 - 1.05x and
	# 0.91 - 1.01x in the three runs that have it, s47/p4 - p6; the
	# tree's 2 KiB halves 0.85 - 0.93x from 0.95 - 1.05x)
	OVER4_FLOOR=$ebeta over4 1024 ea4
	over4 8192 ea4
	eager4=$solved
	[ -n "$says" ] && echo "#   eager copies on these cores, GB/s by size (4-rank shifts, each rank to the next at once):$says"
done
loop=$loop0
# The 2-rank rows' exchanges ("ringsteps", "allgather": the read rates,
# the 2 KiB eager copy) are timed in the rows' turns, and a launch's
# state holds for all it times (the 128 KiB ring steps 13.0 us in the
# one launch whose 256 KiB rows were fastest, 19-24 in the others, the
# rows' best 36.5 us against 37-52: the best of each figure, from
# different launches, put the prediction at 0.79x): each 2-rank row is
# predicted from the exchanges of the launch that timed its best trial,
# the rest of the calibration as above. PTL_BENCH_PAIR=0: every
# figure's best of all launches.
paired=
# Only runs that time "ringsteps" (from 2026-12-02 05:50): older kept
# runs timed their exchanges apart from the rows' turns in some launches,
# where a launch's exchanges need not share its rows' state (one such
# run's 32 KiB rows 1.5x over when paired)
[ "${PTL_BENCH_PAIR:-1}" != 0 ] && [ "${PTL_BENCH_XCH:-}" != collcal ] &&
	[ -n "$(algo 2 "$a1" ringsteps 2048)$(algo 2 "$a1" ringsteps 131072)" ] && paired=1
[ -n "$paired" ] && echo "#   each 2-rank row predicted with the exchanges (read rates, the 2 KiB eager copy) of the launch that timed its best trial (PTL_BENCH_PAIR=0: the best of all launches)"
# pair L: pair_rcopy, pair_eager from launch L's exchanges (worked out
# once a launch: pr_L, pe_L). Without read methods (readm) the reads are
# the whole run's (xrates).
pair() {
	digits "$1" || return 1
	if eval "[ -z \"\${pd_$1:-}\" ]"; then
		pr=$rcopy
		if [ -n "$rcopy0" ] && [ -n "$readm" ]; then
			x=$(XL=$1 readrates)
			pr=$rcopy0
			[ -n "${x%%|*}" ] && pr="$rcopy0 --read-rates ${x%%|*}"
		fi
		x=$(XL=$1 eagerrate)
		eval "pd_$1=1 pr_$1=\$pr pe_$1=\${x%%|*}"
	fi
	eval "pair_rcopy=\$pr_$1 pair_eager=\$pe_$1"
}
# switches: where the model takes bound cores' turns, the context
# switches a core a call, the model's (its turns, each a switch_cost)
# over the rows' launches' (fig's median, the upper middle one of an
# even count, of mpi_allreduce's "switches": getrusage's count per
# rank, times the ranks a core); "MODEL/-" for a run kept before the
# column (2026-12-06), "-" where the model takes no turns (ranks on
# cores of their own, unbound, other core modes). It shows where the
# model's turn-taking and the cores' part: in two launches of 2026-12-06
# the 4-rank tree's 32 KiB, 256 KiB and 1 MiB rows took 5.3, 29.8 and
# 117.8 switches where the model (on session 60's kept run f2) took
# 13.3, 48.2 and 61.9, and its time was off by +5.5, +30.5 and -111 us
# (1.20x, 1.27x, 0.81x): 0.7, 1.7 and 2.0 us a switch counted apart
# (switch_cost 1.8), while its rows up to 4 KiB, within 10%, counted
# 4.2 - 4.5 in the model and 4.4 - 4.8 measured.
# next: the row's second fastest launch (its best trial) over the fastest,
# how far the measured time stands from what one more launch would say.
# The rows also move between runs by more than the 10% asked (in eight
# kept runs, 2026-12-02, 35 of the 70 rows' measured times spanned more
# than 1.22x): the model follows a run as far as its calibration, timed
# in launches of its own, shares the rows' state
# launches: the range of the row's launches' own figures (each launch's
# median where the measured time is the median of those, else its best
# trial) over the measured time. Where it reaches past 0.90-1.10 some
# launches are themselves more than 10% from the measured time, and
# where its ends are more than 1.22x apart (1.1 / 0.9) no one time is
# within 10% of them all (4 ranks on 2 cores: the one-way ring's rows
# of up to 32 KiB spread 1.2 - 1.9x in every kept run of 2026-12-05,
# its launches falling either side of the median)
printf '%-2s %-18s %9s  %10s  %10s  %7s  %7s  %-11s  %-11s  %s\n' n algorithm bytes predicted measured ratio next switches launches "within 10%"
for a in $ALGOS; do
	for n in 2 4; do
		share=
		if [ "$n" -gt "$cores" ]; then
			ba=$(algo "$n" "$a" barrier 0)
			[ -n "$ba" ] || ba=$(cal "$n" barrier 0)
			# each mode's own, solved only where it is used
			if [ "$cwmode" = bound ] && [ -n "${sw:-}" ]; then
				share="--cores $cores --switch-cost $sw $cwait"
			elif [ "$cwmode" = token ] && [ -n "${sw:-}" ]; then
				share="--cores $cores --switch-cost $sw $cwait"
			elif [ -n "$ba" ] && [ "$cwmode" = barrier ]; then
				share="--cores $cores --switch-cost 0 --core-wait $(cwsolve "$n" "$ba")"
			elif [ -n "$ba" ]; then
				share="--cores $cores --switch-cost $(switch "$n" "$ba") $cwait"
			fi
		fi
		rc_n="$rcopy $readm" rt_n=$rt split_n=$split bulk_n=$bulkm lp=$loop
		[ "$n" -gt "$cores" ] && lp=$loop4
		[ "$n" -gt "$cores" ] && split_n=$split4 bulk_n= rc_n=$rcopy
		[ "$n" -gt "$cores" ] && [ -n "$rcopy4" ] && rc_n=$rcopy4
		[ "$n" -gt "$cores" ] && [ -n "$rt4" ] && rt_n="$rt $rt4"
		for bytes in $(awk -v k="$a $n allreduce" 'index($0, k " ") == 1 { print $4 }' "$W/algo" | sort -nu); do
			m=$(best "$W/algo" "$a" "$n" allreduce "$bytes")
			eager_n=
			[ "$n" -gt "$cores" ] && [ -n "$eager4" ] && eager_n="--eager-rates $eager4"
			[ "$n" -eq 2 ] && eager_n=$eager2
			# 2 ranks: the exchanges' figures of the launch whose
			# trial is the measured time (pair, above)
			[ "$n" -eq 2 ] && rc_n="$rcopy $readm"
			[ "$n" -eq 2 ] && [ -n "$paired" ] && pair "$(bestlaunch "$a" "$bytes")" &&
				rc_n="$pair_rcopy $readm" eager_n=$pair_eager
			self=$(cal 2 self "$bytes")
			# up to RD_DIRECT_MAX ptl's MPI runs recursive doubling
			# directly on the input (no copy first; coll.h's req.input)
			# and without a schedule or engine: the call is then the
			# checks alone, MPI_COMM_SELF's 8-byte call, nothing per
			# command, and its ACK-free rounds go request-free. Rows
			# whose rounds are (up to --small-max) take no call term:
			# the request-free ends (sovh: a blocking MPI_Send's and an
			# MPI_Recv's CPU) carry a call's checks each, more than
			# the one MPI_Allreduce makes, so the term only added more
			# of the same. With it the 8 B - 4 KiB rows read 0.88x -
			# 0.92x while a round sent before it made its receive (to
			# 2026-12-06), the 8 B row 1.13x - 1.17x once it received
			# first; without it 0.93x - 1.06x (three runs). Its
			# one copy is a local one: a lazy receive's out of the
			# unexpected buffer (the lower rank adds its input where
			# it is, in one pass, as the schedule's from_input)
			apart= lazy=$clazy engine=$callb percmd=$engcmd direct=$engsmall local=$lc waking=$wk
			# 2 ranks (one host): sends eager up to the pull limit
			xeager=$ceager
			[ "$n" -eq 2 ] && xeager=$peager
			if [ "$a" = recursive_doubling ] && [ "$bytes" -le "$rdmax" ]; then
				apart=--input lazy=$rdlazy
				self=$(cal 2 self 8)
				[ -n "$small" ] && engine=0 percmd=0 waking= direct="--small-max $rdsmall $small"
				[ -n "$small" ] && [ "$bytes" -le "$rdsmall" ] && self=
				# its rounds exchange the whole vector, not the 2 KiB steps eager2 timed
				[ "$n" -eq 2 ] && eager_n=
			elif [ -n "$allapart" ] && "$B/tools/ptltool" coll --op allreduce --ranks "$n" --bytes "$bytes" \
				--elem 8 --algo "$a" --ports "$(ports_of "$a")" --input >/dev/null 2>&1; then
				apart=--input
				self=$(cal 2 self 8)
			fi
			call=$(calc "$engine + ${self:-0}")
			# the reduction at the row's own size from 4 KiB (a
			# vector that stays in cache adds faster than 1 MiB's)
			g_n=
			# (the best launch's, as 1 MiB's: cal takes a quantile
			# from 1 KiB)
			[ "$bytes" -ge 4096 ] && g_n=$(CALQ=0; cal 2 gamma "$bytes")
			[ -n "$g_n" ] || g_n=$gamma
			[ -n "${PTL_BENCH_ARGS:-}" ] && echo "ARGS $a $n $bytes: --op allreduce --ranks $n --bytes $bytes --elem 8 --algo $a --ports $(ports_of "$a") $apart --alpha $alpha --beta $ebeta $eager_n --gamma $g_n --overhead $o --call $call $share --cpu-copies --acked-sends=$alpha --noack-max $noack --rndv-min $xeager $rc_n --rndv-cost $rndv --split-min $split_n $bulk_n --split-cost $splitc --recv-post ${post:-0} --lazy-max $lazy --cmd-cost $percmd $local $waking $direct $rsize $rt_n $lp" >&2
			pt=$(predict_turns --op allreduce --ranks "$n" --bytes "$bytes" --elem 8 --algo "$a" --ports "$(ports_of "$a")" $apart \
				--alpha "$alpha" --beta "$ebeta" $eager_n --gamma "$g_n" --overhead "$o" --call "$call" $share --cpu-copies \
				--acked-sends="$alpha" --noack-max "$noack" --rndv-min "$xeager" $rc_n --rndv-cost "$rndv" \
				--split-min "$split_n" $bulk_n --split-cost "$splitc" --recv-post "${post:-0}" --lazy-max "$lazy" --cmd-cost "$percmd" \
				$local $waking $direct $rsize $rt_n $lp)
			p=${pt% *}
			swc=-
			if [ -n "$pt" ] && [ "$n" -gt "$cores" ] && case " $share " in *" --bound "*) true ;; *) false ;; esac; then
				ms=$(algo "$n" "$a" switches "$bytes")
				swc=$(awk -v mt="${pt#* }" -v ms="$ms" -v per="$(calc "$n / $cores")" \
					'BEGIN { printf "%.1f/%s", mt, ms == "" ? "-" : sprintf("%.1f", per * ms) }')
			fi
			sp=$(awk -v k="$a $n allreduce $bytes" 'index($0, k " ") == 1 { print $(NF - 1) }' "$W/algo" | sort -g |
				awk 'NR == 1 { lo = $1 } NR == 2 { nx = $1 } END { printf "%.2f", (lo > 0 && NR > 1 ? nx / lo : 0) }')
			lr=$(awk -v k="$a $n allreduce $bytes" -v mm="$(mm "$n" && echo 1)" 'index($0, k " ") == 1 {
				print (ENVIRON["PTL_BENCH_STAT"] == "med" || mm ? $(NF - 2) : $(NF - 1)) }' "$W/algo" | sort -g |
				awk -v m="$m" 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR && m > 0) printf "%.2f-%.2f", lo / m, hi / m; else printf "-" }')
			awk -v n="$n" -v a="$a" -v b="$bytes" -v m="$m" -v p="${p:-0}" -v sp="$sp" -v sw="$swc" -v lr="$lr" 'BEGIN {
				r = 0; if (m > 0) r = p / m
				printf "%-2s %-18s %9s  %10.3f  %10.3f  %6.2fx  %6.2fx  %-11s  %-11s  %s\n", n, a, b, p, m, r, sp, sw, lr, (r > 1.1 || r < 0.9) ? "no" : "yes" }'
		done
	done
done > "$W/table"
cat "$W/table"
awk '{ n[$1]++; if ($NF == "yes") y[$1]++; split($(NF - 1), l, "-")
	if ($NF == "no" && $(NF - 1) != "-" && (l[1] + 0 < 0.9 || l[2] + 0 > 1.1)) w[$1]++ }
	END { for (k in n) printf "# %s ranks: %d of %d rows within 10%%%s\n", k, y[k], n[k],
		w[k] ? sprintf(" (%d of the %d outside with launches that themselves fall more than 10%% from the measured time)", w[k], n[k] - y[k]) : "" }' "$W/table" | sort

#!/bin/bash
# bench/verbs_vm.sh - ptl over the verbs NAL against perftest, on the same
# Soft-RoCE device (rxe0) in the same VM run (tests/vm/rxe-vm.sh).
#
#   bench/verbs_vm.sh [TRIALS]      (as root; build the tree first)
#
# SOFTWARE-EMULATED: rxe is the kernel's RoCE in software and the VM runs
# under TCG emulation (~70 Mb/s), so absolute times mean nothing; only the
# ratios of ptl to perftest, measured side by side in one boot, are
# reported. Sizes are what TCG gets through in a few minutes: 8 B latency,
# 1 MiB bandwidth (bench/ptl_pingpong --max-lat 8 --max-bw 1048576).
# PTL_BENCH_LAT_ITERS, PTL_BENCH_BW_ITERS: round trips and 1 MiB writes.
# PTL_BENCH_PROGRESS_THREAD=0 runs ptl with PTL_PROGRESS_THREAD=0 (each rank
# polls from one thread, as perftest does). With progress threads they sleep
# while the application polls (the verbs NAL does not arm its CQ then).
# Latency is compared two ways, each measured as perftest measures it:
# means (ptl's over all round trips against perftest's t_avg) and typical
# values (the median single round trip: ptl_pingpong --per-rtt stamps every
# round trip with the cycle counter, as ib_send_lat does, against its
# t_typical). On a busy host a preempted vCPU puts milliseconds into a mean;
# the typical figures are what the code costs. Both sides send 8 bytes of
# data, but ptl's SEND also carries its 72-byte Portals header, zipped to
# 44-64 bytes (lib/nal/verbs/vrb_zip.h: above 76 bytes rxe's CRC saves and
# restores the FPU state, which under TCG cost ~3 us per message).
# PTL_BENCH_OLD=DIR: also run the ptl of another build tree (say a clone at
# an older commit, built), its runs taking turns with this tree's in every
# trial, and print its rows beside this tree's: A/B in one boot.
# PTL_BENCH_LOAD=N: N busy loops on the host for the whole VM run (ended by
# their ids afterwards), a reproducible share of a loaded shared machine;
# the load average is printed before and after.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${PTL_TOP_BUILDDIR:-$top}
trials=${1:-3}
lat_n=${PTL_BENCH_LAT_ITERS:-1000}
bw_n=${PTL_BENCH_BW_ITERS:-64}
[ -x "$B/bench/ptl_pingpong" ] && [ -x "$B/tools/ptlrun" ] || { echo "build first: make -j2" >&2; exit 1; }
OLD=${PTL_BENCH_OLD:-}
[ -z "$OLD" ] || [ -x "$OLD/bench/ptl_pingpong" ] || { echo "PTL_BENCH_OLD=$OLD: no built bench/ptl_pingpong there" >&2; exit 1; }
out=$(mktemp -d /tmp/verbs_vm.XXXXXX)
inner=$out/inner.sh
# ptl's bandwidth trial is bw_n/32 windows of 32 puts: the bytes ib_write_bw moves.
rounds=$(( (bw_n + 31) / 32 ))
cat >"$inner" <<INNER
#!/bin/bash
# runs in the VM; perftest and ptl take turns, trial by trial
# On a loaded host the server may not listen yet when the client starts: the
# client tries again, and a server that never got its client is ended (it
# would wait for one forever).
pair() {
	timeout 300 \$1 >>"$out/\$3.srv" 2>&1 & s=\$!
	for try in 1 2 3 4 5; do
		sleep 2
		timeout 300 \$2 >>"$out/\$3.cli" 2>&1 && break
	done
	kill \$s 2>/dev/null
	wait \$s
}
for t in \$(seq $trials); do
	pair "ib_send_lat -d rxe0 -F -n $lat_n -s 8" "ib_send_lat -d rxe0 -F -n $lat_n -s 8 localhost" send_lat
	pair "ib_write_lat -d rxe0 -F -n $lat_n -s 8" "ib_write_lat -d rxe0 -F -n $lat_n -s 8 localhost" write_lat
	pair "ib_write_bw -d rxe0 -F -n $bw_n -s 1048576 --report_gbits" \\
	     "ib_write_bw -d rxe0 -F -n $bw_n -s 1048576 --report_gbits localhost" write_bw
	for f in ptl${OLD:+ old}; do
		d=$B; [ \$f = old ] && d=$OLD
		PTL_NAL=verbs PTL_PROGRESS_THREAD=${PTL_BENCH_PROGRESS_THREAD:-1} timeout 600 "\$d/tools/ptlrun" -n 2 --timeout 600 "\$d/bench/ptl_pingpong" \\
			--max-lat 8 --max-bw 0 --iters $lat_n --per-rtt 1 >>"$out/\${f}_lat.txt" 2>&1
		PTL_NAL=verbs PTL_PROGRESS_THREAD=${PTL_BENCH_PROGRESS_THREAD:-1} timeout 600 "\$d/tools/ptlrun" -n 2 --timeout 600 "\$d/bench/ptl_pingpong" \\
			--max-lat 0 --max-bw 1048576 --iters 50 --bw-rounds $rounds 1 >>"$out/\${f}_bw.txt" 2>&1
	done
done
INNER
chmod +x "$inner"
load_pids=
for i in $(seq "${PTL_BENCH_LOAD:-0}"); do
	timeout 3600 sh -c 'while :; do :; done' & load_pids="$load_pids $!"
done
echo "host load average before: $(cut -d' ' -f1-3 /proc/loadavg)${load_pids:+ (with ${PTL_BENCH_LOAD} busy loops)}"
PTL_VM_RW=${PTL_VM_RW:+$PTL_VM_RW:}${OLD:+$OLD:}$out PTL_VM_TIMEOUT=${PTL_VM_TIMEOUT:-900} "$top/tests/vm/rxe-vm.sh" "$inner"
rc=$?
echo "host load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $load_pids; do kill "$p" 2>/dev/null; done
[ $rc = 0 ] || { echo "the VM run failed (rc $rc); files in $out" >&2; exit $rc; }
# Medians over the trials. perftest: the data line starts with the size;
# t_typical is column 5, t_avg column 6, BW average (Gb/s) column 4.
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
pt() { awk -v s="$2" -v c="$3" '$1 == s && NF >= c && $2 ~ /^[0-9]+$/ { print $c }' "$out/$1.cli" | med; }
send_lat=$(pt send_lat 8 6)
write_lat=$(pt write_lat 8 6)
send_typ=$(pt send_lat 8 5)
write_typ=$(pt write_lat 8 5)
write_bw=$(pt write_bw 1048576 4)
# ptl_lat.txt, per trial of lat_n round trips: "rtt 8 <median round trip>
# <min> <max>" and "mean 8 <mean>".
typ() { awk '$1 == "rtt" && $2 == 8 { print $3 }' "$out/$1_lat.txt" | med; }
mean() { awk '$1 == "mean" && $2 == 8 { print $3 }' "$out/$1_lat.txt" | med; }
bw() { awk '$1 == "bw" && $2 == 1048576 { print $3 }' "$out/$1_bw.txt" | med; }
gbit() { awk -v g="$1" 'BEGIN { if (g != "") printf "%.3f", g * 8 }'; }
ptl_typ=$(typ ptl)
ptl_lat=$(mean ptl)
ptl_bw=$(bw ptl)
echo "SOFTWARE-EMULATED (rdma_rxe in a TCG VM): ratios only, absolute numbers are not performance"
echo "medians of $trials interleaved trials; latency over $lat_n round trips, bandwidth over ${bw_n} x 1 MiB;"
echo "ptl with PTL_PROGRESS_THREAD=${PTL_BENCH_PROGRESS_THREAD:-1}"
printf '%-44s %10s %10s %8s\n' figure ptl perftest ratio
r() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }
row() { printf '%-44s %10s %10s %8s\n' "$1" "${2:-?}" "${3:-?}" "$(r "$2" "$3")"; }
row "8 B half RTT, typical us / ib_send_lat" "$ptl_typ" "$send_typ"
row "8 B half RTT, typical us / ib_write_lat" "$ptl_typ" "$write_typ"
row "8 B half RTT, mean us / ib_send_lat" "$ptl_lat" "$send_lat"
row "8 B half RTT, mean us / ib_write_lat" "$ptl_lat" "$write_lat"
row "1 MiB bandwidth (Gb/s) / ib_write_bw" "$(gbit "$ptl_bw")" "$write_bw"
if [ -n "$OLD" ]; then
	echo "PTL_BENCH_OLD=$OLD, taking turns with this tree in every trial:"
	row "old: 8 B half RTT, typical us / ib_send_lat" "$(typ old)" "$send_typ"
	row "old: 8 B half RTT, mean us / ib_send_lat" "$(mean old)" "$send_lat"
	row "old: 1 MiB bandwidth (Gb/s) / ib_write_bw" "$(gbit "$(bw old)")" "$write_bw"
	row "8 B half RTT, typical us: this tree / old" "$ptl_typ" "$(typ old)"
fi
echo "goals (on real hardware): latency ratio <= 1.2 (vs ib_send_lat), bandwidth ratio >= 0.9 (vs ib_write_bw)"
echo "raw output: $out"

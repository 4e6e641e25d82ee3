#!/bin/sh
# slurm.sh: a one-node Slurm of our own (munged, slurmctld and slurmd started
# by hand from a slurm.conf written into a temporary folder, no systemd, no
# cgroups, no accounting), then srun directly: the ring example (4 ranks),
# tests/ptl/mp's mp_match and mp_bulk (2 ranks) and tests/mpi's mpi_coll,
# mpi_dtype, mpi_err (2 ranks) and mpi_comm (3 ranks) under `srun --mpi=pmix` (lib/rt's PMIx backend) and
# `srun --mpi=pmi2` (its PMI-1 backend: Slurm's pmi2 plugin answers PMI-1 on
# PMI_FD), and `srun --mpi=none`, where every rank must stop and name the
# --mpi= to use; and, inside an allocation (salloc -n 4), a program run once
# and mpiexec.hydra's and mpirun's ranks must not be taken for ranks of a
# wrong plugin. The node declares 4 CPUs whatever the machine has
# (SlurmdParameters=config_overrides) and srun -O overcommits. Every daemon
# started here is stopped on exit. Skipped (77) without root or the Slurm
# and munge packages.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
B=$PTL_TOP_BUILDDIR
. "$(dirname "$0")/../job_output.sh"
# a step or allocation that hangs is stopped and named (limited)
. "$(dirname "$0")/../time_limit.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to run munged as the munge user and slurmd"; exit 77; }
for c in munged slurmctld slurmd srun sinfo scontrol setpriv; do
	command -v $c >/dev/null 2>&1 || {
		echo "SKIP: $c not installed (Debian: slurmctld slurmd slurm-client munge)"; exit 77; }
done
id munge >/dev/null 2>&1 || { echo "SKIP: no munge user (Debian: munge)"; exit 77; }

T=$(mktemp -d /tmp/ptl-slurm.XXXXXX) || exit 99
chmod 755 "$T"
mkdir -p "$T/state" "$T/spool" "$T/log"
install -d -o munge -g munge -m 0755 "$T/munge"
MUNGE_PID='' CTLD_PID='' SLURMD_PID=''

# Waits up to $2 tenths of a second for process $1 to end.
waitgone() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt "$2" ]; do sleep 0.1; i=$((i + 1)); done
	! kill -0 "$1" 2>/dev/null
}
stop() {
	# A step killed by a timeout may leave its slurmstepd; cancel what is
	# left while slurmctld still answers, then the daemons, munged last.
	if [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
		jobs=$(timeout 5 squeue -h -o %i 2>/dev/null)
		[ -n "$jobs" ] && timeout 5 scancel $jobs 2>/dev/null
	fi
	for p in $SLURMD_PID $CTLD_PID; do kill -TERM "$p" 2>/dev/null; done
	for p in $SLURMD_PID $CTLD_PID; do
		waitgone "$p" 100 || { echo "warning: daemon $p ignored SIGTERM; killing it"; kill -KILL "$p"; }
	done
	if [ -n "$MUNGE_PID" ]; then
		kill -TERM "$MUNGE_PID" 2>/dev/null
		waitgone "$MUNGE_PID" 50 || kill -KILL "$MUNGE_PID" 2>/dev/null
	fi
	rm -rf "$T"
}
trap 'stop' EXIT
trap 'exit 1' INT TERM HUP
# The daemons' logs, each whole up to job_output's bound: why a step
# failed (a plugin that did not load, a credential refused) is seldom in
# a log's last lines.
logs() {
	for f in "$T"/log/*; do echo "--- $f"; job_output "$(cat "$f")"; done
}

# munged: our own key, socket, pid and log, as the munge user (it refuses
# to run as root and checks that its directories belong to it).
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
chown munge:munge "$T/munge/munge.key" && chmod 0400 "$T/munge/munge.key"
SOCK=$T/munge/munge.socket
setpriv --reuid=munge --regid=munge --init-groups munged -F --key-file="$T/munge/munge.key" \
	--socket="$SOCK" --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
	--seed-file="$T/munge/munged.seed" >"$T/log/munged.out" 2>&1 &
MUNGE_PID=$!
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 100 ] && kill -0 $MUNGE_PID 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
[ -S "$SOCK" ] || { echo "FAIL: munged did not create its socket $SOCK in 10 s"; cat "$T/log/munged.out"; exit 1; }

# Ports per run, so that a Slurm somebody else runs here is left alone.
PORT=$((20000 + ($$ % 5000) * 2))
HOST=$(hostname -s)
export SLURM_CONF=$T/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=ptltest
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: processes tracked by process group, no task binding.
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Trust the CPUs declared below, not the ones slurmd counts.
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=2
NodeName=ptlnode NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=500 State=UNKNOWN
PartitionName=ptl Nodes=ptlnode Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:4
EOF

t0=$(date +%s)
slurmctld -D -c -f "$SLURM_CONF" >"$T/log/slurmctld.out" 2>&1 &
CTLD_PID=$!
slurmd -D -N ptlnode -f "$SLURM_CONF" >"$T/log/slurmd.out" 2>&1 &
SLURMD_PID=$!
st='' i=0
while [ $i -lt 200 ]; do
	st=$(timeout 5 sinfo -h -N -o %T 2>/dev/null)
	case $st in idle*) break ;; esac
	if ! kill -0 $CTLD_PID 2>/dev/null || ! kill -0 $SLURMD_PID 2>/dev/null; then break; fi
	sleep 0.1; i=$((i + 1))
done
case $st in
idle*) echo "Slurm up: node ptlnode idle $(($(date +%s) - t0)) s after starting slurmctld and slurmd" ;;
*)	echo "FAIL: node ptlnode not idle 20 s after starting slurmctld and slurmd (sinfo: '${st:-no answer}')"
	logs; exit 1 ;;
esac

plugins=$(srun --mpi=list 2>&1)
fail=0
run() {
	n=$1; shift
	limited 60 srun -O -n "$n" --kill-on-bad-exit=1 --time=2 "$@" 2>&1
}
check() {
	mpi=$1 what=$2 n=$3; shift 3
	out=$(run "$n" --mpi="$mpi" "$@"); rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL (srun --mpi=$mpi): $what exited $rc"; job_output "$out"; fail=1
	else
		echo "ok (srun --mpi=$mpi): $what"
	fi
}
for mpi in pmix pmi2; do
	case $mpi in
	pmix)
		echo "$plugins" | grep -qw pmix || { echo "skip (srun --mpi=pmix): Slurm has no pmix plugin"; continue; }
		ldconfig -p | grep -q 'libpmix\.so ' ||
			{ echo "skip (srun --mpi=pmix): Slurm's pmix plugin needs libpmix.so (Debian: libpmix-dev)"; continue; }
		ldd "$B/lib/.libs/libptl.so" 2>/dev/null | grep -q libpmix ||
			{ echo "skip (srun --mpi=pmix): libptl built without PMIx (install libpmix-dev, re-run configure)"; continue; } ;;
	pmi2)
		echo "$plugins" | grep -qw pmi2 || { echo "skip (srun --mpi=pmi2): Slurm has no pmi2 plugin"; continue; } ;;
	esac
	out=$(run 4 --mpi="$mpi" "$B/examples/ring"); rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL (srun --mpi=$mpi): ring, 4 ranks exited $rc"; job_output "$out"; fail=1
	elif ! echo "$out" | grep -q "initiator .*/3 "; then
		# Four jobs of one would each be rank 0 of 1.
		echo "FAIL (srun --mpi=$mpi): ring did not see rank 3"; job_output "$out"; fail=1
	else
		echo "ok (srun --mpi=$mpi): ring, 4 ranks"
	fi
	check "$mpi" "mp_match, 2 ranks" 2 "$B/tests/ptl/mp/mp_match"
	check "$mpi" "mp_bulk, 2 ranks" 2 "$B/tests/ptl/mp/mp_bulk"
	# MPI tests: each prints "PROG: N ranks: ok (0 failed checks)", which
	# also says the job has N ranks.
	for t in mpi_p2p:3 mpi_coll:2 mpi_comm:3 mpi_dtype:2 mpi_err:2; do
		prog=${t%:*} n=${t#*:}
		[ -x "$B/tests/mpi/$prog" ] || continue
		out=$(limited 30 srun -O -n "$n" --kill-on-bad-exit=1 --time=1 --mpi="$mpi" "$B/tests/mpi/$prog" 2>&1); rc=$?
		if [ $rc -ne 0 ] || ! echo "$out" | grep -q "^$prog: $n ranks: ok (0 failed checks)"; then
			echo "FAIL (srun --mpi=$mpi): $prog, $n ranks exited $rc"; job_output "$out"; fail=1
		else
			echo "ok (srun --mpi=$mpi): $prog, $n ranks"
		fi
	done
done

# Inside an allocation of 4 tasks (SLURM_NTASKS=4 in the environment): a
# program run once is a job of one, and the ranks of another launcher
# (their Slurm variables are the allocation's or those of the srun step that
# started the launcher's daemons) are the job that launcher says.
inalloc() {
	what=$1; shift
	out=$(limited 60 salloc -n 4 -O --time=2 "$@" 2>&1); rc=$?
	if [ $rc -ne 0 ] || ! echo "$out" | grep -q "went all the way round"; then
		echo "FAIL (salloc -n 4): $what exited $rc"; job_output "$out"; fail=1
	else
		echo "ok (salloc -n 4): $what"
	fi
}
inalloc "ring run once (a job of one)" "$B/examples/ring"
command -v mpiexec.hydra >/dev/null &&
	inalloc "mpiexec.hydra -n 2 ring" mpiexec.hydra -n 2 "$B/examples/ring"
command -v mpirun.openmpi >/dev/null && ldd "$B/lib/.libs/libptl.so" 2>/dev/null | grep -q libpmix &&
	inalloc "mpirun -n 2 ring" mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 "$B/examples/ring"

# The wrong plugin: every rank is told which --mpi= to use, and fails.
out=$(run 2 --mpi=none "$B/examples/ring"); rc=$?
n=$(echo "$out" | grep -c "launcher started 2 ranks (SLURM_STEP_NUM_TASKS).*use srun --mpi=pmi")
if [ $rc -eq 0 ] || [ "$n" -ne 2 ]; then
	echo "FAIL (srun --mpi=none): wanted a failure and the --mpi= advice from both ranks, got exit $rc and $n advice lines"
	job_output "$out"; fail=1
else
	echo "ok (srun --mpi=none): both ranks stop and name --mpi=pmix/pmi2"
fi
[ $fail -eq 0 ] || logs
exit $fail

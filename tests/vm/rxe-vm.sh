#!/bin/bash
# tests/vm/rxe-vm.sh - run a command inside a throw-away QEMU virtual machine
# that has a real RDMA verbs device: Soft-RoCE (rdma_rxe) rxe0 on the VM's NIC.
#
#   tests/vm/rxe-vm.sh PROGRAM [ARG...]      run an argv
#   tests/vm/rxe-vm.sh 'shell command'       one argument: run it with bash -c
#
# The VM boots a stock Debian kernel (fetched once into the cache) and sees
# this machine's / read-only over virtio-9p with a tmpfs on top, so the build
# tree and the host's libraries run unchanged inside; writes are thrown away
# except in the directories listed in PTL_VM_RW. The command runs as root in
# the current directory with the caller's exported environment; its stdout,
# stderr and exit status come back over serial lines. To run many tests in
# one boot, give it a script that runs them all (tests/vm/vm-tests.sh).
#
# Exit status: the command's; 77 with "SKIP: <reason>" when the VM cannot run
# here; 99 when the VM failed (boot, mounts, rxe); 124 on PTL_VM_TIMEOUT.
#
# Environment (all optional):
#   PTL_VM_CACHE=/var/cache/ptl-vm  kernel, initramfs and job folders
#   PTL_VM_TIMEOUT=300    seconds for the whole boot-run-poweroff
#   PTL_VM_RW=DIR[:DIR]   host directories shared read-write (same paths)
#   PTL_VM_MEM=1G PTL_VM_SMP=2
#   PTL_VM_NET=listen:PORT|connect:PORT|udp:MINE:PEER   join another VM's
#                         NIC through a QEMU socket on 127.0.0.1 (rxe-vm2.sh);
#                         default: a NIC with no peer
#   PTL_VM_IP=192.0.2.1/24  eth0's address (the MAC follows its last byte)
#   PTL_VM_NETNS=NAME     run qemu in this network namespace (rxe-vm2.sh's)
#   PTL_VM_ACCEL=tcg      tcg, or kvm where /dev/kvm really works
#   PTL_VM_KERNEL_PKG=linux-image-...   default: what linux-image-amd64 names
#   PTL_VM_KEEP=1         keep the job folder (console and qemu logs)
#   PTL_VM_DEBUG=1        narrate the boot in the console log
set -uo pipefail
me=rxe-vm
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${PTL_VM_CACHE:-/var/cache/ptl-vm}
TIMEOUT=${PTL_VM_TIMEOUT:-300}

. "$here/../job_output.sh"

skip() { echo "SKIP: $me: $*" >&2; exit 77; }
fail() { echo "$me: $*" >&2; exit 99; }
have() { command -v "$1" >/dev/null 2>&1; }

[ $# -ge 1 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d' >&2; exit 2; }

# ------------------------------------------------------------ can we run here
[ "$(uname -m)" = x86_64 ] || skip "needs an x86_64 host (this is $(uname -m))"
[ "$(id -u)" = 0 ] || skip "must run as root (qemu shares / with security_model=none)"
have qemu-system-x86_64 || skip "no qemu-system-x86_64 (apt-get install qemu-system-x86; scripts/deps.sh)"
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } ||
	skip "no static /bin/busybox (apt-get install busybox-static)"
for t in depmod:kmod modprobe:kmod rdma:iproute2 xz:xz-utils dpkg:dpkg apt-get:apt \
	 ibv_devinfo:ibverbs-utils flock:util-linux timeout:coreutils; do
	have "${t%%:*}" || skip "no ${t%%:*} (apt-get install ${t#*:})"
done
[ -e /etc/libibverbs.d/rxe.driver ] || skip "no rxe verbs provider (apt-get install ibverbs-providers)"
case "$CACHE" in *[[:space:]]*) skip "PTL_VM_CACHE must not contain white space" ;; esac
mkdir -p "$CACHE/jobs" 2>/dev/null || skip "cannot create the cache folder $CACHE"

# ------------------------------------------------------------ kernel (once)
exec 9>"$CACHE/.lock"
flock -w 600 9 || fail "waited 10 minutes for $CACHE/.lock"
KPKG=${PTL_VM_KERNEL_PKG:-}
if [ -z "$KPKG" ] && [ -s "$CACHE/kernel.pkg" ]; then
	KPKG=$(cat "$CACHE/kernel.pkg")
fi
kpkg_lookup() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}
if [ -z "$KPKG" ]; then
	KPKG=$(kpkg_lookup)
	[ -n "$KPKG" ] || { timeout 120 apt-get update -qq >/dev/null 2>&1; KPKG=$(kpkg_lookup); }
	[ -n "$KPKG" ] || skip "no Debian kernel package reachable (apt-cache depends linux-image-amd64 names none)"
fi
KVER=${KPKG#linux-image-}
KDIR=$CACHE/kernel-$KVER
if [ ! -f "$KDIR/.complete" ]; then
	echo "$me: fetching $KPKG into $CACHE (once)" >&2
	rm -rf "$KDIR" "$CACHE/dl"
	mkdir -p "$CACHE/dl"
	(cd "$CACHE/dl" && timeout 300 apt-get download "$KPKG" >/dev/null 2>&1) ||
		{ rm -rf "$CACHE/dl"; skip "cannot download $KPKG (no package archive reachable?)"; }
	dpkg -x "$CACHE"/dl/*.deb "$KDIR" || fail "dpkg -x of $KPKG failed"
	rm -rf "$CACHE/dl"
	depmod -b "$KDIR" "$KVER" || fail "depmod -b $KDIR $KVER failed"
	# The ELF vmlinux inside the bzImage boots straight through its PVH
	# entry, skipping the decompressor: seconds saved on every TCG boot.
	img=$KDIR/boot/vmlinuz-$KVER
	at=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$img" | head -n1 | cut -d: -f1)
	if [ -n "$at" ]; then
		tail -c +$((at + 1)) "$img" | xz -dc >"$KDIR/vmlinux" 2>/dev/null
		[ "$(head -c 4 "$KDIR/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] || rm -f "$KDIR/vmlinux"
	fi
	echo "$KPKG" >"$CACHE/kernel.pkg"
	touch "$KDIR/.complete"
fi
MODTREE=$KDIR/lib/modules/$KVER
[ -d "$MODTREE" ] || fail "$KPKG has no lib/modules/$KVER"

# ------------------------------------------------------------ initramfs
MODS="virtio_pci virtio_net 9pnet_virtio 9p overlay rdma_rxe ib_uverbs rdma_ucm ib_umad crc32_generic crc32_pclmul"
stamp=$( { cat "$here/vm-init.sh"; echo "$MODS $KVER"; md5sum /bin/busybox; } | md5sum | cut -c1-12)
INITRD=$CACHE/initramfs-$KVER-$stamp.cpio.gz
if [ ! -f "$INITRD" ]; then
	st=$(mktemp -d "$CACHE/initramfs.XXXXXX") || fail "mktemp failed"
	mkdir -p "$st/bin" "$st/mod"
	cp /bin/busybox "$st/bin/busybox"
	cp "$here/vm-init.sh" "$st/init"
	chmod 755 "$st/init"
	for m in $MODS; do
		modprobe -d "$KDIR" -S "$KVER" --show-depends "$m" 2>/dev/null |
			awk '$1 == "insmod" { print $2 }'
	done | awk '!seen[$0]++' | while read -r f; do
		cp "$f" "$st/mod/" && basename "$f" >>"$st/mod/order"
	done
	grep -q '^rdma_rxe' "$st/mod/order" 2>/dev/null || { rm -rf "$st"; skip "kernel $KVER has no rdma_rxe module"; }
	(cd "$st" && find . | LC_ALL=C sort | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$INITRD.tmp" &&
		mv "$INITRD.tmp" "$INITRD" || { rm -rf "$st"; fail "cannot pack the initramfs"; }
	rm -rf "$st"
	rm -f $(ls "$CACHE"/initramfs-*.cpio.gz | grep -v -- "-$stamp.cpio.gz") 2>/dev/null
fi
flock -u 9
exec 9>&-

# ------------------------------------------------------------ the job
JOB=$(mktemp -d "$CACHE/jobs/job.XXXXXX") || fail "mktemp in $CACHE/jobs failed"
{
	echo "# $me job"
	# PTL_VM_* go in too: the tests inside read theirs (PTL_VM_TEST_TIMEOUT).
	for v in $(compgen -e); do
		case $v in BASH*|SHELLOPTS|EUID|UID|PPID|PWD|OLDPWD|SHLVL|_) continue ;; esac
		printf 'export %s=%q 2>/dev/null\n' "$v" "${!v}"
	done
	printf 'cd -- %q || exit 99\n' "$PWD"
	if [ $# -eq 1 ]; then
		printf 'exec /bin/bash -c %q\n' "$1"
	else
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	fi
} >"$JOB/job.sh"

share=()
if [ -n "${PTL_VM_RW:-}" ]; then
	i=0
	IFS=: read -r -a dirs <<<"$PTL_VM_RW"
	for d in "${dirs[@]}"; do
		[ -n "$d" ] || continue
		d=$(realpath -e -- "$d") || fail "PTL_VM_RW: no folder $d"
		case "$d" in *[[:space:]]*) fail "PTL_VM_RW: no white space in paths: $d" ;; esac
		share+=(-fsdev "local,id=rw$i,path=$d,security_model=none,multidevs=remap"
			-device "virtio-9p-pci,fsdev=rw$i,mount_tag=rw$i")
		echo "rw$i $d" >>"$JOB/rw.list"
		i=$((i + 1))
	done
fi

# The NIC: alone, or one end of a point-to-point link to another VM. The
# socket stays on 127.0.0.1, so nothing the VMs send leaves this machine.
IP=${PTL_VM_IP:-192.0.2.1/24}
[[ $IP =~ ^([0-9]{1,3}\.){3}([0-9]{1,3})/[0-9]{1,2}$ ]] || fail "PTL_VM_IP must be A.B.C.D/N, not '$IP'"
mac=$(printf '52:54:00:77:00:%02x' "${BASH_REMATCH[2]}")
case ${PTL_VM_NET:-} in
"") net=(-netdev hubport,id=n0,hubid=0) ;;
listen:[0-9]*|connect:[0-9]*) net=(-netdev "socket,id=n0,${PTL_VM_NET%%:*}=127.0.0.1:${PTL_VM_NET#*:}") ;;
udp:[0-9]*:[0-9]*)
	p=${PTL_VM_NET#udp:}
	net=(-netdev "socket,id=n0,localaddr=127.0.0.1:${p%%:*},udp=127.0.0.1:${p#*:}") ;;
*) fail "PTL_VM_NET must be listen:PORT, connect:PORT or udp:LOCALPORT:PEERPORT, not '$PTL_VM_NET'" ;;
esac

case ${PTL_VM_ACCEL:-tcg} in
kvm) accel=(-accel kvm -cpu host) ;;
tcg) accel=(-accel tcg,thread=multi -cpu max) ;;
*) fail "PTL_VM_ACCEL must be tcg or kvm" ;;
esac
kernel=$KDIR/vmlinux
[ -f "$kernel" ] || kernel=$KDIR/boot/vmlinuz-$KVER
bios=()
[ -f /usr/share/qemu/qboot.rom ] && bios=(-bios /usr/share/qemu/qboot.rom)
# no_timer_check: under TCG on a loaded host the kernel's check that the
# IO-APIC timer ticks can time out and panic the boot ("IO-APIC + timer
# doesn't work"); the emulated timer works, the check is what fails.
cmdline="console=ttyS0 panic=-1 no_timer_check quiet ptlvm_job=$JOB ptlvm_mod=$MODTREE ptlvm_host=$(hostname 2>/dev/null || echo ptlvm) ptlvm_ip=$IP"
[ "${PTL_VM_DEBUG:-0}" = 1 ] && cmdline="$cmdline ptlvm_debug=1"

mkfifo "$JOB/out" "$JOB/err"
cat "$JOB/out" &
cat_out=$!
cat "$JOB/err" >&2 &
cat_err=$!
qemu=
finish() {
	[ -n "$qemu" ] && kill "$qemu" 2>/dev/null
	# A reader still blocked in open() (qemu never opened its fifo) gets
	# a writer that closes at once.
	for f in "$JOB/out" "$JOB/err"; do exec 8<>"$f"; exec 8>&-; done
	wait "$cat_out" "$cat_err" 2>/dev/null
}
trap 'finish; rm -rf "$JOB"; exit 130' INT TERM HUP

nsexec=()
[ -n "${PTL_VM_NETNS:-}" ] && nsexec=(ip netns exec "$PTL_VM_NETNS")
timeout -k 5 "$TIMEOUT" "${nsexec[@]}" qemu-system-x86_64 "${accel[@]}" -machine pc \
	-m "${PTL_VM_MEM:-1G}" -smp "${PTL_VM_SMP:-2}" "${bios[@]}" \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$kernel" -initrd "$INITRD" -append "$cmdline" \
	-chardev file,id=s0,path="$JOB/console.log" -serial chardev:s0 \
	-chardev file,id=s1,path="$JOB/out" -serial chardev:s1 \
	-chardev file,id=s2,path="$JOB/err" -serial chardev:s2 \
	-chardev file,id=s3,path="$JOB/status" -serial chardev:s3 \
	-fsdev local,id=host,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=host,mount_tag=host \
	"${share[@]}" \
	"${net[@]}" -device virtio-net-pci,netdev=n0,mac=$mac \
	>"$JOB/qemu.log" 2>&1 &
qemu=$!
wait "$qemu"
qrc=$?
qemu=
finish
trap - INT TERM HUP

status=$(tr -d '\r' <"$JOB/status" 2>/dev/null | grep -m1 -E '^PTLVM_(RC|FAIL) ' || true)
if [ "${status%% *}" = PTLVM_RC ]; then
	[ "${PTL_VM_KEEP:-0}" = 1 ] && echo "$me: job folder $JOB" >&2 || rm -rf "$JOB"
	exit "${status#PTLVM_RC }"
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "$me: timed out after ${TIMEOUT}s (PTL_VM_TIMEOUT); logs in $JOB" >&2
	rc=124
else
	echo "$me: the VM ended without an exit status (qemu rc $qrc${status:+, $status}); logs in $JOB" >&2
	rc=99
fi
{
	echo "---- qemu.log"
	cat "$JOB/qemu.log"
	# whole up to job_output's bound: where a boot or a job went wrong
	# is seldom in the console's last lines
	echo "---- console.log"
	job_output "$(cat "$JOB/console.log")"
} >&2 2>/dev/null
# qemu itself not starting (e.g. no usable accelerator) is this machine's
# limitation, not a test failure.
if grep -qiE 'could not initialize|failed to initialize|not supported' "$JOB/qemu.log" 2>/dev/null &&
   [ ! -s "$JOB/console.log" ]; then
	echo "SKIP: $me: qemu cannot start a VM here" >&2
	exit 77
fi
exit $rc

#!/bin/busybox sh
# tests/vm/vm-init.sh - PID 1 of the ptl Soft-RoCE test VM (see rxe-vm.sh).
#
# Boot parameters the kernel passes on to us as environment:
#   ptlvm_job=DIR     host directory (seen through the 9p root) with job.sh
#                     and, optionally, rw.list ("TAG PATH" per line)
#   ptlvm_mod=DIR     host directory holding lib/modules/<this kernel>
#   ptlvm_host=NAME   host name to take (so /etc/hosts of the host applies)
#   ptlvm_ip=A.B.C.D/N  eth0's address (default 192.0.2.1/24)
#   ptlvm_debug=1     narrate the boot on the console
# Serial lines: ttyS0 console, ttyS1 job stdout, ttyS2 job stderr,
# ttyS3 one status line, "PTLVM_RC <n>" or "PTLVM_FAIL <why>".
/bin/busybox mkdir -p /bin /proc /sys /dev /ro /rw /root
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev

say() { [ "${ptlvm_debug:-0}" = 1 ] && echo "ptlvm [$(cut -d' ' -f1 /proc/uptime)] $*" >/dev/console; return 0; }
off() { sync; poweroff -f; sleep 5; echo o >/proc/sysrq-trigger; }
die() {
	echo "ptlvm: $*" >/dev/console
	echo "ptlvm: $*" >/dev/ttyS2
	echo "PTLVM_FAIL $*" >/dev/ttyS3
	off
}
# Binary-clean lines out: no CR insertion, no echo back.
for t in 1 2 3; do stty -F /dev/ttyS$t raw -echo 2>/dev/null; done
[ -n "${ptlvm_host:-}" ] && hostname "$ptlvm_host"

# Modules in the order the host's kmod computed (dependencies first).
while read -r m; do
	[ -n "$m" ] || continue
	insmod "/mod/$m" 2>/dev/null && continue
	case $m in crc32*) continue ;; esac    # CPU-dependent helpers may refuse
	die "cannot load module $m"
done </mod/order
say "modules in"

# The host's / read-only, a tmpfs on top, and the usual API filesystems.
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose host /ro ||
	die "cannot mount the host root over 9p"
mount -t tmpfs -o mode=0755 rw /rw
mkdir -p /rw/u /rw/w
mount -t overlay -o lowerdir=/ro,upperdir=/rw/u,workdir=/rw/w root /root || die "overlay mount failed"
R=/root
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs dev $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts $R/dev/pts
mount -t tmpfs shm $R/dev/shm
mount -t tmpfs run $R/run
mount -t tmpfs tmp $R/tmp
job=${ptlvm_job:-}
[ -n "$job" ] && [ -f "$R$job/job.sh" ] || die "no job script in '$job'"
if [ -f "$R$job/rw.list" ]; then
	while read -r tag dir; do
		[ -n "$tag" ] || continue
		mkdir -p "$R$dir"
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap "$tag" "$R$dir" ||
			die "cannot mount $dir read-write"
	done <"$R$job/rw.list"
fi
# The kernel's own module tree, for anything the job modprobes later.
kv=$(uname -r)
[ -d "$R${ptlvm_mod:-/nonexistent}" ] || die "no module tree '${ptlvm_mod:-}'"
mkdir -p $R/lib/modules/$kv
mount --bind "$R$ptlvm_mod" $R/lib/modules/$kv
printf '#!/bin/sh\nexec chroot /root /sbin/modprobe "$@"\n' >/bin/host-modprobe
chmod 755 /bin/host-modprobe
echo /bin/host-modprobe >/proc/sys/kernel/modprobe
say "root ready"

# Soft-RoCE on the virtio NIC, which has no peer or another VM's NIC on a
# socket on the host's loopback: the addresses never leave the machine.
echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad
echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
ip link set lo up
ip link set eth0 up || die "no eth0"
ip addr add "${ptlvm_ip:-192.0.2.1/24}" dev eth0 || die "cannot give eth0 ${ptlvm_ip:-}"
chroot $R /usr/bin/rdma link add rxe0 type rxe netdev eth0 || die "rdma link add rxe0 failed"
n=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
	n=$((n + 1))
	[ $n -gt 100 ] && die "rxe0 port 1 never became ACTIVE"
	sleep 0.1
done
say "rxe0 active"

# The job, with our own descriptors on the serial lines, so that closing
# them last waits for every byte to leave.
exec 3>/dev/ttyS1 4>/dev/ttyS2
chroot $R /bin/bash "$job/job.sh" </dev/null >&3 2>&4
rc=$?
say "job rc $rc"
others() {
	for p in /proc/[0-9]*; do
		[ "$p" != /proc/1 ] && [ -e "$p/exe" ] && return 0
	done
	return 1
}
if others; then
	kill -TERM -1 2>/dev/null
	n=0
	while [ $n -lt 20 ] && others; do n=$((n + 1)); sleep 0.1; done
	kill -KILL -1 2>/dev/null
fi
stty -F /dev/ttyS1 raw -echo
stty -F /dev/ttyS2 raw -echo
exec 3>&- 4>&-
sync
echo "PTLVM_RC $rc" >/dev/ttyS3
off

#!/bin/sh
# Installs what building and testing ptl needs on Debian 12 (run as root).
# Quiet and quick when everything is already there.
set -e
PKGS="build-essential autoconf automake libtool pkg-config groff-base man-db
      libhwloc-dev hwloc libcmocka-dev valgrind
      mpich libmpich-dev libpmix-dev openmpi-bin libopenmpi-dev slurmctld slurmd slurm-client munge
      qemu-system-x86 busybox-static kmod iproute2 xz-utils
      ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
      rdma-core perftest elfutils"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "ptl: these Debian packages are missing:$missing" >&2
	echo "ptl: run this as root (or install them with apt-get) and try again" >&2
	exit 1
fi
echo "ptl: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null

# Sourced by the scripts that build outside programs from the sources
# Debian ships (scripts/mpich-suite.sh, bench/hpcc.sh).
#
# debian_source POOL FILE: prints the path of FILE (an upstream tarball in
# Debian's pool directory POOL, e.g. main/m/mpich), fetched once from
# deb.debian.org into PTL_SRC_CACHE (default ~/.cache/ptl) and kept there;
# says why and fails when it cannot be had.
debian_source() {
	ds_cache=${PTL_SRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ptl}
	mkdir -p "$ds_cache" || return 1
	if [ ! -s "$ds_cache/$2" ]; then
		echo "fetching $2 from Debian's archive" >&2
		curl -fsS -o "$ds_cache/$2.part" "http://deb.debian.org/debian/pool/$1/$2" &&
			mv "$ds_cache/$2.part" "$ds_cache/$2" || {
			echo "cannot fetch http://deb.debian.org/debian/pool/$1/$2" >&2
			rm -f "$ds_cache/$2.part"
			return 1
		}
	fi
	echo "$ds_cache/$2"
}

# Sourced by the scripts that build outside programs from the sources
# Debian ships (scripts/mpich-suite.sh, bench/hpcc.sh).
#
# debian_source POOL FILE SHA256: prints the path of FILE (an upstream
# tarball in Debian's pool directory POOL, e.g. main/m/mpich), fetched
# once over https from deb.debian.org into PTL_SRC_CACHE (default
# ~/.cache/ptl) and kept there, its SHA-256 checked each time (what is
# built, and run, is the source these scripts were written against); says
# why and fails when it cannot be had or does not match.
debian_source() {
	ds_cache=${PTL_SRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ptl}
	mkdir -p "$ds_cache" || return 1
	if [ ! -s "$ds_cache/$2" ]; then
		echo "fetching $2 from Debian's archive" >&2
		curl -fsS -o "$ds_cache/$2.part" "https://deb.debian.org/debian/pool/$1/$2" &&
			mv "$ds_cache/$2.part" "$ds_cache/$2" || {
			echo "cannot fetch https://deb.debian.org/debian/pool/$1/$2" >&2
			rm -f "$ds_cache/$2.part"
			return 1
		}
	fi
	ds_sum=$(sha256sum "$ds_cache/$2" | cut -d' ' -f1)
	if [ "$ds_sum" != "$3" ]; then
		echo "$ds_cache/$2: SHA-256 $ds_sum, not $3; removed (run again to fetch it anew)" >&2
		rm -f "$ds_cache/$2"
		return 1
	fi
	echo "$ds_cache/$2"
}

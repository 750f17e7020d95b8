#!/bin/sh
# build-busybox.sh DSC WORK FRAGMENT CC CROSS_COMPILE JOBS
# BusyBox from Debian's source package: unpacked with dpkg-source (Debian's patches applied)
# into WORK/src, configured out of tree in WORK/build: `make allnoconfig`, FRAGMENT merged over
# it (its symbols' lines replaced: BusyBox's kconfig keeps a symbol's first value and ignores
# KCONFIG_ALLCONFIG for allnoconfig), `make oldconfig` with the defaults for what FRAGMENT makes
# visible, and every "CONFIG_X=y" of FRAGMENT checked in the result; then built with CC
# (the musl compiler driver, i486-linux-musl-gcc) into WORK/build/busybox, with its applet list
# WORK/build/busybox.links. Output goes to WORK/build.log, whose end is printed on a failure.
set -eu
dsc=$1 work=$2 fragment=$3 cc=$4 cross=$5 jobs=$6
log=$work/build.log
rm -rf "$work/src" "$work/build"
mkdir -p "$work/build"
fail() {
  echo "build-busybox.sh: $1 failed; the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
}
dpkg-source -x "$dsc" "$work/src" > "$log" 2>&1 || fail "dpkg-source -x $dsc"
# BusyBox's banner carries the build's date: the package's own date instead (Debian's way to a
# reproducible build), so that the same sources give the same binary and the same initramfs.
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$work/src/debian/changelog" -STimestamp)
export SOURCE_DATE_EPOCH
# HOSTCC builds kconfig and the build's helpers for the host; CC is the guest's.
make -C "$work/src" O="$work/build" allnoconfig >> "$log" 2>&1 || fail "make allnoconfig"
config=$work/build/.config
sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=.*/\1/p; s/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$fragment" \
  | sed 's/.*/^(# )?&[= ]/' > "$work/fragment-symbols"
grep -v -E -f "$work/fragment-symbols" "$config" > "$config.merged" || true
cat "$fragment" >> "$config.merged"
mv "$config.merged" "$config"
yes "" | make -C "$work/build" oldconfig >> "$log" 2>&1 || fail "make oldconfig"
missing=$(grep '^CONFIG_[A-Z0-9_]*=y$' "$fragment" | while read -r line; do
  grep -qx "$line" "$config" || echo "${line%=y}"
done)
if [ -n "$missing" ]; then
  echo "build-busybox.sh: not set in the configuration (dependencies?):" $missing >&2
  exit 1
fi
make -C "$work/build" -j"$jobs" CROSS_COMPILE="$cross" CC="$cc" SKIP_STRIP=n \
  busybox busybox.links >> "$log" 2>&1 || fail "make busybox"

#!/bin/sh
# build-kernel.sh TARBALL HERE CONTRACT WORK CC CROSS JOBS OUT
# Linux for the traced i486 PC (docs/machines/i486-linux.md, "The kernel"): Debian's
# linux-source tarball unpacked into WORK/src, the CITCAT patches (HERE/patches/*.patch) applied,
# the new files of HERE/src copied in with the machine's contract (CONTRACT, as
# arch/x86/kernel/citcat_contract.h) and its state dump (state_dump.inc beside it, as
# citcat_state_dump.inc), configured out of tree in WORK/build from tinyconfig and the fragment
# HERE/citcat.config by the kernel's own merge_config.sh, then vmlinux built and copied to OUT. CC is the C compiler (with ccache when there is one), CROSS the binutils prefix.
# Everything starts afresh; output goes to WORK/build.log, whose end is printed on a failure.
# Run by the build (CMakeLists.txt), never at configure time.
set -eu
tarball=$1 here=$2 contract=$3 work=$4 cc=$5 cross=$6 jobs=$7 out=$8
log=$work/build.log
rm -rf "$work/src" "$work/build"
mkdir -p "$work/src" "$work/build"
fail() {
  echo "build-kernel.sh: $1 failed; the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
}
tar -xf "$tarball" -C "$work/src" --strip-components=1 > "$log" 2>&1 || fail "unpacking $tarball"
cd "$work/src"
for p in "$here"/patches/*.patch; do
  patch -p1 --no-backup-if-mismatch < "$p" >> "$log" 2>&1 || fail "applying $p"
done
cp -R "$here/src/." .
cp "$contract" arch/x86/kernel/citcat_contract.h
cp "$(dirname "$contract")/state_dump.inc" arch/x86/kernel/citcat_state_dump.inc
kmake() { make -C "$work/src" O="$work/build" ARCH=i386 CROSS_COMPILE="$cross" CC="$cc" "$@"; }
kmake tinyconfig >> "$log" 2>&1 || fail "make tinyconfig"
scripts/kconfig/merge_config.sh -m -O "$work/build" "$work/build/.config" "$here/citcat.config" \
  >> "$log" 2>&1 || fail "merge_config.sh"
kmake olddefconfig >> "$log" 2>&1 || fail "make olddefconfig"
# Every option the fragment sets must have survived olddefconfig (an unmet dependency drops an
# option silently), and none it turns off may be on.
grep -E '^CONFIG_[A-Z0-9_]+=' "$here/citcat.config" | while read -r line; do
  grep -qxF "$line" "$work/build/.config" ||
    { echo "build-kernel.sh: the configuration lost '$line' (a dependency unmet?)" >&2; exit 1; }
done
sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$here/citcat.config" | while read -r name; do
  ! grep -q "^$name=" "$work/build/.config" ||
    { echo "build-kernel.sh: the configuration has $name on, which the fragment turns off" >&2; exit 1; }
done
kmake -j"$jobs" vmlinux >> "$log" 2>&1 || fail "make vmlinux"
cp "$work/build/vmlinux" "$out.tmp"
mv "$out.tmp" "$out"

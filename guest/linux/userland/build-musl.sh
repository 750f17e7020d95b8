#!/bin/sh
# build-musl.sh DSC WORK PREFIX CC CFLAGS TOOLS JOBS
# musl from Debian's source package, for the i486: unpacked with dpkg-source (Debian's patches
# applied) into WORK/src, configured out of tree in WORK/build (static only), built and
# installed into PREFIX (include/, lib/ with crt1.o crti.o crtn.o libc.a). TOOLS is the binutils
# prefix ("/usr/bin/i686-linux-gnu-"). Everything starts afresh; output goes to WORK/build.log,
# whose end is printed on a failure. Run by the build (CMakeLists.txt), never at configure time.
set -eu
dsc=$1 work=$2 prefix=$3 cc=$4 cflags=$5 tools=$6 jobs=$7
log=$work/build.log
rm -rf "$work/src" "$work/build" "$prefix"
mkdir -p "$work/build"
fail() {
  echo "build-musl.sh: $1 failed; the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
}
dpkg-source -x "$dsc" "$work/src" > "$log" 2>&1 || fail "dpkg-source -x $dsc"
cd "$work/build"
"$work/src/configure" --target=i386-linux-musl --prefix="$prefix" --disable-shared \
  CC="$cc" CFLAGS="$cflags" >> "$log" 2>&1 || fail "configure"
make -j"$jobs" AR="${tools}ar" RANLIB="${tools}ranlib" >> "$log" 2>&1 || fail "make"
make install AR="${tools}ar" RANLIB="${tools}ranlib" >> "$log" 2>&1 || fail "make install"

#!/bin/sh
# Installs this build into a fresh prefix, builds tests/package/consumer against it with
# find_package(Citcat), captures and packs a program with the installed citcat (its SDK and
# guest software), and runs the consumer on the archive; builds a program with the installed
# SDK's CMake toolchain file, and runs it.
# usage: package_test.sh BUILD_DIR SOURCE_DIR SCRATCH_DIR
set -eu
build=$1 source=$2 scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
"$scratch/prefix/bin/citcat" --version
cmake -S "$source/tests/package/consumer" -B "$scratch/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$scratch/consumer" >/dev/null
cat >"$scratch/prog.c" <<'PROG'
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int main(void) {
  int v[200];
  for (int i = 0; i < 200; ++i) v[i] = (i * 7919) % 211;
  qsort(v, 200, sizeof v[0], cmp);
  printf("installed sdk: %d %d %.3f\n", v[0], v[199], v[100] / 3.0);
  return 0;
}
PROG
"$scratch/prefix/bin/citcat" capture --elf "$scratch/prog.c" -o "$scratch/prog.cat"
"$scratch/prefix/bin/citcat" extract --quiet "$scratch/prog.cat" -o "$scratch/x"
"$scratch/prefix/bin/citcat" pack --quiet "$scratch/x" -o "$scratch/prog.citcat"
"$scratch/consumer/consumer" "$scratch/prog.citcat"

mkdir -p "$scratch/user"
cp "$scratch/prog.c" "$scratch/user/prog.c"
cat >"$scratch/user/CMakeLists.txt" <<'PROJECT'
cmake_minimum_required(VERSION 3.25)
project(user_program C)
add_executable(prog prog.c)
PROJECT
cmake -S "$scratch/user" -B "$scratch/user/build" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$scratch/prefix/share/citcat/r4400/sdk/r4400-toolchain.cmake" >/dev/null
cmake --build "$scratch/user/build" >/dev/null
"$scratch/prefix/bin/citcat" capture --elf "$scratch/user/build/prog" -o "$scratch/user.cat" |
  sed 's/^installed sdk/toolchain file/'

# The i486: the installed citcat captures the same C with the installed i486 SDK, and verifies.
"$scratch/prefix/bin/citcat" capture --machine i486 --elf "$scratch/prog.c" -o "$scratch/i486.cat" |
  sed 's/^installed sdk/i486 sdk/'
"$scratch/prefix/bin/citcat" verify "$scratch/i486.cat" 2>&1 | sed 's/^citcat verify/i486 verify/'

# Linux, from the installed kernel, initramfs and disk (where the tree built them).
if [ -f "$scratch/prefix/share/citcat/linux/vmlinux" ]; then
  "$scratch/prefix/bin/citcat" capture --quiet --machine i486 --linux --workload ostest,disk \
    -o "$scratch/linux.cat"
  "$scratch/prefix/bin/citcat" verify "$scratch/linux.cat" 2>&1 | sed 's/^citcat verify/linux verify/'
fi

#!/bin/sh
# scripts/demo builds the target citcat alone (with --linux also the Linux kernel and userland),
# so that a new user sees the demo in minutes: among what citcat needs there must be no test, no
# benchmark, no guest SDK (newlib) and no part of the Linux guest.
# Usage: demo_build_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
source=$2
grep -q '^targets=(citcat)$' "$source/scripts/demo" &&
  grep -q '^scripts/build release "${targets\[@\]}"$' "$source/scripts/demo" || {
  echo "scripts/demo does not build the target citcat alone"
  exit 1
}
commands=$(ninja -C "$build" -t commands citcat)
extra=$(printf '%s\n' "$commands" | grep -E '/(tests|bench)/|newlib|sdk/runtime|sdk/example|guest/linux' | head -5 || true)
if [ -n "$extra" ]; then
  echo "the target citcat builds more than the demo runs:"
  printf '%s\n' "$extra"
  exit 1
fi
echo "the demo's build: $(printf '%s\n' "$commands" | wc -l) commands"

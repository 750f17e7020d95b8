#!/usr/bin/env bash
# scripts/slurm-replay on a real one-node Slurm cluster started here: munged with a key of its
# own, slurmctld and slurmd on localhost from a generated slurm.conf, everything in a temporary
# directory that is removed at the end. It captures a small i486 trace, has the cluster replay it
# segment by segment and join the pieces, and requires the joined trace and CAT to be those of a
# local `citcat replay` of the whole: a plain ChampSim trace byte for byte, a text trace in .xz
# by its decompressed bytes.
#   slurm_replay_test.sh CITCAT SOURCE_DIR
# It fails, naming the reason, when the cluster cannot run here; it never skips.
set -euo pipefail

citcat=$(realpath "${1:?usage: slurm_replay_test.sh CITCAT SOURCE_DIR}")
source_dir=$(realpath "${2:?usage: slurm_replay_test.sh CITCAT SOURCE_DIR}")
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

for tool in sbatch scontrol squeue scancel xz; do
  command -v "$tool" >/dev/null ||
    fail "$tool not found: install Slurm and munge with scripts/install-deps (slurm-wlm munge)"
done
# shellcheck source=../../scripts/lib/slurm-cluster.bash
source "$source_dir/scripts/lib/slurm-cluster.bash"

dir=$(mktemp -d /tmp/citcat-slurm.XXXXXX)
mkdir -p "$dir/work"
jobs=()
cleanup() {
  slurm_cluster_stop "${jobs[@]}"
  rm -rf "$dir"
}
trap cleanup EXIT
logs() {
  local f
  for f in "$dir"/log/* "$dir"/work/*/logs/*; do
    [ -f "$f" ] || continue
    echo "---- $f" >&2
    tail -n 25 "$f" >&2
  done
}

slurm_cluster_start "$dir" || { logs; fail "the one-node cluster did not start"; }

# A small i486 capture, packed, and the local replays of the whole to compare with.
w=$dir/work
"$citcat" capture --quiet --machine i486 --workload rep --instructions 1500000 -o "$w/c.cat" ||
  fail "capture"
"$citcat" extract --quiet "$w/c.cat" -o "$w/x" || fail "extract"
"$citcat" pack --quiet "$w/x" -o "$w/t.citcat" || fail "pack"
"$citcat" replay --quiet "$w/t.citcat" --format champsim -o "$w/whole.champsim" \
  --cat "$w/whole.cat" || fail "local replay"
"$citcat" replay --quiet "$w/t.citcat" --format text -o "$w/whole.txt" || fail "local replay"

# Three submissions: a plain ChampSim trace with the CAT, an xz-compressed text trace, and one
# whose second task fails (a citcat that refuses segment 2), so that its join never runs.
submit() {
  "$source_dir/scripts/slurm-replay" "$@" --partition citcat --time 5
}
failing=$dir/failing-citcat
printf '#!/bin/sh\ncase "$*" in *segment-0002.citcat*) echo "refused" >&2; exit 1 ;; esac\nexec %q "$@"\n' \
  "$citcat" >"$failing"
chmod +x "$failing"
out1=$(submit --citcat "$citcat" "$w/t.citcat" --segments 4 --format champsim \
  -o "$w/out/cluster.champsim" --cat "$w/out/cluster.cat" --workdir "$w/plain") ||
  { logs; fail "slurm-replay (plain)"; }
echo "$out1"
out2=$(submit --citcat "$citcat" "$w/t.citcat" --segments 3 --format text \
  -o "$w/out/cluster.txt.xz" --workdir "$w/xz" --keep-pieces) || { logs; fail "slurm-replay (xz)"; }
echo "$out2"
out3=$(submit --citcat "$failing" "$w/t.citcat" --segments 3 --format din -o "$w/out/failed.din" \
  --workdir "$w/failing") || { logs; fail "slurm-replay (a failing task)"; }
for out in "$out1" "$out2" "$out3"; do
  jobs+=("$(sed -n 's/^replay job: \([0-9]*\) .*/\1/p' <<<"$out")")
  jobs+=("$(sed -n 's/^join job: \([0-9]*\) .*/\1/p' <<<"$out")")
done
for j in "${jobs[@]}"; do [[ "$j" =~ ^[0-9]+$ ]] || fail "no job id in the output of slurm-replay"; done

# Waits for the join jobs to end as expected (their state from scontrol; no accounting), 45 s
# at most: the first two complete, the third is cancelled once its array job has failed.
job_state() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n 1 | cut -d= -f2; }
deadline=$((SECONDS + 45))
for expect in "${jobs[1]}:COMPLETED" "${jobs[3]}:COMPLETED" "${jobs[5]}:CANCELLED"; do
  j=${expect%:*} want=${expect#*:}
  while :; do
    s=$(job_state "$j")
    [ "$s" = "$want" ] && break
    case "$s" in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
        logs
        fail "join job $j ended $s, not $want (logs above)"
        ;;
    esac
    if [ "$SECONDS" -ge "$deadline" ]; then
      squeue >&2 || true
      logs
      fail "join job $j not $want after 45 s (state '$s')"
    fi
    sleep 0.5
  done
done
for j in "${jobs[0]}" "${jobs[2]}"; do
  # Every task of the array completed (the join ran after them: afterok).
  s=$(scontrol -o show job "$j" | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' ')
  [ "$s" = "JobState=COMPLETED " ] || fail "replay job $j: $s"
  echo "replay job $j: $(scontrol -o show job "$j" | wc -l) tasks completed"
done

cmp "$w/out/cluster.champsim" "$w/whole.champsim" || fail "the joined ChampSim trace differs"
cmp "$w/out/cluster.cat" "$w/whole.cat" || fail "the joined CAT differs"
xz -dc "$w/out/cluster.txt.xz" | cmp - "$w/whole.txt" || fail "the joined text trace differs"
[ ! -e "$w/plain/pieces" ] || fail "the pieces were not removed after the join"
pieces=$(ls "$w/xz/pieces" | wc -l)
[ "$pieces" -eq 3 ] || fail "--keep-pieces kept $pieces pieces, not 3"
[ ! -e "$w/out/failed.din" ] || fail "a join ran after a failed task"
grep -q refused "$w/failing/logs/replay-2.out" || fail "the failed task's log does not say why"
echo "failing task: join job ${jobs[5]} cancelled, no output"
echo "slurm replay: champsim trace identical ($(stat -c %s "$w/whole.champsim") bytes)," \
  "CAT identical ($(stat -c %s "$w/whole.cat") bytes)," \
  "xz text trace identical decompressed ($(stat -c %s "$w/whole.txt") bytes, 3 streams)"

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

for tool in munged munge slurmctld slurmd sbatch scontrol sinfo xz; do
  command -v "$tool" >/dev/null ||
    fail "$tool not found: install Slurm and munge with scripts/install-deps (slurm-wlm munge)"
done
[ "$(id -u)" -eq 0 ] ||
  fail "slurmd must run as root to start jobs (it switches to the submitting user); run as root"

dir=$(mktemp -d /tmp/citcat-slurm.XXXXXX)
# munged wants every directory above its socket searchable by all.
chmod 755 "$dir"
mkdir -p "$dir"/{munge,state,spool,log,work}
pids=() jobs=()
cleanup() {
  local pid
  # The jobs' processes (slurmstepd and its tasks) outlive slurmd: the jobs are cancelled and
  # left to end while the daemons still run.
  if [ -n "${SLURM_CONF:-}" ] && [ "${#jobs[@]}" -gt 0 ]; then
    scancel "${jobs[@]}" 2>/dev/null || true
    for _ in $(seq 50); do
      # slurmstepd keeps a socket in the spool directory while its step runs.
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && [ -z "$(find "$dir/spool" -type s)" ] && break
      sleep 0.2
    done
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
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

# munge: a fresh key, a socket in the directory.
head -c 1024 /dev/urandom >"$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
socket=$dir/munge/munge.socket
munged -F --key-file="$dir/munge/munge.key" --socket="$socket" --pid-file="$dir/munge/munged.pid" \
  --seed-file="$dir/munge/munged.seed" --log-file="$dir/log/munged.log" >"$dir/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
munge -S "$socket" -n </dev/null | unmunge -S "$socket" >/dev/null 2>&1 || {
  logs
  fail "munged did not start (no credential round trip through $socket)"
}

# Two free ports, picked at random so that clusters of two test runs do not meet.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ctld_port=0 slurmd_port=0
for _ in $(seq 100); do
  p=$((20000 + RANDOM % 40000))
  port_free "$p" && port_free $((p + 1)) && { ctld_port=$p slurmd_port=$((p + 1)); break; }
done
[ "$ctld_port" -ne 0 ] || fail "no two free ports on localhost"

# The node as slurmd sees it (CPUs, sockets, cores, memory), named as this host.
node=$(slurmd -C | head -n 1)
[[ "$node" == NodeName=* ]] || fail "slurmd -C did not describe this node: $node"
host=$(sed 's/^NodeName=\([^ ]*\).*/\1/' <<<"$node")
cat >"$dir/slurm.conf" <<EOF
ClusterName=citcattest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmdTimeout=30
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=citcat Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf

slurmctld -D -i >"$dir/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D >"$dir/log/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 100); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || {
  logs
  fail "the cluster did not come up (node state '${state}' after 20 s; logs above)"
}
echo "cluster: slurmctld on port $ctld_port, slurmd on $slurmd_port, node $(sinfo -h -o '%N %c CPUs %m MB')"

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

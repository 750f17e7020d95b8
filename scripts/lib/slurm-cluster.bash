# A one-node Slurm cluster on this host for trying scripts/slurm-replay without a cluster (the
# test of tests/slurm and bench/scale_figures use it): munged with a key of its own, slurmctld
# and slurmd on localhost on two free ports, from a generated slurm.conf, with one partition
# "citcat" holding the node. Everything lives in a directory the caller gives and removes. Needs
# root (slurmd starts jobs as the submitting user), munge and slurm-wlm (scripts/install-deps).
#   source scripts/lib/slurm-cluster.bash
#   slurm_cluster_start DIR || exit   # exports SLURM_CONF; the cluster is idle when it returns
#   ...sbatch, scripts/slurm-replay --partition citcat ...
#   slurm_cluster_stop [JOB...]       # cancels the jobs, waits for their steps, stops the daemons
# On failure slurm_cluster_start says why on standard error (the daemons' logs are in DIR/log).

slurm_cluster_pids=()

slurm_cluster_start() {
  local dir=$1 tool
  for tool in munged munge unmunge slurmctld slurmd sinfo; do
    command -v "$tool" >/dev/null || {
      echo "$tool not found: install Slurm and munge with scripts/install-deps (slurm-wlm munge)" >&2
      return 1
    }
  done
  [ "$(id -u)" -eq 0 ] || {
    echo "slurmd must run as root to start jobs (it switches to the submitting user); run as root" >&2
    return 1
  }
  slurm_cluster_dir=$dir
  # munged wants every directory above its socket searchable by all.
  chmod 755 "$dir"
  mkdir -p "$dir"/{munge,state,spool,log}
  # munge: a fresh key, a socket in the directory.
  head -c 1024 /dev/urandom >"$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  local socket=$dir/munge/munge.socket p node host state ctld_port slurmd_port
  munged -F --key-file="$dir/munge/munge.key" --socket="$socket" --pid-file="$dir/munge/munged.pid" \
    --seed-file="$dir/munge/munged.seed" --log-file="$dir/log/munged.log" >"$dir/log/munged.out" 2>&1 &
  slurm_cluster_pids+=($!)
  for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
  munge -S "$socket" -n </dev/null | unmunge -S "$socket" >/dev/null 2>&1 || {
    echo "munged did not start (no credential round trip through $socket)" >&2
    return 1
  }

  # Two free ports, picked at random so that clusters of two test runs do not meet.
  port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
  ctld_port=0 slurmd_port=0
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 40000))
    port_free "$p" && port_free $((p + 1)) && { ctld_port=$p slurmd_port=$((p + 1)); break; }
  done
  [ "$ctld_port" -ne 0 ] || { echo "no two free ports on localhost" >&2; return 1; }

  # The node as slurmd sees it (CPUs, sockets, cores, memory), named as this host.
  node=$(slurmd -C | head -n 1)
  [[ "$node" == NodeName=* ]] || { echo "slurmd -C did not describe this node: $node" >&2; return 1; }
  host=$(sed 's/^NodeName=\([^ ]*\).*/\1/' <<<"$node")
  cat >"$dir/slurm.conf" <<EOF
ClusterName=citcat
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
  slurm_cluster_pids+=($!)
  slurmd -D >"$dir/log/slurmd.out" 2>&1 &
  slurm_cluster_pids+=($!)
  state=""
  for _ in $(seq 100); do
    state=$(sinfo -h -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.2
  done
  [ "$state" = idle ] || {
    echo "the cluster did not come up (node state '${state}' after 20 s; logs in $dir/log)" >&2
    return 1
  }
  echo "cluster: slurmctld on port $ctld_port, slurmd on $slurmd_port, node $(sinfo -h -o '%N %c CPUs %m MB')"
}

slurm_cluster_stop() {
  local pid
  # The jobs' processes (slurmstepd and its tasks) outlive slurmd: the jobs are cancelled and
  # left to end while the daemons still run.
  if [ -n "${SLURM_CONF:-}" ] && [ $# -gt 0 ]; then
    scancel "$@" 2>/dev/null || true
    for _ in $(seq 50); do
      # slurmstepd keeps a socket in the spool directory while its step runs.
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] &&
        [ -z "$(find "$slurm_cluster_dir/spool" -type s 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  for pid in "${slurm_cluster_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${slurm_cluster_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  slurm_cluster_pids=()
}

#!/usr/bin/env bash
# Real-Slurm test of sharded sweeps: installs Debian's slurm-wlm and munge if missing,
# starts a single-node cluster on localhost (munged, slurmctld, slurmd; proctrack/linuxproc
# and task/none, so no cgroups), submits a 4-task job array that sweeps a small experiment
# file (each task picks its shard from SLURM_ARRAY_TASK_ID/COUNT), waits, merges the shard
# databases, and checks that the merge equals a single-machine sweep row for row.
# Needs root (apt-get, daemons). Stops the daemons it started on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)
WORK=${SLURM_TEST_DIR:-$(mktemp -d /tmp/tokendist-slurm.XXXXXX)}
mkdir -p "$WORK"/{spool/ctld,spool/d,log,run,out}
echo "slurm-test: working in $WORK"

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm-test: installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq slurm-wlm munge >/dev/null
fi

# The command and the experiment.
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
go build -o "$WORK/tokendist" ./cmd/tokendist
FILE="$REPO/experiments/slurm-test.yaml"

# munge: a key of its own, a socket of its own.
MUNGE_SOCK="$WORK/run/munge.socket"
dd if=/dev/urandom bs=1 count=1024 of="$WORK/munge.key" status=none
chmod 400 "$WORK/munge.key"
if [ "$(id -u)" = 0 ]; then chown root:root "$WORK/munge.key"; fi

PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for f in "$WORK/run/slurmd.pid" "$WORK/run/slurmctld.pid" "$WORK/run/munged.pid"; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
  done
}
trap cleanup EXIT

munged --force --key-file="$WORK/munge.key" --socket="$MUNGE_SOCK" \
  --pid-file="$WORK/run/munged.pid" --log-file="$WORK/log/munged.log" --seed-file="$WORK/run/munge.seed"

NODE=localhost
CPUS=$(nproc)
PORT=${SLURM_TEST_PORT:-16817}
cat > "$WORK/slurm.conf" <<CONF
ClusterName=tokendist-test
SlurmctldHost=$NODE
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SwitchType=switch/none
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$WORK/spool/ctld
SlurmdSpoolDir=$WORK/spool/d
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$WORK/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ReturnToService=2
PlugStackConfig=/dev/null
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$WORK/slurm.conf"

slurmctld -f "$SLURM_CONF" -i
slurmd -f "$SLURM_CONF" -N "$NODE"

echo "slurm-test: waiting for the node"
for i in $(seq 1 60); do
  state=$(sinfo -h -N -o '%t' 2>/dev/null | head -1 || true)
  case "$state" in idle*|mix*|alloc*) break ;; esac
  sleep 1
done
sinfo
case "$state" in idle*|mix*|alloc*) ;; *) echo "slurm-test: node not up (state '$state')"; tail -n 30 "$WORK"/log/*.log; exit 1 ;; esac

# The job script of docs/cluster.md, with this repository's binary and file.
cat > "$WORK/sweep.sbatch" <<JOB
#!/bin/bash
#SBATCH --job-name=tokendist-sweep
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --output=$WORK/out/sweep-%A_%a.out
# Each array task sweeps its shard (from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT)
# into its own database; {i} and {n} become the shard index and count.
exec "$WORK/tokendist" sweep --progress lines --db "$WORK/out/shard-{i}-of-{n}.db" "$FILE"
JOB

echo "slurm-test: sbatch --array=0-3"
sbatch --wait "$WORK/sweep.sbatch"
ls "$WORK/out"
for f in "$WORK"/out/*.out; do echo "-- $f"; cat "$f"; done

"$WORK/tokendist" merge --into "$WORK/merged.db" "$WORK"/out/shard-*-of-4.db
# Merging again changes nothing.
"$WORK/tokendist" merge --into "$WORK/merged.db" "$WORK"/out/shard-*-of-4.db
"$WORK/tokendist" sweep --progress none --db "$WORK/single.db" "$FILE"

"$WORK/tokendist" report --db "$WORK/merged.db" --format csv --no-timing > "$WORK/merged.csv"
"$WORK/tokendist" report --db "$WORK/single.db" --format csv --no-timing > "$WORK/single.csv"
rows=$(($(wc -l < "$WORK/single.csv") - 1))
if ! diff "$WORK/merged.csv" "$WORK/single.csv"; then
  echo "slurm-test: FAIL: the merged shards differ from the single-machine sweep"
  exit 1
fi
shards=$(ls "$WORK"/out/shard-*-of-4.db | wc -l)
[ "$shards" = 4 ] || { echo "slurm-test: FAIL: $shards shard databases, want 4"; exit 1; }
echo "slurm-test: PASS: 4 array tasks, merged $rows runs equal to the single-machine sweep row for row"

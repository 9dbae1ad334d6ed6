#!/usr/bin/env bash
# A throwaway one-node Slurm for the tests: its own munged, slurmctld and slurmd, all
# configured inside one folder, listening on 127.0.0.1 only. /etc/slurm, /etc/munge and
# any Slurm or munged already running are left alone (own key, own socket, own ports).
#
#   slurm_cluster.sh check            can one start here? exit 0; else the reason on stderr
#                                     and exit 77 (skip), or 1 under CI=true
#   slurm_cluster.sh start DIR        write DIR/slurm.conf, start the daemons, wait until the
#                                     node is idle (30 s at most); then: export SLURM_CONF=DIR/slurm.conf
#   slurm_cluster.sh stop DIR         cancel the jobs, stop what start started (by pid files)
#   slurm_cluster.sh wait JOB SECS    wait until every task of JOB has ended; exit 0 when all
#                                     COMPLETED, 1 on failure or when SECS pass
#   slurm_cluster.sh logs DIR         print the tails of the daemons' logs
#
# Needs root: slurmd starts job steps as the submitting user and the config says
# SlurmUser=root. A test uses it as:
#   slurm_cluster.sh check || exit $?
#   trap 'slurm_cluster.sh stop "$dir"' EXIT
#   slurm_cluster.sh start "$dir" && export SLURM_CONF=$dir/slurm.conf
set -euo pipefail

die() { echo "slurm_cluster: $*" >&2; exit 1; }

cmd_check() {
  local reason=""
  if [[ $(id -u) -ne 0 ]]; then
    reason="not root (slurmd and a SlurmUser=root cluster need it)"
  else
    local tool missing=()
    for tool in munged munge slurmctld slurmd sbatch srun scontrol sinfo squeue scancel; do
      command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] || missing+=("$tool")
    done
    [[ ${#missing[@]} -eq 0 ]] ||
      reason="missing ${missing[*]} (Debian: apt-get install slurm-wlm munge, as scripts/install-deps.sh does)"
  fi
  [[ -z "$reason" ]] && return 0
  if [[ "${CI:-}" == "true" ]]; then
    echo "slurm_cluster: cannot start Slurm: $reason; CI=true, so this fails" >&2
    exit 1
  fi
  echo "slurm_cluster: SKIP: cannot start Slurm: $reason" >&2
  exit 77
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pick_ports() {  # two free consecutive ports for slurmctld and slurmd
  # Below the kernel's ephemeral range (ip_local_port_range, 32768-60999 here): a port
  # there can be the local end of some outgoing connection, which a connect() probe does
  # not see but which makes slurmctld's bind fail with "Address already in use".
  local base low
  low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  for _ in $(seq 1 50); do
    base=$((10000 + (RANDOM % ((low - 10002) / 2)) * 2))
    port_free "$base" && port_free $((base + 1)) && { echo "$base"; return 0; }
  done
  die "no free port pair found"
}

write_config() {  # dir
  local dir=$1 host base
  host=$(hostname -s)
  base=$(pick_ports)
  cat > "$dir/slurm.conf" <<EOF
# Written by tests/slurm/slurm_cluster.sh for one test run; removed with its folder.
ClusterName=fleetsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge-run/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
KillWait=2
# Schedule within a second or two of a submission or a finished dependency (defaults: 60/30 s).
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  # Read only when a cgroup plugin is configured (none is); present so none is looked for in /etc.
  echo "CgroupPlugin=autodetect" > "$dir/cgroup.conf"
}

cmd_start() {
  local dir=${1:?start DIR}
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [[ ${#dir} -lt 80 ]] || die "$dir is too long for a munge socket path; use a short folder"
  # munged checks its socket folder: it and every parent must be searchable by all.
  chmod 755 "$dir"
  local parent=$dir
  while [[ "$parent" != / ]]; do
    parent=$(dirname "$parent")
    [[ $(( 0$(stat -c %a "$parent") & 1 )) -eq 1 ]] ||
      die "munged needs every parent of $dir searchable by all; $parent is not (chmod o+x it)"
  done
  mkdir -p "$dir/state" "$dir/spool" "$dir/run" "$dir/log"
  mkdir -p "$dir/munge" "$dir/munge-run"
  chmod 700 "$dir/munge"
  chmod 755 "$dir/munge-run"
  write_config "$dir"

  # munge: a fresh key of 1024 random bytes, readable by root (munged runs as root here).
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  local munged slurmctld slurmd
  munged=$(command -v munged || echo /usr/sbin/munged)
  slurmctld=$(command -v slurmctld || echo /usr/sbin/slurmctld)
  slurmd=$(command -v slurmd || echo /usr/sbin/slurmd)
  "$munged" --socket="$dir/munge-run/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" ||
    { cmd_logs "$dir" >&2; die "munged did not start"; }
  munge -S "$dir/munge-run/munge.socket" -n | unmunge -S "$dir/munge-run/munge.socket" >/dev/null ||
    { cmd_logs "$dir" >&2; die "munged started but a credential does not round-trip"; }

  export SLURM_CONF=$dir/slurm.conf
  # -i: ignore (absent) state files; both fork into the background once ready to serve.
  timeout 30 "$slurmctld" -f "$dir/slurm.conf" -i ||
    { cmd_logs "$dir" >&2; die "slurmctld did not start"; }
  timeout 30 "$slurmd" -f "$dir/slurm.conf" ||
    { cmd_logs "$dir" >&2; die "slurmd did not start"; }

  local state="" deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    state=$(timeout 10 sinfo -h -N -o '%T' 2>/dev/null | head -1 || true)
    [[ "$state" == "idle" ]] && break
    sleep 0.5
  done
  if [[ "$state" != "idle" ]]; then
    cmd_logs "$dir" >&2
    die "the node is '${state:-unknown}', not idle, 30 s after start"
  fi
  echo "slurm_cluster: up in $dir (node $(hostname -s), $(nproc) CPUs, slurmctld port $(sed -n 's/^SlurmctldPort=//p' "$dir/slurm.conf"))"
}

stop_pid_file() {  # pid file, name: TERM, wait up to 10 s, then KILL
  local file=$1 name=$2 pid
  [[ -s "$file" ]] || return 0
  pid=$(<"$file")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  echo "slurm_cluster: $name ($pid) ignored TERM for 10 s; killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
}

cmd_stop() {
  local dir=${1:?stop DIR}
  [[ -d "$dir" ]] || return 0
  dir=$(cd "$dir" && pwd)
  export SLURM_CONF=$dir/slurm.conf
  if [[ -s "$dir/run/slurmctld.pid" ]] && kill -0 "$(<"$dir/run/slurmctld.pid")" 2>/dev/null; then
    # End the jobs first so that no job step outlives the daemons (10 s at most).
    timeout 10 scancel --quiet --user=root 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while ((SECONDS < deadline)); do
      [[ -z "$(timeout 5 squeue -h -t running,completing -o %i 2>/dev/null || echo busy)" ]] && break
      sleep 0.5
    done
  fi
  stop_pid_file "$dir/run/slurmd.pid" slurmd
  stop_pid_file "$dir/run/slurmctld.pid" slurmctld
  stop_pid_file "$dir/run/munged.pid" munged
}

cmd_logs() {
  local dir=${1:?logs DIR} f
  for f in "$dir"/log/*.log; do
    [[ -f "$f" ]] || continue
    echo "---- $f (last 20 lines)"
    tail -n 20 "$f"
  done
}

cmd_wait() {  # job id, seconds
  local job=${1:?wait JOB SECS} secs=${2:?wait JOB SECS}
  local deadline=$((SECONDS + secs)) info states
  while :; do
    info=$(timeout 10 scontrol -o show job "$job" 2>&1) || {
      echo "slurm_cluster: scontrol show job $job failed: $info" >&2
      return 1
    }
    states=$(grep -o 'JobState=[A-Z_]*' <<<"$info" | sort | uniq -c | tr -s ' \n' ' ')
    if grep -q 'Reason=DependencyNeverSatisfied' <<<"$info"; then
      echo "slurm_cluster: job $job can never run: a job it depends on failed" >&2
      return 1
    fi
    if ! grep -qE 'JobState=(PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUED|RESIZING|SUSPENDED)' <<<"$info"; then
      if grep -qvE 'JobState=COMPLETED' <<<"$info"; then
        echo "slurm_cluster: job $job ended:$states" >&2
        grep -vE 'JobState=COMPLETED' <<<"$info" | grep -oE 'JobId=[0-9]+|ArrayTaskId=[0-9]+|JobState=[A-Z_]+|Reason=[^ ]+|ExitCode=[0-9:]+' | paste -sd' ' >&2
        return 1
      fi
      return 0
    fi
    if ((SECONDS >= deadline)); then
      echo "slurm_cluster: job $job still not done after $secs s:$states" >&2
      return 1
    fi
    sleep 0.5
  done
}

case "${1:-}" in
  check) cmd_check ;;
  start) cmd_start "${2:-}" ;;
  stop) cmd_stop "${2:-}" ;;
  wait) cmd_wait "${2:-}" "${3:-}" ;;
  logs) cmd_logs "${2:-}" ;;
  *) echo "usage: $0 check | start DIR | stop DIR | wait JOB SECS | logs DIR" >&2; exit 2 ;;
esac

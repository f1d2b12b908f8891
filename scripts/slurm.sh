#!/usr/bin/env bash
# A private single-node Slurm cluster on this machine, for the tests of `cropzoom batch` on Slurm job arrays.
#
#   eval "$(bash scripts/slurm.sh start)"   # installs what is missing, starts it, prints `export SLURM_CONF=...`
#   bash scripts/slurm.sh status            # sinfo/squeue of the private cluster; exit 0 when up, 1 when not
#   bash scripts/slurm.sh stop              # cancels its jobs, stops its slurmctld and slurmd (munged stays)
#
# start installs slurmctld, slurmd, slurm-client and munge with apt-get when missing (services are not started
# by the packages: a policy-rc.d that answers 101 is put in place for the install when there is none), makes a
# munge key when there is none and starts munged (machine-wide, as the munge user) unless one answers. Then it
# writes a slurm.conf of its own in the state folder ($CROPZOOM_SLURM_DIR, default /tmp/cropzoom-slurm; /etc/slurm
# is never read nor written), starts slurmctld and slurmd on it and waits until the node is idle. Only the export
# line goes to stdout, everything else to stderr. Idempotent: when this folder's daemons already answer, it only
# prints the line. Job ids go on across stop/start (the state is kept; stop cancels the jobs first). Another state
# folder running at the same time needs other ports: CROPZOOM_SLURMCTLD_PORT, CROPZOOM_SLURMD_PORT.
#
# The slurm.conf keys that are not obvious:
#   SlurmctldPort/SlurmdPort  16817/16818, not 6817/6818: a real Slurm on the machine is left alone.
#   SlurmUser/SlurmdUser      root: the tests run as root, no slurm user or spool permissions to set up.
#   ProctrackType             proctrack/linuxproc: a container has no usable cgroups (with proctrack/cgroup,
#                             slurmstepd fails on "cgroup namespace 'freezer' not mounted": the job is marked
#                             COMPLETED without having run, the node drains). linuxproc follows the job's processes
#                             through /proc's parent links: a process whose parent died (reparented to init)
#                             escapes it and is not killed at the job's end.
#   TaskPlugin                task/none: no cgroup or affinity confinement either, so a task sees every CPU in
#                             `nproc`/`taskset`; SLURM_CPUS_ON_NODE says what it was allotted.
#   SelectTypeParameters      CR_CPU: each array task gets 1 CPU (not a whole core, which would be 2 CPUs on a
#                             hyperthreaded host), so as many tasks run at once as there are CPUs.
#   SlurmdParameters          config_overrides: the node line is believed even where the hardware slurmd finds
#                             differs (socket/core layout), instead of draining the node.
#   RealMemory                a bit below MemTotal: a node that reports less than its configured memory drains.
#   RequeueExit=75            cropzoom's shards exit with 75 (EX_TEMPFAIL) on SIGTERM, after saving where they
#                             were; Slurm then requeues the task, which resumes (SLURM_RESTART_COUNT goes up).
#   AuthInfo=cred_expire=10   a requeued job waits cred_expire + 1 s before it may start again (120 by default).
#   JobCompType               jobcomp/filetxt: one line per ended run in jobcomp.log (a run that exited 75 and
#                             was requeued: JobState=FAILED ExitCode=75:0), there being no accounting database
#                             (sacct does not work).
#   MinJobAge                 an ended job stays known to scontrol (and `squeue -t all`) for MinJobAge seconds, up
#                             to a minute more (the purge is periodic); then "Invalid job id specified", exit 1.
#   KillWait                  seconds between SIGTERM and SIGKILL when a job is cancelled or times out.
#   SchedulerParameters       sched_interval/bf_interval of 1 s (60/30 by default): pending jobs start within a
#                             second of a CPU coming free.
#   ReturnToService=2         the node comes back by itself after it was down (e.g. after a restart).
#   MailProg=/bin/true        no mail program in containers; keeps slurmctld's log quiet about it.
# The daemons' logs (in the state folder) begin with "mpi/pmix_v4: can not load PMIx library" errors: harmless, the
# MPI plugins are all loaded at start even with MpiDefault=none.
set -euo pipefail

DIR=${CROPZOOM_SLURM_DIR:-/tmp/cropzoom-slurm}
CONF=$DIR/slurm.conf
CTLD_PORT=${CROPZOOM_SLURMCTLD_PORT:-16817}
SLURMD_PORT=${CROPZOOM_SLURMD_PORT:-16818}
export SLURM_CONF=$CONF

log() { echo "slurm.sh: $*" >&2; }
die() {
    log "$*"
    exit 1
}

if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "needs root (slurmd runs jobs as root)"
    exec sudo --preserve-env=CROPZOOM_SLURM_DIR,CROPZOOM_SLURMCTLD_PORT,CROPZOOM_SLURMD_PORT bash "$0" "$@"
fi

install_packages() {
    local need=()
    command -v slurmctld >/dev/null 2>&1 || need+=(slurmctld)
    command -v slurmd >/dev/null 2>&1 || need+=(slurmd)
    { command -v sinfo && command -v sbatch; } >/dev/null 2>&1 || need+=(slurm-client)
    { command -v munged && command -v unmunge; } >/dev/null 2>&1 || need+=(munge)
    ((${#need[@]})) || return 0
    log "installing ${need[*]}"
    # No init system here: the packages' postinst must not try to start the daemons (invoke-rc.d asks policy-rc.d).
    local policy=/usr/sbin/policy-rc.d made_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        made_policy=1
    fi
    local rc=0
    export DEBIAN_FRONTEND=noninteractive
    {
        apt-get install -y -qq --no-install-recommends "${need[@]}" </dev/null >&2 \
            || { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${need[@]}" </dev/null >&2; }
    } || rc=$?
    ((made_policy)) && rm -f "$policy"
    ((rc == 0)) || die "apt-get install ${need[*]} failed"
}

munge_answers() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
    local key=/etc/munge/munge.key
    if [ ! -s "$key" ]; then
        log "creating $key"
        mkdir -p /etc/munge
        mungekey --create --keyfile="$key" 2>/dev/null || dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
    fi
    chown munge:munge /etc/munge "$key"
    chmod 0700 /etc/munge
    chmod 0400 "$key"
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    chown munge:munge /run/munge /var/lib/munge /var/log/munge
    chmod 0755 /run/munge
    munge_answers && return 0
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 50); do
        munge_answers && return 0
        sleep 0.2
    done
    tail -n 20 /var/log/munge/munged.log >&2 2>/dev/null || true
    die "munged does not answer"
}

# The pid of this folder's daemon $1 (slurmctld or slurmd) when it runs, from its pid file; a pid that was reused
# by another process (one not started on this CONF) does not count.
daemon_pid() {
    local file=$DIR/$1.pid pid
    [ -s "$file" ] || return 1
    pid=$(<"$file")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$1 .*-f $CONF" || return 1
    echo "$pid"
}

# The node's state as sinfo gives it (idle, mixed, allocated, down*, ...), empty when slurmctld does not answer.
node_state() { timeout 10 sinfo -h -N -n localhost -o %T 2>/dev/null | head -n 1 || true; }

cluster_up() {
    daemon_pid slurmctld >/dev/null || return 1
    daemon_pid slurmd >/dev/null || return 1
    node_ready "$(node_state)"
}

# Whether the node takes jobs: a trailing * (not responding: slurmd has not registered yet), drain or down do not.
node_ready() { [[ $1 =~ ^(idle|mixed|allocated|completing)$ ]]; }

write_conf() {
    local cpus mem_kib mem
    cpus=$(nproc)
    mem_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
    mem=$((mem_kib / 1024 * 95 / 100))
    mkdir -p "$DIR/state" "$DIR/spool"
    cat >"$CONF.new" <<EOF
# Written by scripts/slurm.sh (see there why each key is set); rewritten at each start.
ClusterName=cropzoom
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=cred_expire=10
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/jobcomp.log
RequeueExit=75
ReturnToService=2
MinJobAge=60
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=10
MailProg=/bin/true
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    mv "$CONF.new" "$CONF"
}

log_tails() {
    local f
    for f in "$DIR/slurmctld.log" "$DIR/slurmd.log"; do
        [ -f "$f" ] && { echo "--- $f" && tail -n 25 "$f"; } >&2
    done
    return 0
}

start() {
    if cluster_up; then
        echo "export SLURM_CONF=$CONF"
        return 0
    fi
    install_packages
    start_munge
    # The node's state comes back from the saved state before slurmd registers; a registration is seen in the
    # node's SlurmdStartTime, which must then be no older than the slurmd started here.
    local since=0
    if ! daemon_pid slurmctld >/dev/null || ! daemon_pid slurmd >/dev/null; then
        stop_daemons # a half-running pair: start both again on a fresh slurm.conf
        write_conf
        log "starting slurmctld and slurmd ($CONF)"
        since=$(($(date +%s) - 1))
        slurmctld -f "$CONF" || { log_tails && die "slurmctld did not start"; }
        slurmd -f "$CONF" -N localhost || { log_tails && die "slurmd did not start"; }
    fi
    local state="" started resumed=0
    for _ in $(seq 60); do
        started=$(timeout 10 scontrol -o show node localhost 2>/dev/null | grep -o 'SlurmdStartTime=[^ ]*' || true)
        started=$(date -d "${started#SlurmdStartTime=}" +%s 2>/dev/null || echo 0)
        if ((started >= since)); then
            state=$(node_state)
            node_ready "$state" && {
                echo "export SLURM_CONF=$CONF"
                return 0
            }
            # Left drained or down by an earlier run (e.g. a job that could not start): slurmd is back, resume it.
            if ((!resumed)) && [[ $state == down* || $state == drain* ]]; then
                log "node is $state, resuming it"
                scontrol update NodeName=localhost State=RESUME >/dev/null 2>&1 || true
                resumed=1
            fi
        fi
        sleep 0.5
    done
    log_tails
    die "the node is not idle after 30 s (state: ${state:-no answer})"
}

# Stops this folder's daemon $1 by its pid file and waits until it has ended.
stop_daemon() {
    local pid
    pid=$(daemon_pid "$1") || {
        rm -f "$DIR/$1.pid"
        return 0
    }
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "$1 ($pid) did not end on SIGTERM, killing it"
        kill -KILL "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
    rm -f "$DIR/$1.pid"
}

stop_daemons() {
    stop_daemon slurmd
    stop_daemon slurmctld
}

stop() {
    if daemon_pid slurmctld >/dev/null; then
        # Cancel this cluster's jobs, so that none start again at the next start (the state is kept).
        local jobs
        jobs=$(timeout 10 squeue -h -o %F 2>/dev/null | sort -u | tr '\n' ' ') || true
        if [ -n "${jobs// /}" ]; then
            # shellcheck disable=SC2086 # a list of job ids
            scancel $jobs 2>/dev/null || true
            for _ in $(seq 40); do
                [ -z "$(timeout 10 squeue -h -o %i 2>/dev/null)" ] && break
                sleep 0.5
            done
        fi
    fi
    stop_daemons
    log "stopped ($DIR)"
}

status() {
    if ! daemon_pid slurmctld >/dev/null; then
        echo "slurmctld of $DIR is not running"
        return 1
    fi
    daemon_pid slurmd >/dev/null || echo "slurmd of $DIR is not running"
    timeout 10 sinfo || true
    timeout 10 squeue || true
    cluster_up
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
*) die "usage: $0 start|stop|status" ;;
esac

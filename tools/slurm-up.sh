#!/usr/bin/env bash
# Starts a single-node SLURM cluster on this machine (Debian 12 packages, as root, no systemd):
# munged, slurmctld and slurmd in the background, one node named after `hostname -s`, one
# partition `debug`, MpiDefault=pmix, no cgroups. Used by tests/e2e/test_slurm.sh; also handy to
# try slurm/tally-run.sbatch locally.
#
#   bash tools/install-deps.sh && bash tools/slurm-up.sh
#   export SLURM_CONF=...   # the path it prints on its last line (/etc/slurm/slurm.conf usually)
#
# Idempotent: daemons already running with the same configuration are reused; a changed
# configuration restarts them. Installs nothing. Exit 0 when `sinfo` shows the node idle;
# exit 77 with a one-line reason when a cluster cannot run here (packages missing, not root,
# a daemon refuses to start).
# State, spool and logs live under $TALLY_SLURM_DIR (default /var/spool/slurm-tally). The
# configuration goes to /etc/slurm/slurm.conf when that file is absent or was written by this
# script, else to $TALLY_SLURM_DIR/etc/slurm.conf (export SLURM_CONF to use it).
set -euo pipefail

MARK="# written by tally tools/slurm-up.sh"
DIR="${TALLY_SLURM_DIR:-/var/spool/slurm-tally}"
LOG="$DIR/log"
skip() { echo "slurm-up: cannot run SLURM here: $*" >&2; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root (daemons run as root here)"
for b in munged munge unmunge slurmctld slurmd sinfo scontrol srun sbatch; do
  command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] ||
    skip "'$b' not found (run tools/install-deps.sh: slurmctld slurmd slurm-client munge)"
done
export PATH="$PATH:/usr/sbin:/sbin"
PLUGDIR=/usr/lib/x86_64-linux-gnu/slurm-wlm
[ -e "$PLUGDIR/mpi_pmix.so" ] || PLUGDIR="$(dirname "$(find /usr/lib -name mpi_pmix.so -path '*slurm*' 2>/dev/null | head -n1)")"
[ -e "$PLUGDIR/mpi_pmix.so" ] || skip "SLURM's PMIx plugin (mpi_pmix.so, in slurm-wlm-basic-plugins) not found"

# --- configuration -------------------------------------------------------------------------
if [ ! -e /etc/slurm/slurm.conf ] || head -n1 /etc/slurm/slurm.conf | grep -qxF "$MARK"; then
  CONF=/etc/slurm/slurm.conf
else
  CONF="$DIR/etc/slurm.conf"
fi
CONFDIR="$(dirname "$CONF")"
mkdir -p "$DIR"
exec 9>"$DIR/lock"; flock -w 60 9 || skip "another slurm-up.sh holds $DIR/lock"   # one at a time
mkdir -p "$CONFDIR" "$DIR/ctld" "$DIR/d" "$DIR/run" "$LOG" "$DIR/tmp"
chmod 1777 "$DIR/tmp"

NODE="$(hostname -s)"
CPUS="$(nproc)"
# Never less than 4 CPUs, so slurm/tally-run.sbatch (--ntasks=4) runs as written on a small
# machine; SlurmdParameters=config_overrides makes slurmd accept the configured numbers. Ranks
# then share cores: export OMPI_MCA_mpi_yield_when_idle=1, or busy polling makes them ~30x slower.
[ "$CPUS" -ge 4 ] || CPUS=4
MEM_MB=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 / 2 ))
[ "$MEM_MB" -ge 500 ] || MEM_MB=500

new="$(mktemp)"
trap 'rm -f "$new" "$new.cg"' EXIT
cat > "$new" <<EOF
$MARK
ClusterName=tally
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
MailProg=/bin/true
KillWait=5
MinJobAge=60
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/d
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$DIR/tmp
PluginDir=$PLUGDIR
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
cat > "$new.cg" <<EOF
$MARK
# No cgroup plugin is configured (proctrack/linuxproc, task/none); this file only stops the
# daemons from looking for a system one.
CgroupAutomount=no
EOF

changed=0
if ! cmp -s "$new" "$CONF"; then cp "$new" "$CONF"; chmod 644 "$CONF"; changed=1; fi
if [ ! -e "$CONFDIR/cgroup.conf" ] || head -n1 "$CONFDIR/cgroup.conf" | grep -qxF "$MARK"; then
  cmp -s "$new.cg" "$CONFDIR/cgroup.conf" || { cp "$new.cg" "$CONFDIR/cgroup.conf"; chmod 644 "$CONFDIR/cgroup.conf"; }
fi
export SLURM_CONF="$CONF"

# --- daemons -------------------------------------------------------------------------------
alive() {  # alive PIDFILE NAME: the process in PIDFILE is running and is NAME
  local pid
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q "$2" "/proc/$pid/comm" 2>/dev/null &&
    [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]   # killed, not yet reaped by PID 1
}
stop() {  # stop PIDFILE NAME
  local pid
  alive "$1" "$2" || return 0
  pid="$(cat "$1")"; kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}
# Starts a daemon in the foreground (no double fork, hence no zombie left to a PID 1 that does
# not reap) in its own session, with no inherited descriptors so that callers such as ctest do
# not wait for it. launch NAME CMD...: stdout/stderr go to $LOG/NAME.stderr.
launch() { local name="$1"; shift; setsid "$@" </dev/null >"$LOG/$name.stderr" 2>&1 9>&- & }

# munge: Debian's postinst creates the key; make one if it is missing.
MUNGE_KEY=/etc/munge/munge.key
if [ ! -s "$MUNGE_KEY" ]; then
  mkdir -p /etc/munge
  if command -v mungekey >/dev/null 2>&1; then mungekey -c -k "$MUNGE_KEY" >/dev/null 2>&1 || true; fi
  [ -s "$MUNGE_KEY" ] || dd if=/dev/urandom of="$MUNGE_KEY" bs=1 count=1024 2>/dev/null
  chown munge:munge "$MUNGE_KEY" 2>/dev/null || true
  chmod 400 "$MUNGE_KEY"
fi
mkdir -p /run/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge /etc/munge 2>/dev/null || true
chmod 755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  old_pid="$(cat /run/munge/munged.pid 2>/dev/null || true)"
  if [ -n "$old_pid" ] && kill -0 "$old_pid" 2>/dev/null; then kill "$old_pid" 2>/dev/null || true; sleep 0.5; fi
  rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
  if id munge >/dev/null 2>&1; then
    launch munged runuser -u munge -- munged --foreground --force
  else
    launch munged munged --foreground --force
  fi
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.2; done
  munge -n 2>/dev/null | unmunge >/dev/null 2>&1 ||
    skip "munged did not start (see /var/log/munge/munged.log and $LOG/munged.stderr)"
fi

if [ "$changed" = 1 ]; then
  stop "$DIR/run/slurmd.pid" slurmd
  stop "$DIR/run/slurmctld.pid" slurmctld
fi
if ! alive "$DIR/run/slurmctld.pid" slurmctld; then
  launch slurmctld slurmctld -D -f "$CONF"
  for _ in $(seq 75); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
  scontrol ping 2>/dev/null | grep -q UP ||
    skip "slurmctld did not start (see $LOG/slurmctld.log and $LOG/slurmctld.stderr)"
fi
if ! alive "$DIR/run/slurmd.pid" slurmd; then
  launch slurmd slurmd -D -f "$CONF"
fi

# --- wait for the node -----------------------------------------------------------------------
state=""
for _ in $(seq 150); do
  state="$(sinfo -h -n "$NODE" -o %t 2>/dev/null | head -n1)"
  case "$state" in
    idle|mix|alloc) break ;;
    drain*|down|down~|fail*) scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true ;;
  esac
  sleep 0.2
done
case "$state" in
  idle|mix|alloc) ;;
  *) alive "$DIR/run/slurmd.pid" slurmd || skip "slurmd did not start (see $LOG/slurmd.log and $LOG/slurmd.stderr)"
     skip "node $NODE is '${state:-unknown}' after 30 s, not idle (see $LOG/slurmd.log, $LOG/slurmctld.log)" ;;
esac
echo "slurm-up: node $NODE $state ($CPUS CPUs); logs in $LOG/ and /var/log/munge/"
echo "SLURM_CONF=$CONF"

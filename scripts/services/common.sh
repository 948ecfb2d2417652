# Shared helpers for scripts/services.sh. Sourced, not run.
# shellcheck shell=bash disable=SC2034 # settings here are read by the other pieces

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCRIPTS_DIR="$REPO_ROOT/scripts"
SERVICES_DIR="$REPO_ROOT/.services" # git-ignored: binaries, data, logs, pidfiles
LOG_DIR="$SERVICES_DIR/logs"
PID_DIR="$SERVICES_DIR/pids"
HOST=127.0.0.1 # every server listens on loopback only

PG_PORT=${STEPFOLD_PG_PORT:-5432}
REDIS_PORT=${STEPFOLD_REDIS_PORT:-6379}
MONGO_PORT=${STEPFOLD_MONGO_PORT:-27017}
DYNAMO_PORT=${STEPFOLD_DYNAMO_PORT:-8000}

# Seconds to wait for a server to accept requests before giving up.
READY_TIMEOUT=${STEPFOLD_SERVICES_TIMEOUT:-60}

mkdir -p "$LOG_DIR" "$PID_DIR"

say() { printf '[%s] %s\n' "$SVC" "$*"; }
# say, plus the time since $T0 (set by the caller) when there is one.
say_done() { say "$*${T0:+ ($(elapsed "$T0"))}"; }
die() {
  printf '[%s] ERROR: %s\n' "$SVC" "$*" >&2
  exit 1
}

# Elapsed seconds since $1 (an $EPOCHREALTIME value), e.g. "1.23s".
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2fs", b - a }'; }

# Print the last lines of a log to stderr, then fail.
die_with_log() {
  local log=$1
  shift
  printf '[%s] ERROR: %s\n' "$SVC" "$*" >&2
  if [[ -f $log ]]; then
    printf '[%s] --- last lines of %s ---\n' "$SVC" "$log" >&2
    tail -n 40 "$log" >&2
    printf '[%s] ---\n' "$SVC" >&2
  fi
  exit 1
}

port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }
port_closed() { ! port_open "$1"; }

# Poll `"$@"` every 0.2s for up to $READY_TIMEOUT seconds. Returns 1 on timeout,
# or 2 at once if $WATCH_PID (when set) has died: no point waiting for a corpse.
wait_until() {
  local deadline=$((SECONDS + READY_TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    if [[ -n ${WATCH_PID:-} ]] && ! alive "$WATCH_PID"; then return 2; fi
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# Install Debian packages. `apt-get update` only when the local package lists
# don't know the package (a bare image may ship without lists, or stale ones).
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  local t0=$EPOCHREALTIME
  say "installing $* from Debian"
  # Lock::Timeout: wait for another apt/dpkg run instead of failing at once.
  local apt=(apt-get -q -o DPkg::Lock::Timeout=300)
  if ! "${apt[@]}" install -y --no-install-recommends "$@" >"$LOG_DIR/apt.log" 2>&1; then
    say "package lists look stale; running apt-get update"
    "${apt[@]}" update >>"$LOG_DIR/apt.log" 2>&1 || die_with_log "$LOG_DIR/apt.log" "apt-get update failed"
    "${apt[@]}" install -y --no-install-recommends "$@" >>"$LOG_DIR/apt.log" 2>&1 ||
      die_with_log "$LOG_DIR/apt.log" "apt-get install $* failed"
  fi
  say "installed $* in $(elapsed "$t0")"
}

# sha256 over the given files (and any extra strings passed via STAMP_EXTRA):
# used to rebuild/refetch things only when their sources changed.
stamp_of() { { cat "$@"; printf '%s' "${STAMP_EXTRA:-}"; } | sha256sum | cut -d' ' -f1; }

# --- processes we start ourselves (ferretdb, moto) ---------------

# True if the process exists and is not a zombie (a server that died while still
# a child of this script stays a zombie until reaped, and kill -0 accepts it).
alive() {
  local state
  state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

# PID from a pidfile if that process is still alive, else nothing.
live_pid() {
  local pidfile=$1 pid
  [[ -f $pidfile ]] || return 1
  pid=$(<"$pidfile")
  [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" && echo "$pid"
}

# PID of whatever listens on a TCP port (for a server this checkout didn't start,
# e.g. one left by another clone of the repo).
listener_pid() {
  { ss -Hltnp "sport = :$1" 2>/dev/null || true; } | { grep -o 'pid=[0-9]*' || true; } | head -n1 | cut -d= -f2
}

# Start "$@" detached from this shell (own session, no stdin, output to $log), so
# it outlives the script and isn't hit by the caller's Ctrl-C. Writes its pid.
spawn_detached() {
  local pidfile=$1 log=$2
  shift 2
  printf '\n=== %s starting: %s\n' "$(date -Is)" "$*" >>"$log"
  # Without job control a background child is not a group leader, so setsid and
  # nohup exec in place and $! is the server's own pid.
  # 9>&-: don't hand the server our lock fd (see take_lock), or it holds the lock forever.
  setsid nohup "$@" >>"$log" 2>&1 </dev/null 9>&- &
  echo $! >"$pidfile"
}

# Stop a process we started (or, failing a pidfile, the one on our port if it is
# the expected program): SIGTERM, then SIGKILL after 15s.
stop_process() {
  local pidfile=$1 port=$2 expect=$3 pid
  pid=$(live_pid "$pidfile") || pid=$(listener_pid "$port")
  if [[ -z $pid ]]; then
    say_done "not running"
    rm -f "$pidfile"
    return 0
  fi
  if ! tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$expect"; then
    die "port $port is held by pid $pid, which is not $expect; not stopping it"
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 15))
  while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
  if alive "$pid"; then
    say "pid $pid ignored SIGTERM; killing"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.1; done
  fi
  rm -f "$pidfile"
  say_done "stopped (pid $pid)"
}

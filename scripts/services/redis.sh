# Redis from Debian's packages. Sourced by scripts/services.sh.
# shellcheck shell=bash
#
# Started with command-line settings only (no config file): loopback, our port,
# daemonized (redis forks and calls setsid itself), pidfile/log/dump under
# .services/ (per port). No periodic persistence, but `stop` asks for one final save and
# the next start loads it, so data survives a stop/start like a real restart.

# Per port, like everything in .services/: servers on other ports are other servers.
REDIS_DIR="$SERVICES_DIR/redis/$REDIS_PORT"
REDIS_PIDFILE="$PID_DIR/redis-$REDIS_PORT.pid"
REDIS_LOG="$LOG_DIR/redis-$REDIS_PORT.log"

redis_url() { echo "redis://$HOST:$REDIS_PORT"; }

redis_missing_packages() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || echo redis-server
}

redis_cli() { timeout 5 redis-cli -h "$HOST" -p "$REDIS_PORT" "$@"; }

redis_healthy() { [[ $(redis_cli ping 2>/dev/null) == PONG ]]; }

redis_up() {
  local t0=$EPOCHREALTIME
  [[ -z $(redis_missing_packages) ]] || apt_install redis-server
  if redis_healthy; then
    say "ready at $(redis_url) (reused, $(elapsed "$t0"))"
    return 0
  fi
  port_open "$REDIS_PORT" && die "port $REDIS_PORT is taken by something that is not Redis; set STEPFOLD_REDIS_PORT"

  mkdir -p "$REDIS_DIR"
  printf '\n=== %s starting redis-server on %s:%s\n' "$(date -Is)" "$HOST" "$REDIS_PORT" >>"$REDIS_LOG"
  # 9>&-: keep our lock fd (see take_lock) out of the daemon.
  redis-server \
    --bind "$HOST" --port "$REDIS_PORT" --protected-mode yes \
    --daemonize yes --pidfile "$REDIS_PIDFILE" --logfile "$REDIS_LOG" \
    --dir "$REDIS_DIR" --dbfilename dump.rdb --save '' --appendonly no \
    --maxclients 10000 9>&- ||
    die_with_log "$REDIS_LOG" "redis-server failed to start"
  wait_until redis_healthy || die_with_log "$REDIS_LOG" "no PONG on $(redis_url) after ${READY_TIMEOUT}s"
  say "ready at $(redis_url) (started, pid $(cat "$REDIS_PIDFILE" 2>/dev/null), $(elapsed "$t0"))"
}

redis_stop() {
  if ! redis_healthy; then
    stop_process "$REDIS_PIDFILE" "$REDIS_PORT" redis-server # hung or half-dead: kill it
    return
  fi
  # SHUTDOWN SAVE writes dump.rdb even with persistence off, so data survives a start.
  redis_cli shutdown save >/dev/null 2>&1 || true
  wait_until port_closed "$REDIS_PORT" ||
    die_with_log "$REDIS_LOG" "still listening after SHUTDOWN"
  rm -f "$REDIS_PIDFILE"
  say_done "stopped (data saved to ${REDIS_DIR#"$REPO_ROOT"/}/dump.rdb)"
}

# SHUTDOWN NOSAVE: the data goes with the folder anyway.
redis_drop() {
  if redis_healthy; then
    redis_cli shutdown nosave >/dev/null 2>&1 || true
    wait_until port_closed "$REDIS_PORT" || die_with_log "$REDIS_LOG" "still listening after SHUTDOWN"
  else
    stop_process "$REDIS_PIDFILE" "$REDIS_PORT" redis-server
  fi
  rm -rf "$REDIS_DIR" "$REDIS_LOG" "$REDIS_PIDFILE"
  say_done "dropped (stopped, ${REDIS_DIR#"$REPO_ROOT"/} removed)"
}

redis_status() {
  if redis_healthy; then
    echo "up    $(redis_url)  (pid $(redis_cli info server 2>/dev/null | tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }'))"
  else
    echo "down  $(redis_url)"
    return 1
  fi
}

# Redis Cluster from Debian's redis-server: three masters, no replicas. Sourced by scripts/services.sh.
# shellcheck shell=bash
#
# Each node is a redis-server started like the single one (loopback, daemonized, no periodic
# persistence, `stop` saves) plus `--cluster-enabled yes` with its own nodes.conf in its own dir.
# The cluster is created once with `redis-cli --cluster create`; later runs reuse it: nodes.conf
# keeps the membership and slot map, so a stop/start brings back the same cluster with its data.

# The three ports are STEPFOLD_REDIS_CLUSTER_PORT and the two after it (default 7001-7003).
REDIS_CLUSTER_PORT=${STEPFOLD_REDIS_CLUSTER_PORT:-7001}
REDIS_CLUSTER_PORTS=("$REDIS_CLUSTER_PORT" "$((REDIS_CLUSTER_PORT + 1))" "$((REDIS_CLUSTER_PORT + 2))")
# A dir per node (by port), like everything in .services/.
REDIS_CLUSTER_DIR="$SERVICES_DIR/redis-cluster"

redis_cluster_nodes() {
  local port out=()
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do out+=("$HOST:$port"); done
  (
    IFS=,
    echo "${out[*]}"
  )
}

redis_cluster_missing_packages() { redis_missing_packages; }

redis_cluster_cli() {
  local port=$1
  shift
  timeout 5 redis-cli -h "$HOST" -p "$port" "$@"
}

redis_cluster_node_log() { echo "$LOG_DIR/redis-cluster-$1.log"; }
redis_cluster_node_pidfile() { echo "$PID_DIR/redis-cluster-$1.pid"; }

redis_cluster_node_healthy() { [[ $(redis_cluster_cli "$1" ping 2>/dev/null) == PONG ]]; }

# A field of CLUSTER INFO on one node (empty when the node does not answer).
redis_cluster_info() {
  redis_cluster_cli "$1" cluster info 2>/dev/null | tr -d '\r' | awk -F: -v k="$2" '$1 == k { print $2 }'
}

# Healthy: every node answers and says cluster_state:ok with all slots assigned.
redis_cluster_healthy() {
  local port
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    [[ $(redis_cluster_info "$port" cluster_state) == ok ]] || return 1
    [[ $(redis_cluster_info "$port" cluster_slots_assigned) == 16384 ]] || return 1
  done
}

redis_cluster_start_node() {
  local port=$1 dir="$REDIS_CLUSTER_DIR/$1" log
  log=$(redis_cluster_node_log "$port")
  if redis_cluster_node_healthy "$port"; then return 0; fi
  port_open "$port" && die "port $port is taken by something that is not Redis; set STEPFOLD_REDIS_CLUSTER_PORT"
  mkdir -p "$dir"
  printf '\n=== %s starting redis-server (cluster node) on %s:%s\n' "$(date -Is)" "$HOST" "$port" >>"$log"
  # 9>&-: keep our lock fd (see take_lock) out of the daemon. The node timeout is short so a
  # test that stops the nodes gets its cluster back quickly.
  redis-server \
    --bind "$HOST" --port "$port" --protected-mode yes \
    --daemonize yes --pidfile "$(redis_cluster_node_pidfile "$port")" --logfile "$log" \
    --dir "$dir" --dbfilename dump.rdb --save '' --appendonly no \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000 \
    --maxclients 10000 9>&- ||
    die_with_log "$log" "redis-server failed to start on port $port"
  wait_until redis_cluster_node_healthy "$port" ||
    die_with_log "$log" "no PONG on $HOST:$port after ${READY_TIMEOUT}s"
}

redis_cluster_up() {
  local t0=$EPOCHREALTIME port fresh=1 how=reused
  [[ -z $(redis_cluster_missing_packages) ]] || apt_install redis-server
  if redis_cluster_healthy; then
    say "ready at $(redis_cluster_nodes) (reused, $(elapsed "$t0"))"
    return 0
  fi
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do redis_cluster_start_node "$port"; done
  how=started

  # Never created: every node knows only itself and holds no slot.
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    if [[ $(redis_cluster_info "$port" cluster_known_nodes) != 1 ||
      $(redis_cluster_info "$port" cluster_slots_assigned) != 0 ]]; then
      fresh=0
    fi
  done
  if ((fresh)); then
    say "creating the cluster (3 masters, no replicas)"
    # shellcheck disable=SC2046 # one argument per node, split on purpose
    timeout 60 redis-cli --cluster create $(redis_cluster_nodes | tr , ' ') \
      --cluster-replicas 0 --cluster-yes >>"$(redis_cluster_node_log "$REDIS_CLUSTER_PORT")" 2>&1 ||
      die_with_log "$(redis_cluster_node_log "$REDIS_CLUSTER_PORT")" "redis-cli --cluster create failed"
    how=created
  fi
  # Restarted nodes find each other again through nodes.conf; a created cluster needs a moment
  # for every node to learn the slot map.
  if ! wait_until redis_cluster_healthy; then
    die_with_log "$(redis_cluster_node_log "$REDIS_CLUSTER_PORT")" \
      "cluster_state is not ok after ${READY_TIMEOUT}s; to start over: bash scripts/services.sh stop redis-cluster && rm -rf ${REDIS_CLUSTER_DIR#"$REPO_ROOT"/}"
  fi
  say "ready at $(redis_cluster_nodes) ($how, $(elapsed "$t0"))"
}

redis_cluster_stop() {
  local port log
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    log=$(redis_cluster_node_log "$port")
    if ! redis_cluster_node_healthy "$port"; then
      stop_process "$(redis_cluster_node_pidfile "$port")" "$port" redis-server # hung or half-dead
      continue
    fi
    # SHUTDOWN SAVE writes dump.rdb (and nodes.conf is kept), so data survives a start.
    redis_cluster_cli "$port" shutdown save >/dev/null 2>&1 || true
    wait_until port_closed "$port" || die_with_log "$log" "port $port still listening after SHUTDOWN"
    rm -f "$(redis_cluster_node_pidfile "$port")"
  done
  say_done "stopped $(redis_cluster_nodes) (data saved under ${REDIS_CLUSTER_DIR#"$REPO_ROOT"/}/)"
}

# SHUTDOWN NOSAVE on each node, then its folder (nodes.conf, dump), log and pidfile go.
redis_cluster_drop() {
  local port
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    if redis_cluster_node_healthy "$port"; then
      redis_cluster_cli "$port" shutdown nosave >/dev/null 2>&1 || true
      wait_until port_closed "$port" || die "port $port still listening after SHUTDOWN"
    else
      stop_process "$(redis_cluster_node_pidfile "$port")" "$port" redis-server
    fi
    rm -rf "${REDIS_CLUSTER_DIR:?}/$port" "$(redis_cluster_node_log "$port")" "$(redis_cluster_node_pidfile "$port")"
  done
  say_done "dropped $(redis_cluster_nodes)"
}

redis_cluster_status() {
  local port down=()
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do redis_cluster_node_healthy "$port" || down+=("$port"); done
  if ((${#down[@]})); then
    echo "down  $(redis_cluster_nodes)  (not answering: ${down[*]})"
    return 1
  fi
  if ! redis_cluster_healthy; then
    echo "down  $(redis_cluster_nodes)  (cluster_state: $(redis_cluster_info "$REDIS_CLUSTER_PORT" cluster_state))"
    return 1
  fi
  echo "up    $(redis_cluster_nodes)  (cluster_state:ok)"
}

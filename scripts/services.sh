#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Installs and starts the real servers the store adapters are tested against:
# PostgreSQL, Redis, a Redis Cluster (three nodes), FerretDB (MongoDB wire protocol),
# moto (DynamoDB); Debian's Chromium for the inspector's browser tests, Java and Maven for the
# lambda example's ElasticMQ (installed, not servers).
# All on 127.0.0.1, idempotent: starts what is missing, reuses what runs.
# See scripts/README.md.
#
#   services.sh [up [NAME...]]   install + start (default: all), wait until ready
#   services.sh start NAME...    same as up, for bringing a stopped server back
#   services.sh stop NAME...     stop (really: the process goes away)
#   services.sh drop NAME --port N   stop the server on port N and delete its data and log
#                                (a test's own server; never a default port)
#   services.sh stop-every-port  stop every server this checkout started, on any port
#                                (tests start their own on other ports for outages)
#   services.sh status           one line per server; exit 1 if any is down
#   services.sh env              export lines for the connection URLs
#
# NAME: pg, redis, redis-cluster, mongo, dynamo, chromium, java, or all (aliases: postgres, ferretdb, dynamodb, moto)
# --port N (with one NAME, any command): that server on port N, as STEPFOLD_<NAME>_PORT=N does.
set -euo pipefail

here=$(dirname "${BASH_SOURCE[0]}")

# --port comes out of the arguments before the service files are sourced: each reads its port
# from the environment then.
args=()
while (($#)); do
  case $1 in
  --port) [[ $# -ge 2 ]] || { echo "services.sh: --port needs a number" >&2 && exit 2; } && port_arg=$2 && shift 2 ;;
  --port=*) port_arg=${1#*=} && shift ;;
  *) args+=("$1") && shift ;;
  esac
done
set -- "${args[@]}"
if [[ -n ${port_arg:-} ]]; then
  [[ $port_arg =~ ^[0-9]+$ ]] && ((port_arg > 0 && port_arg < 65536)) ||
    { echo "services.sh: --port takes a TCP port, not '$port_arg'" >&2 && exit 2; }
  [[ $# -eq 2 ]] || { echo "services.sh: --port goes with one command and one NAME" >&2 && exit 2; }
  case $2 in
  pg | postgres | postgresql) export STEPFOLD_PG_PORT=$port_arg ;;
  redis) export STEPFOLD_REDIS_PORT=$port_arg ;;
  redis-cluster | cluster) export STEPFOLD_REDIS_CLUSTER_PORT=$port_arg ;;
  mongo | mongodb | ferretdb) export STEPFOLD_MONGO_PORT=$port_arg ;;
  dynamo | dynamodb | dynamodb-local | moto) export STEPFOLD_DYNAMO_PORT=$port_arg ;;
  *) echo "services.sh: $2 has no port" >&2 && exit 2 ;;
  esac
fi
# shellcheck source=services/common.sh
source "$here/services/common.sh"
# shellcheck source=services/pg.sh
source "$here/services/pg.sh"
# shellcheck source=services/redis.sh
source "$here/services/redis.sh"
# shellcheck source=services/redis-cluster.sh
source "$here/services/redis-cluster.sh"
# shellcheck source=services/mongo.sh
source "$here/services/mongo.sh"
# shellcheck source=services/dynamo.sh
source "$here/services/dynamo.sh"
# shellcheck source=services/chromium.sh
source "$here/services/chromium.sh"
# shellcheck source=services/java.sh
source "$here/services/java.sh"

ALL=(pg redis redis-cluster mongo dynamo chromium java)
SVC=services

# The shell functions of a service: redis-cluster's are redis_cluster_up, ...
fn() { echo "${1//-/_}_$2"; }

usage() { sed -n '3,21s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

canonical() {
  case $1 in
  pg | postgres | postgresql) echo pg ;;
  redis) echo redis ;;
  redis-cluster | cluster) echo redis-cluster ;;
  mongo | mongodb | ferretdb) echo mongo ;;
  dynamo | dynamodb | dynamodb-local | moto) echo dynamo ;;
  chromium | chrome) echo chromium ;;
  java | jdk | maven) echo java ;;
  *) die "unknown service '$1' (expected: ${ALL[*]})" ;;
  esac
}

# One invocation at a time changes servers (tests may call stop/start while a
# developer runs `pnpm services`); a cold first run holds the lock for minutes.
take_lock() {
  exec 9>"$SERVICES_DIR/.lock"
  if ! flock -n 9; then
    say "another services.sh is running; waiting for it"
    flock -w 900 9 || die "gave up waiting for the lock on $SERVICES_DIR/.lock"
  fi
}

cmd_up() {
  local names=("$@") name t0=$EPOCHREALTIME failed=() missing=""
  declare -A prep=()

  # The slow one-time steps (Go build of FerretDB, pip install of moto)
  # run in the background while the Debian packages install and servers start.
  if [[ " ${names[*]} " == *" mongo "* ]]; then
    (SVC=mongo && mongo_prepare) &
    prep[mongo]=$!
  fi
  for name in "${names[@]}"; do
    case $name in
    pg) missing+=" $(pg_missing_packages)" ;;
    redis | redis-cluster) missing+=" $(redis_missing_packages)" ;;
    dynamo) missing+=" $(dynamo_missing_packages)" ;;
    chromium) missing+=" $(chromium_missing_packages)" ;;
    java) missing+=" $(java_missing_packages)" ;;
    esac
  done
  # One apt-get for all: each run costs seconds even when there is little to do.
  if [[ -n ${missing// /} ]]; then
    # shellcheck disable=SC2086 # a list of package names, split on purpose
    (SVC=apt && apt_install $missing) || failed+=(apt)
  fi
  if [[ " ${names[*]} " == *" dynamo "* ]]; then
    (SVC=dynamo && dynamo_prepare) &
    prep[dynamo]=$!
  fi

  for name in "${names[@]}"; do
    if [[ -n ${prep[$name]:-} ]] && ! wait "${prep[$name]}"; then
      failed+=("$name")
      continue
    fi
    # A subshell per server: one that fails (die = exit) doesn't stop the others.
    (SVC=$name && "$(fn "$name" up)") || failed+=("$name")
  done

  SVC=services
  if ((${#failed[@]})); then
    say "FAILED: ${failed[*]} (after $(elapsed "$t0")); logs in ${LOG_DIR#"$REPO_ROOT"/}/"
    exit 1
  fi
  say "all up: ${names[*]} ($(elapsed "$t0")); \`bash scripts/services.sh env\` prints the URLs"
}

cmd_stop() {
  local name t0
  for name in "$@"; do
    t0=$EPOCHREALTIME
    # shellcheck disable=SC2034 # SVC and T0 are read by say/say_done
    (SVC=$name && T0=$t0 && "$(fn "$name" stop)")
  done
}

# Stops one server a test started on a port of its own and deletes what it leaves behind (data,
# log, pidfile), so runs that each pick a fresh port do not pile up servers and folders. Refused on
# a default port: those servers are shared by every test and checkout.
cmd_drop() {
  local name=$1 t0=$EPOCHREALTIME
  local shared
  case $name in
  pg) shared=5432 ;;
  redis) shared=6379 ;;
  mongo) shared=27017 ;;
  dynamo) shared=8000 ;;
  redis-cluster) shared=7001 ;;
  *) die "drop is for pg, redis, redis-cluster, mongo and dynamo, not $name" ;;
  esac
  [[ -n ${port_arg:-} && $port_arg != "$shared" ]] ||
    die "drop needs --port, not $shared (a test's own server; the default ports are shared)"
  # shellcheck disable=SC2034 # SVC and T0 are read by say/say_done
  (SVC="$name:$port_arg" && T0=$t0 && "$(fn "$name" drop)")
}

# The ports this checkout has run a server of kind `$1` on: PostgreSQL clusters are named
# stepfold-PORT, Redis keeps a data directory per port, FerretDB and moto a pidfile (and so did
# DynamoDB Local, which this checkout may have run before the switch to moto).
ports_of() {
  local f
  case $1 in
  pg) { pg_lsclusters -h 2>/dev/null || true; } | awk '$2 ~ /^stepfold-[0-9]+$/ { print $3 }' ;;
  redis) for f in "$SERVICES_DIR"/redis/*/; do [[ -d $f ]] && basename "$f"; done ;;
  mongo) for f in "$PID_DIR"/ferretdb-*.pid; do [[ -f $f ]] && { f=${f##*-}; echo "${f%.pid}"; }; done ;;
  dynamo) for f in "$PID_DIR"/moto-*.pid "$PID_DIR"/dynamodb-local-*.pid; do [[ -f $f ]] && { f=${f##*-}; echo "${f%.pid}"; }; done ;;
  esac | sort -un
}

# Stops every server of every kind this checkout started, whatever its port: a service file
# reads its port from the environment when sourced, so each port is stopped in a subshell that
# sources it again with that port.
cmd_stop_every_port() {
  local name port t0
  cmd_stop redis-cluster
  for name in pg redis mongo dynamo; do
    for port in $(ports_of "$name"); do
      t0=$EPOCHREALTIME
      (
        export "STEPFOLD_${name^^}_PORT=$port"
        # shellcheck source=/dev/null
        source "$here/services/common.sh"
        # shellcheck source=/dev/null
        source "$here/services/$name.sh"
        # shellcheck disable=SC2034 # SVC and T0 are read by say/say_done
        SVC="$name:$port" && T0=$t0 && "$(fn "$name" stop)"
      ) || true # one that cannot be stopped (its port taken by another program) spares the rest
    done
  done
}

cmd_status() {
  local name rc=0
  for name in "${ALL[@]}"; do
    printf '%-14s' "$name"
    "$(fn "$name" status)" || rc=1
  done
  return $rc
}

cmd_env() {
  cat <<EOF
export STEPFOLD_PG_URL=$(pg_url)
export STEPFOLD_REDIS_URL=$(redis_url)
export STEPFOLD_REDIS_CLUSTER_NODES=$(redis_cluster_nodes)
export STEPFOLD_MONGO_URL=$(mongo_url)
export STEPFOLD_DYNAMO_ENDPOINT=$(dynamo_url)
EOF
}

main() {
  local cmd=${1:-up} names=() name
  [[ $# -gt 0 ]] && shift
  for name in "$@"; do
    if [[ $name == all ]]; then names=("${ALL[@]}"); else names+=("$(canonical "$name")"); fi
  done

  case $cmd in
  up | start)
    ((${#names[@]})) || names=("${ALL[@]}")
    take_lock
    cmd_up "${names[@]}"
    ;;
  stop)
    ((${#names[@]})) || die "stop needs service names (${ALL[*]}) or 'all'"
    take_lock
    cmd_stop "${names[@]}"
    ;;
  drop)
    ((${#names[@]} == 1)) || die "drop needs one service name"
    take_lock
    cmd_drop "${names[0]}"
    ;;
  stop-every-port)
    take_lock
    cmd_stop_every_port
    ;;
  restart)
    ((${#names[@]})) || names=("${ALL[@]}")
    take_lock
    cmd_stop "${names[@]}"
    cmd_up "${names[@]}"
    ;;
  status) cmd_status ;;
  env) cmd_env ;;
  -h | --help | help) usage ;;
  *)
    usage >&2
    exit 2
    ;;
  esac
}

main "$@"

# The DynamoDB test server: moto (Apache-2.0) from PyPI, in a venv of this checkout.
# Sourced by scripts/services.sh.
# shellcheck shell=bash
#
# pip installs moto-requirements.txt (every transitive version pinned, with hashes) into
# .services/moto/venv, again only when that file or the Python changes. Our launcher
# moto-server.py serves moto's app behind one lock (see there why). In memory: data does
# not survive a stop/start. Tables are per region, as in DynamoDB.

MOTO_REQUIREMENTS="$SCRIPTS_DIR/services/moto-requirements.txt"
MOTO_LAUNCHER="$SCRIPTS_DIR/services/moto-server.py"
MOTO_VENV="$SERVICES_DIR/moto/venv"
MOTO_PIDFILE="$PID_DIR/moto-$DYNAMO_PORT.pid" # per port: other ports are other servers
MOTO_LOG="$LOG_DIR/moto-$DYNAMO_PORT.log"
MOTO_INSTALL_LOG="$LOG_DIR/moto-install.log"

dynamo_url() { echo "http://$HOST:$DYNAMO_PORT"; }

dynamo_missing_packages() {
  # Creating the venv needs ensurepip, which Debian ships in python3-venv (it brings python3
  # too). Checked only while there is no venv: Python takes a while to start here.
  [[ -x $MOTO_VENV/bin/python ]] || python3 -c 'import ensurepip, venv' 2>/dev/null || echo python3-venv
  command -v curl >/dev/null || echo curl
}

# (Re)create the venv when the requirements or the Python (its resolved path, which names
# the minor version) changed. The stamp is written last, so an install that fails halfway
# is redone from scratch next time.
dynamo_prepare() {
  local t0=$EPOCHREALTIME stamp missing
  stamp=$(STAMP_EXTRA=$(readlink -f "$(command -v python3 || echo none)") stamp_of "$MOTO_REQUIREMENTS")
  if [[ -f $MOTO_VENV/stamp && $(<"$MOTO_VENV/stamp") == "$stamp" ]]; then return 0; fi
  rm -rf "$MOTO_VENV"
  missing=$(dynamo_missing_packages)
  # shellcheck disable=SC2086 # a list of package names, split on purpose
  [[ -z $missing ]] || apt_install $missing

  say "installing moto from PyPI into ${MOTO_VENV#"$REPO_ROOT"/}"
  {
    python3 -m venv "$MOTO_VENV" &&
      "$MOTO_VENV/bin/python" -m pip install --disable-pip-version-check --no-input \
        --require-hashes --no-deps -r "$MOTO_REQUIREMENTS"
  } >"$MOTO_INSTALL_LOG" 2>&1 || die_with_log "$MOTO_INSTALL_LOG" "pip install of moto failed"
  echo "$stamp" >"$MOTO_VENV/stamp"
  say "installed moto in $(elapsed "$t0")"
}

# A DynamoDB JSON request. The Authorization header is what tells moto the request is for
# DynamoDB (without it moto answers as S3); moto does not check the signature.
dynamo_request() {
  local target=$1 body=$2
  curl -sS --max-time 3 -X POST "$(dynamo_url)/" \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H "X-Amz-Target: DynamoDB_20120810.$target" \
    -H 'X-Amz-Date: 20240101T000000Z' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=stepfold/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=00' \
    -d "$body"
}

dynamo_healthy() { dynamo_request ListTables '{}' 2>/dev/null | grep -q '"TableNames"'; }

# moto's own API answers only on moto: tells it apart from another DynamoDB on the port
# (such as a DynamoDB Local left running by an older checkout).
dynamo_is_moto() { curl -fsS --max-time 3 "$(dynamo_url)/moto-api/data.json" >/dev/null 2>&1; }

dynamo_up() {
  local t0=$EPOCHREALTIME pid rc=0
  dynamo_prepare
  if dynamo_healthy; then
    dynamo_is_moto ||
      die "port $DYNAMO_PORT answers as DynamoDB but is not moto (an old DynamoDB Local?); \`bash scripts/services.sh stop dynamo\` stops it"
    say "ready at $(dynamo_url) (reused, $(elapsed "$t0"))"
    return 0
  fi
  port_open "$DYNAMO_PORT" && die "port $DYNAMO_PORT is taken by something that is not DynamoDB; set STEPFOLD_DYNAMO_PORT"

  spawn_detached "$MOTO_PIDFILE" "$MOTO_LOG" "$MOTO_VENV/bin/python" "$MOTO_LAUNCHER" "$HOST" "$DYNAMO_PORT"
  pid=$(<"$MOTO_PIDFILE")
  WATCH_PID=$pid wait_until dynamo_healthy || rc=$?
  ((rc == 0)) || die_with_log "$MOTO_LOG" "$([[ $rc == 2 ]] && echo "exited during startup" || echo "no ListTables reply after ${READY_TIMEOUT}s")"
  say "ready at $(dynamo_url) (started, pid $pid, $(elapsed "$t0"))"
}

# Also stops a DynamoDB Local that a checkout from before the switch to moto left on the port.
dynamo_stop() {
  stop_process "$MOTO_PIDFILE" "$DYNAMO_PORT" 'moto-server\.py\|LoopbackServerRunner'
  rm -f "$PID_DIR/dynamodb-local-$DYNAMO_PORT.pid"
}

# In memory: stopping it leaves only the log.
dynamo_drop() {
  dynamo_stop
  rm -f "$MOTO_LOG"
}

dynamo_status() {
  if dynamo_healthy; then
    echo "up    $(dynamo_url)  (pid $(live_pid "$MOTO_PIDFILE" || listener_pid "$DYNAMO_PORT"))"
  else
    echo "down  $(dynamo_url)"
    return 1
  fi
}

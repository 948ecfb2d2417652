# Amazon DynamoDB Local 2.x from Maven Central, run with the machine's Java.
# Sourced by scripts/services.sh.
# shellcheck shell=bash
#
# Maven fetches the jars (and sqlite4java's native .so, a dependency of its own)
# into ~/.m2 and copies them to .services/dynamodb-local/lib; that directory is
# also java.library.path. In-memory and -sharedDb: every credential/region sees
# the same tables, and data does not survive a stop/start.

DDB_SRC="$SCRIPTS_DIR/dynamodb-local"
DDB_DIR="$SERVICES_DIR/dynamodb-local"
DDB_PIDFILE="$PID_DIR/dynamodb-local-$DYNAMO_PORT.pid" # per port: other ports are other servers
DDB_LOG="$LOG_DIR/dynamodb-local-$DYNAMO_PORT.log"
DDB_FETCH_LOG="$LOG_DIR/dynamodb-local-fetch.log"

dynamo_url() { echo "http://$HOST:$DYNAMO_PORT"; }

dynamo_missing_packages() {
  command -v java >/dev/null && command -v javac >/dev/null || echo openjdk-17-jdk-headless
  command -v mvn >/dev/null || echo maven
}

# Fetch the jars when pom.xml changed; compile our launcher when it or the jars changed.
dynamo_prepare() {
  local t0=$EPOCHREALTIME lib_stamp cls_stamp missing
  missing=$(dynamo_missing_packages)
  # shellcheck disable=SC2086 # a list of package names, split on purpose
  [[ -z $missing ]] || apt_install $missing

  lib_stamp=$(stamp_of "$DDB_SRC/pom.xml")
  if [[ ! -f $DDB_DIR/lib.stamp || $(<"$DDB_DIR/lib.stamp") != "$lib_stamp" ]]; then
    say "fetching DynamoDB Local from Maven Central"
    rm -rf "${DDB_DIR:?}/lib" "${DDB_DIR:?}/classes"
    mkdir -p "$DDB_DIR"
    mvn -B -q -f "$DDB_SRC/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$DDB_DIR/lib" >"$DDB_FETCH_LOG" 2>&1 ||
      die_with_log "$DDB_FETCH_LOG" "mvn dependency:copy-dependencies failed"
    echo "$lib_stamp" >"$DDB_DIR/lib.stamp"
    say "fetched $(find "$DDB_DIR/lib" -type f | wc -l) files in $(elapsed "$t0")"
  fi

  cls_stamp=$(STAMP_EXTRA="$lib_stamp $(javac -version 2>&1)" stamp_of "$DDB_SRC/LoopbackServerRunner.java")
  if [[ ! -f $DDB_DIR/classes.stamp || $(<"$DDB_DIR/classes.stamp") != "$cls_stamp" ]]; then
    rm -rf "${DDB_DIR:?}/classes"
    javac -d "$DDB_DIR/classes" -cp "$DDB_DIR/lib/*" "$DDB_SRC/LoopbackServerRunner.java" >"$DDB_FETCH_LOG" 2>&1 ||
      die_with_log "$DDB_FETCH_LOG" "javac LoopbackServerRunner.java failed"
    echo "$cls_stamp" >"$DDB_DIR/classes.stamp"
  fi
}

# ListTables with a syntactically valid SigV4 header: DynamoDB Local insists on
# one being present but does not check the signature.
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

dynamo_up() {
  local t0=$EPOCHREALTIME pid rc=0
  dynamo_prepare
  if dynamo_healthy; then
    say "ready at $(dynamo_url) (reused, $(elapsed "$t0"))"
    return 0
  fi
  port_open "$DYNAMO_PORT" && die "port $DYNAMO_PORT is taken by something that is not DynamoDB; set STEPFOLD_DYNAMO_PORT"

  # LoopbackServerRunner = DynamoDB Local's own ServerRunner, but bound to $HOST
  # (DynamoDB Local has no bind-address flag). cwd matters not: -inMemory writes no files.
  spawn_detached "$DDB_PIDFILE" "$DDB_LOG" \
    java -Xmx1g -Dstepfold.dynamo.host="$HOST" -Djava.library.path="$DDB_DIR/lib" \
    -cp "$DDB_DIR/classes:$DDB_DIR/lib/*" LoopbackServerRunner \
    -inMemory -sharedDb -disableTelemetry -port "$DYNAMO_PORT"
  pid=$(<"$DDB_PIDFILE")
  WATCH_PID=$pid wait_until dynamo_healthy || rc=$?
  ((rc == 0)) || die_with_log "$DDB_LOG" "$([[ $rc == 2 ]] && echo "exited during startup" || echo "no ListTables reply after ${READY_TIMEOUT}s")"
  say "ready at $(dynamo_url) (started, pid $pid, $(elapsed "$t0"))"
}

dynamo_stop() { stop_process "$DDB_PIDFILE" "$DYNAMO_PORT" LoopbackServerRunner; }

dynamo_status() {
  if dynamo_healthy; then
    echo "up    $(dynamo_url)  (pid $(live_pid "$DDB_PIDFILE" || listener_pid "$DYNAMO_PORT"))"
  else
    echo "down  $(dynamo_url)"
    return 1
  fi
}

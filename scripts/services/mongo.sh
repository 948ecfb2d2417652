# MongoDB wire protocol, served by FerretDB v1 embedded in our own tiny Go
# program (scripts/ferretdb/) with its SQLite backend, patched by us so queries
# use the collection's indexes (scripts/ferretdb/_patch/). Sourced by scripts/services.sh.
# shellcheck shell=bash

FERRET_SRC="$SCRIPTS_DIR/ferretdb"
FERRET_PATCH="$FERRET_SRC/_patch"
FERRET_BIN="$SERVICES_DIR/bin/stepfold-ferretdb"
# A copy of FERRET_SRC with its modules vendored and FerretDB patched; rebuilt from scratch.
FERRET_BUILD_DIR="$SERVICES_DIR/build/ferretdb"
# Per port, like everything in .services/: servers on other ports are other servers.
FERRET_DATA="$SERVICES_DIR/ferretdb-data/$MONGO_PORT" # one SQLite file per database; kept across stop/start
FERRET_PIDFILE="$PID_DIR/ferretdb-$MONGO_PORT.pid"
FERRET_LOG="$LOG_DIR/ferretdb-$MONGO_PORT.log"
FERRET_BUILD_LOG="$LOG_DIR/ferretdb-build.log"

mongo_url() { echo "mongodb://$HOST:$MONGO_PORT/stepfold"; }

# Build only when the sources or the Go version changed since the last build; the
# stamp check costs nothing, while even a no-op `go build` takes a second or two.
# A first build compiles FerretDB and modernc.org/sqlite: a couple of minutes on
# two cores. Later builds reuse Go's module and build caches.
mongo_prepare() {
  local t0=$EPOCHREALTIME stamp
  command -v go >/dev/null ||
    die "Go is required to build scripts/ferretdb (Debian's golang is too old for FerretDB; install Go >= 1.24)"
  stamp=$(STAMP_EXTRA=$(go version) stamp_of "$FERRET_SRC"/*.go "$FERRET_SRC/go.mod" "$FERRET_SRC/go.sum" "$FERRET_PATCH"/*)
  if [[ -x $FERRET_BIN && -f $FERRET_BIN.stamp && $(<"$FERRET_BIN.stamp") == "$stamp" ]]; then
    return 0
  fi
  say "building scripts/ferretdb (minutes on a machine's first build, seconds after)"
  mkdir -p "$(dirname "$FERRET_BIN")"
  ferret_build >"$FERRET_BUILD_LOG" 2>&1 || die_with_log "$FERRET_BUILD_LOG" "go build failed"
  mv -f "$FERRET_BIN.tmp" "$FERRET_BIN"
  echo "$stamp" >"$FERRET_BIN.stamp"
  say "built ${FERRET_BIN#"$REPO_ROOT"/} in $(elapsed "$t0")"
}

# FerretDB's SQLite backend, as released, pushes down only the _id of a one-field filter, and
# spells that _id so SQLite cannot use the _id index: every save and every due poll read and
# decoded the whole collection. The patch pushes down _id equality and $in, and number ranges on
# indexed fields (`_patch/filter_where.go`); `go mod vendor` gives it a writable copy to patch.
ferret_build() {
  local vendored="$FERRET_BUILD_DIR/vendor/github.com/FerretDB/FerretDB"
  rm -rf "$FERRET_BUILD_DIR" && mkdir -p "$FERRET_BUILD_DIR" &&
    cp "$FERRET_SRC"/*.go "$FERRET_SRC/go.mod" "$FERRET_SRC/go.sum" "$FERRET_BUILD_DIR/" &&
    (cd "$FERRET_BUILD_DIR" && go mod vendor) &&
    cp "$FERRET_PATCH"/*.go "$vendored/internal/backends/sqlite/" &&
    # git apply, not patch(1) (Debian's "optional" priority); the ceiling keeps git from taking
    # the vendored folder for a part of this repository, which would skip the patch's paths.
    GIT_CEILING_DIRECTORIES="$(dirname "$vendored")" git -C "$vendored" apply -p1 --verbose \
      <"$FERRET_PATCH/sqlite-pushdown.patch" &&
    (cd "$FERRET_BUILD_DIR" && go build -buildvcs=false -mod=vendor -o "$FERRET_BIN.tmp" .)
}

mongo_healthy() { timeout 5 node "$SCRIPTS_DIR/services/mongo-ping.mjs" "$HOST" "$MONGO_PORT" >/dev/null 2>&1; }

mongo_up() {
  local t0=$EPOCHREALTIME pid rc=0
  mongo_prepare
  if mongo_healthy; then
    say "ready at $(mongo_url) (reused, $(elapsed "$t0"))"
    return 0
  fi
  port_open "$MONGO_PORT" && die "port $MONGO_PORT is taken by something that does not answer a MongoDB ping; set STEPFOLD_MONGO_PORT"

  spawn_detached "$FERRET_PIDFILE" "$FERRET_LOG" \
    "$FERRET_BIN" -listen "$HOST:$MONGO_PORT" -data "$FERRET_DATA" -log-level "${STEPFOLD_FERRETDB_LOG_LEVEL:-error}"
  pid=$(<"$FERRET_PIDFILE")
  WATCH_PID=$pid wait_until mongo_healthy || rc=$?
  ((rc == 0)) || die_with_log "$FERRET_LOG" "$([[ $rc == 2 ]] && echo "exited during startup" || echo "no ping reply after ${READY_TIMEOUT}s")"
  say "ready at $(mongo_url) (started, pid $pid, $(elapsed "$t0"))"
}

mongo_stop() { stop_process "$FERRET_PIDFILE" "$MONGO_PORT" stepfold-ferretdb; }

mongo_drop() {
  mongo_stop
  rm -rf "$FERRET_DATA" "$FERRET_LOG"
}

mongo_status() {
  if mongo_healthy; then
    echo "up    $(mongo_url)  (pid $(live_pid "$FERRET_PIDFILE" || listener_pid "$MONGO_PORT"))"
  else
    echo "down  $(mongo_url)"
    return 1
  fi
}

# PostgreSQL from Debian's packages. Sourced by scripts/services.sh.
# shellcheck shell=bash
#
# We run a dedicated Debian cluster per port, "stepfold-5432" (made by
# pg_createcluster), not the packaged "main" one, so our test-only tuning (fsync
# off) never lands on a cluster someone else uses. It lives in
# /var/lib/postgresql, i.e. per machine, not per checkout: a fresh clone (as CI
# uses) finds it, and `stop pg` works from any checkout. Its log is linked into
# .services/logs/pg-PORT.log; its pidfile is the data directory's postmaster.pid.
#
# Start/stop call pg_ctl as the postgres user (postgres refuses to run as root)
# rather than pg_ctlcluster, whose fixed half-second polls make a start take
# ~2.5s instead of ~0.2s: that adds up in tests that stop and restart servers.

PG_CLUSTER=stepfold-$PG_PORT
PG_USER=stepfold PG_PASSWORD=stepfold PG_DB=stepfold

pg_url() { echo "postgres://$PG_USER:$PG_PASSWORD@$HOST:$PG_PORT/$PG_DB"; }

# Newest server version installed, e.g. "15"; empty when there is none.
pg_version() {
  local bin
  for bin in /usr/lib/postgresql/*/bin/postgres; do
    [[ -x $bin ]] && basename "$(dirname "$(dirname "$bin")")"
  done | sort -V | tail -n1
}

pg_missing_packages() {
  [[ -n $(pg_version) ]] && command -v pg_ctlcluster >/dev/null || echo postgresql
}

# A column of our cluster's pg_lsclusters line (4 status: online/down, 6 data
# directory, 7 log file); empty if the cluster doesn't exist.
pg_cluster_field() {
  pg_lsclusters -h 2>/dev/null | awk -v v="$1" -v c="$PG_CLUSTER" -v f="$2" '$1 == v && $2 == c { print $f }'
}

pg_healthy() {
  [[ $(PGPASSWORD=$PG_PASSWORD PGCONNECT_TIMEOUT=2 timeout 5 \
    psql -X -A -t -q -h "$HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" -c 'select 1' 2>/dev/null) == 1 ]]
}

# Write our settings; returns 0 if anything changed (so a running server needs a restart).
pg_configure() {
  local ver=$1 confdir="/etc/postgresql/$1/$PG_CLUSTER" changed=1
  local want
  want=$(
    cat <<EOF
# Written by scripts/services/pg.sh: settings for a throwaway test server.
listen_addresses = '$HOST'
max_connections = 300
shared_buffers = 256MB
# Durability does not matter here (the data is test data, recreated at will),
# and skipping fsync makes schema setup and the racing-writer tests much faster.
# Never copy these three lines to a server whose data matters.
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
  )
  if [[ ! -f $confdir/conf.d/stepfold.conf || $(<"$confdir/conf.d/stepfold.conf") != "$want" ]]; then
    printf '%s\n' "$want" >"$confdir/conf.d/stepfold.conf"
    changed=0
  fi
  # The port goes into postgresql.conf itself: pg_lsclusters reads it there.
  if [[ $(pg_conftool -s "$ver" "$PG_CLUSTER" show port) != "$PG_PORT" ]]; then
    pg_conftool "$ver" "$PG_CLUSTER" set port "$PG_PORT"
    changed=0
  fi
  return $changed
}

# Role and database for the URL in `env`; password auth over TCP is what
# Debian's default pg_hba.conf does for 127.0.0.1 (scram-sha-256).
pg_create_role() {
  runuser -u postgres -- psql -X -q -p "$PG_PORT" -d postgres -v ON_ERROR_STOP=1 >/dev/null <<EOF
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
    CREATE ROLE $PG_USER LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
  ELSE
    ALTER ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  END IF;
END \$\$;
SELECT 'CREATE DATABASE $PG_DB OWNER $PG_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PG_DB') \gexec
EOF
}

# pg_ctl on our cluster as the postgres user. setsid: the server must not be in
# the caller's process group (a Ctrl-C there must not reach it); 9>&-: nor may it
# inherit our lock fd (see take_lock); cd /: postgres may not read the cwd.
pg_ctl_cluster() {
  local ver=$1
  shift
  (cd / && setsid -w runuser -u postgres -- "/usr/lib/postgresql/$ver/bin/pg_ctl" \
    -D "$(pg_cluster_field "$ver" 6)" "$@" 9>&-)
}

pg_start() {
  local ver=$1
  # /var/run/postgresql holds the Unix socket; it may vanish on reboot (tmpfs).
  install -d -o postgres -g postgres -m 2775 /var/run/postgresql
  pg_ctl_cluster "$ver" -o "-c config_file=/etc/postgresql/$ver/$PG_CLUSTER/postgresql.conf" \
    -l "$(pg_cluster_field "$ver" 7)" -w -t "$READY_TIMEOUT" start >/dev/null
}

pg_up() {
  local t0=$EPOCHREALTIME ver status how=reused log
  [[ -z $(pg_missing_packages) ]] || apt_install postgresql
  ver=$(pg_version)
  [[ -n $ver ]] || die "no PostgreSQL server found after installing"

  status=$(pg_cluster_field "$ver" 4)
  if [[ -z $status ]]; then
    say "creating cluster $ver/$PG_CLUSTER"
    # C.UTF-8 always exists on Debian; without --locale an unset LANG gives SQL_ASCII.
    pg_createcluster -q --start-conf=manual --locale=C.UTF-8 -p "$PG_PORT" "$ver" "$PG_CLUSTER" -- --no-sync >/dev/null ||
      die "pg_createcluster failed"
    status=down
  fi
  log=$(pg_cluster_field "$ver" 7)
  ln -sfn "$log" "$LOG_DIR/pg-$PG_PORT.log"

  if pg_configure "$ver" && [[ $status == online ]]; then
    say "settings changed; restarting"
    pg_ctl_cluster "$ver" -m fast -w stop >/dev/null || die_with_log "$log" "stop for restart failed"
    status=down
    how=restarted
  fi

  if [[ $status != online ]]; then
    if port_open "$PG_PORT"; then
      # Something else holds the port; fine if it already serves our database.
      pg_healthy && {
        say "ready at $(pg_url) (a server not started by us already listens; reused, $(elapsed "$t0"))"
        return 0
      }
      die "port $PG_PORT is taken by another server; set STEPFOLD_PG_PORT to a free port"
    fi
    pg_start "$ver" || die_with_log "$log" "pg_ctl start failed"
    [[ $how == restarted ]] || how=started
  fi

  pg_healthy || pg_create_role || die_with_log "$log" "could not create role/database $PG_USER"
  wait_until pg_healthy || die_with_log "$log" "not accepting $(pg_url) after ${READY_TIMEOUT}s"
  say "ready at $(pg_url) (cluster $ver/$PG_CLUSTER, $how, $(elapsed "$t0"))"
}

pg_stop() {
  local ver
  ver=$(pg_version)
  if [[ -z $ver || $(pg_cluster_field "$ver" 4) != online ]]; then
    say_done "not running"
    return 0
  fi
  # -m fast: disconnect clients and stop now, like a server going away would.
  pg_ctl_cluster "$ver" -m fast -w stop >/dev/null || die "pg_ctl stop failed"
  say_done "stopped"
}

# pg_dropcluster --stop: the server, its data directory, its configuration and its log.
pg_drop() {
  local ver
  ver=$(pg_version)
  if [[ -n $ver && -n $(pg_cluster_field "$ver" 4) ]]; then
    pg_dropcluster --stop "$ver" "$PG_CLUSTER" || die "pg_dropcluster $ver $PG_CLUSTER failed"
  fi
  rm -f "$LOG_DIR/pg-$PG_PORT.log"
  say_done "dropped cluster $PG_CLUSTER"
}

pg_status() {
  local ver
  ver=$(pg_version)
  if pg_healthy; then
    echo "up    $(pg_url)  (cluster $ver/$PG_CLUSTER)"
  else
    echo "down  $(pg_url)"
    return 1
  fi
}

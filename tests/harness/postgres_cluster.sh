#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the history tests: initdb and pg_ctl as
# the postgres user (PostgreSQL refuses to run as root) in a temporary
# directory, listening only on a Unix socket in that directory, so that
# several checkouts on one machine each have their own.
#   postgres_cluster.sh start STATE_DIR   writes STATE_DIR/socket_dir
#   postgres_cluster.sh stop STATE_DIR
# Roles: postgres (trust, the tests' superuser) and perfgate_password, which
# must give its password (the wrong-password test).
set -euo pipefail

action=${1:?start or stop}
state=${2:?state directory}
mkdir -p "$state"

bindir=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -n 1)
if [ -z "$bindir" ] && command -v pg_ctl > /dev/null; then bindir=$(dirname "$(command -v pg_ctl)"); fi
if [ -z "$bindir" ]; then
  echo "postgres_cluster: no PostgreSQL server installed (ci/install-deps.sh installs postgresql)" >&2
  exit 1
fi

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

stop() {
  [ -f "$state/socket_dir" ] || return 0
  local dir
  dir=$(cat "$state/socket_dir")
  rm -f "$state/socket_dir"
  if [ -d "$dir/data" ]; then as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop > /dev/null 2>&1 || true; fi
  rm -rf "$dir"
}

case "$action" in
  start)
    stop
    dir=$(mktemp -d /tmp/perfgate-postgres.XXXXXX)
    chmod 755 "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
    as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust --no-sync --no-instructions > "$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    # scram for the password role first: pg_hba.conf takes the first match.
    printf 'local all perfgate_password scram-sha-256\nlocal all all trust\n' > "$dir/data/pg_hba.conf"
    # Durability is not what these tests measure; fsync off keeps them fast on a busy disk.
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses='' -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start > /dev/null || { cat "$dir/server.log" >&2; exit 1; }
    "$bindir/psql" -q -h "$dir" -U postgres -d postgres -v ON_ERROR_STOP=1 \
      -c "CREATE ROLE perfgate_password LOGIN SUPERUSER PASSWORD 'right-password'" > /dev/null
    echo "$dir" > "$state/socket_dir"
    echo "postgres_cluster: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on $dir"
    ;;
  stop) stop ;;
  *)
    echo "postgres_cluster: start or stop, not $action" >&2
    exit 2
    ;;
esac

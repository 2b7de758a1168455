#!/usr/bin/env bash
# A streaming read replica of the local PostgreSQL test server (127.0.0.1:5432) on 127.0.0.1:5433,
# for test/replication. It applies the primary's commits 1.5 s late (recovery_min_apply_delay), so
# a read that reaches it cannot see a row written just before: the tests tell replica reads from
# primary reads by that lag. It replicates the whole cluster (every database of the primary).
#
# Idempotent: a running replica is reused. Otherwise a fresh base backup is taken (a replica left
# stopped may have missed WAL the primary no longer keeps). The primary gets one pg_hba.conf line
# (replication from 127.0.0.1, trust) and a configuration reload, once.
# Environment: QL_PG_REPLICA_PORT (5433), QL_PG_REPLICA_DIR (/var/lib/postgresql/querylib-replica),
# QL_PG_REPLICA_DELAY (1500ms).
set -euo pipefail

primary_port=5432
port="${QL_PG_REPLICA_PORT:-5433}"
dir="${QL_PG_REPLICA_DIR:-/var/lib/postgresql/querylib-replica}"
delay="${QL_PG_REPLICA_DELAY:-1500ms}"

# Debian keeps pg_ctl and postgres out of PATH; take the binaries of the primary's version.
bindir="$(pg_config --bindir 2>/dev/null || true)"
if [ ! -x "$bindir/postgres" ]; then bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"; fi
[ -x "$bindir/postgres" ] || { echo "pg-replica: no PostgreSQL server binaries found" >&2; exit 1; }

# The server refuses to run as root: act as the postgres OS user when we are root.
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
primary() { psql -h 127.0.0.1 -p "$primary_port" -U postgres -d postgres -Atqc "$1"; }
replica_in_recovery() { [ "$(psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atqc 'select pg_is_in_recovery()' 2>/dev/null)" = t ]; }

if replica_in_recovery; then echo "pg-replica: reusing the replica on 127.0.0.1:$port"; exit 0; fi
if pg_isready -h 127.0.0.1 -p "$port" >/dev/null 2>&1; then
  echo "pg-replica: port $port answers but is not a replica in recovery; stop it or set QL_PG_REPLICA_PORT" >&2
  exit 1
fi
pg_isready -h 127.0.0.1 -p "$primary_port" >/dev/null || { echo "pg-replica: the primary on 127.0.0.1:$primary_port is not up" >&2; exit 1; }

wal_level="$(primary 'show wal_level')"
if [ "$wal_level" = minimal ] || [ "$(primary 'show max_wal_senders')" = 0 ]; then
  echo "pg-replica: the primary needs wal_level=replica and max_wal_senders > 0 (a restart)" >&2
  exit 1
fi

# pg_hba's "all" does not cover replication connections: they need a line of their own.
hba="$(primary 'show hba_file')"
if ! grep -Eq '^[[:space:]]*host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$hba"; then
  printf '\n# QueryLib tests: the local read replica (.ci/pg-replica.sh)\nhost replication all 127.0.0.1/32 trust\n' >> "$hba"
  primary 'select pg_reload_conf()' >/dev/null
  sleep 1
fi

# A leftover replica that does not answer: stop it if it still runs, then start afresh.
if [ -f "$dir/postmaster.pid" ]; then as_postgres "$bindir/pg_ctl" -D "$dir" -m immediate stop >/dev/null 2>&1 || true; fi
rm -rf "$dir"
parent="$(dirname "$dir")"
mkdir -p "$parent"
if [ "$(id -u)" = 0 ]; then chown postgres: "$parent"; fi

as_postgres pg_basebackup -h 127.0.0.1 -p "$primary_port" -U postgres -D "$dir" -R -X stream -c fast --no-sync

# Settings a hot standby must not set below the primary's, and the primary's locale and time
# settings, so the replica answers exactly as the primary does.
{
  echo "port = $port"
  echo "listen_addresses = '127.0.0.1'"
  echo "unix_socket_directories = ''"
  echo "hot_standby = on"
  echo "recovery_min_apply_delay = '$delay'"
  echo "shared_buffers = 32MB"
  # The replica is rebuilt from a base backup whenever it is not running: durability buys nothing.
  echo "fsync = off"
  for setting in max_connections max_worker_processes max_prepared_transactions max_locks_per_transaction max_wal_senders \
    timezone datestyle intervalstyle lc_messages lc_monetary lc_numeric lc_time default_text_search_config; do
    echo "$setting = '$(primary "show $setting")'"
  done
} | as_postgres tee "$dir/postgresql.conf" >/dev/null
printf 'host all all 127.0.0.1/32 trust\n' | as_postgres tee "$dir/pg_hba.conf" >/dev/null
: | as_postgres tee "$dir/pg_ident.conf" >/dev/null

as_postgres "$bindir/pg_ctl" -D "$dir" -l "$dir/replica.log" -w -t 60 start >/dev/null
for _ in $(seq 1 60); do
  if replica_in_recovery; then echo "pg-replica: replica up on 127.0.0.1:$port (apply delay $delay)"; exit 0; fi
  sleep 1
done
echo "pg-replica: the replica did not come up; see $dir/replica.log" >&2
exit 1

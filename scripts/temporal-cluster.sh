#!/usr/bin/env bash
# A self-hosted Temporal cluster on this machine, for Rewind's own checks against a real cluster
# (not the dev server): the Temporal server and temporal-sql-tool built from the Go module proxy
# at a pinned version, PostgreSQL on loopback holding the history and visibility databases
# (schemas loaded by temporal-sql-tool), and the four services — frontend, history, matching,
# worker — each a process of its own, over several history shards. `npm run test:cluster` runs
# `test`; docs/self-hosted.md follows the same steps for a platform team.
#
#   scripts/temporal-cluster.sh build      build the server and temporal-sql-tool (cached)
#   scripts/temporal-cluster.sh start      build, start PostgreSQL, load the schemas, start the services
#   scripts/temporal-cluster.sh restart    stop the four services and start them again (the database stays)
#   scripts/temporal-cluster.sh stop       stop the services and PostgreSQL (the state stays)
#   scripts/temporal-cluster.sh reset      stop, and delete the state
#   scripts/temporal-cluster.sh env        the TEMPORAL_* settings of the running cluster
#   scripts/temporal-cluster.sh status     which processes run
#   scripts/temporal-cluster.sh test       a fresh cluster, the cluster checks against it, then stop
#
# Settings (environment): REWIND_CLUSTER_DIR (default .rewind/cluster: builds, state, logs),
# REWIND_CLUSTER_PORT (the frontend's gRPC port, default 17233; the other ports follow from it),
# REWIND_CLUSTER_SHARDS (default 4), REWIND_CLUSTER_LOG_LEVEL (default warn), GOTOOLCHAIN (the
# server needs Go 1.26.10 or newer: with an older `go` and no GOTOOLCHAIN, go1.27.3 is fetched).
# Go's module and build caches live under .rewind/go/, reused by every build. Every wait names
# what it waits for, and says so when it gives up. The cluster starts with no namespace but
# `temporal-system`: `rewind setup` creates the one `env` names.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TEMPORAL_VERSION=v1.32.2
GO_NEEDED=1.26.10   # the `go` line of the server's go.mod at that version
GO_TOOLCHAIN=go1.27.3
DIR=${REWIND_CLUSTER_DIR:-$ROOT/.rewind/cluster}
BIN=$DIR/temporal-$TEMPORAL_VERSION/bin
STATE=$DIR/state
LOGS=$STATE/logs
GO_CACHE_DIR=$ROOT/.rewind/go
SERVICES=(frontend history matching worker)

PORT=${REWIND_CLUSTER_PORT:-17233}
SHARDS=${REWIND_CLUSTER_SHARDS:-4}
LOG_LEVEL=${REWIND_CLUSTER_LOG_LEVEL:-warn}
SQL_PORT=$((PORT - 1801)) # 15432 by default
NAMESPACE=rewind

say() { echo "temporal-cluster: $*" >&2; }
die() {
  say "$*"
  exit 1
}

# Waits until a command succeeds, polling twice a second, for at most SECONDS; gives up naming
# what it waited for. A pid given with --pid must stay alive meanwhile (its log is shown if not).
# Usage: wait_for SECONDS "what" [--pid PID LOG] command…
wait_for() {
  local seconds=$1 what=$2 pid="" log=""
  shift 2
  if [ "$1" = --pid ]; then
    pid=$2 log=$3
    shift 3
  fi
  local deadline=$((SECONDS + seconds))
  say "waiting for $what (at most ${seconds} s)"
  until "$@" >/dev/null 2>&1; do
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      say "gave up waiting for $what: its process ($pid) exited; the end of $log:"
      tail -n 20 "$log" >&2 || true
      return 1
    fi
    if ((SECONDS >= deadline)); then
      say "timed out after ${seconds} s waiting for $what"
      [ -n "$log" ] && tail -n 20 "$log" >&2
      return 1
    fi
    sleep 0.5
  done
}

# Ports: the frontend's gRPC port is PORT; each service has a gRPC, a membership and a metrics port.
service_port() {
  case $1 in
  frontend) echo $((PORT)) ;;
  history) echo $((PORT + 1)) ;;
  matching) echo $((PORT + 2)) ;;
  worker) echo $((PORT + 6)) ;;
  esac
}
membership_port() { echo $(($(service_port "$1") - 300)); }
metrics_port() {
  case $1 in
  frontend) echo $((PORT + 1800)) ;;
  history) echo $((PORT + 1801)) ;;
  matching) echo $((PORT + 1802)) ;;
  worker) echo $((PORT + 1803)) ;;
  esac
}
http_port() { echo $((PORT + 10)); }

listening() { (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ---------------------------------------------------------------------------------------------
# Build: `go install` of the two commands at the pinned version, into a folder of that version.

build() {
  if [ -x "$BIN/temporal-server" ] && [ -x "$BIN/temporal-sql-tool" ]; then
    say "temporal-server and temporal-sql-tool $TEMPORAL_VERSION: built already ($BIN)"
    return
  fi
  command -v go >/dev/null || die "go is not installed: it builds the Temporal server (Go $GO_NEEDED or newer, or one that fetches it through GOTOOLCHAIN)"
  mkdir -p "$BIN" "$GO_CACHE_DIR/mod" "$GO_CACHE_DIR/build"
  say "building temporal-server and temporal-sql-tool $TEMPORAL_VERSION from the Go module proxy (minutes the first time; Go caches in $GO_CACHE_DIR)"
  local started=$SECONDS
  (
    # The server's go.mod needs Go $GO_NEEDED: an older local Go fetches a newer toolchain.
    local have
    have=$(go env GOVERSION | sed 's/^go//')
    if [ -z "${GOTOOLCHAIN:-}" ] || [ "$GOTOOLCHAIN" = local ]; then
      if [ "$(printf '%s\n%s\n' "$GO_NEEDED" "$have" | sort -V | head -n 1)" != "$GO_NEEDED" ]; then
        export GOTOOLCHAIN=$GO_TOOLCHAIN
        say "go $have is older than $GO_NEEDED: GOTOOLCHAIN=$GOTOOLCHAIN"
      fi
    fi
    export GOMODCACHE=$GO_CACHE_DIR/mod GOCACHE=$GO_CACHE_DIR/build GOBIN=$BIN GOFLAGS=-buildvcs=false
    cd "$DIR"
    go install "go.temporal.io/server/cmd/server@$TEMPORAL_VERSION" "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_VERSION"
  )
  mv "$BIN/server" "$BIN/temporal-server"
  mv "$BIN/sql" "$BIN/temporal-sql-tool"
  say "built in $((SECONDS - started)) s: $BIN/temporal-server, $BIN/temporal-sql-tool"
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL on loopback, its files under the state folder. It refuses to run as root, so as
# root it runs as the `postgres` user.

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

sql_password() { cat "$STATE/sql-password"; }

psql_admin() {
  PGPASSWORD=$(cat "$STATE/postgres-password") psql -h 127.0.0.1 -p "$SQL_PORT" -U postgres -v ON_ERROR_STOP=1 -qtA "$@"
}

start_postgres() {
  local data=$STATE/postgres/data
  if [ ! -f "$data/PG_VERSION" ]; then
    mkdir -p "$STATE/postgres"
    head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$STATE/postgres-password"
    head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$STATE/sql-password"
    chmod 600 "$STATE/postgres-password" "$STATE/sql-password"
    cp "$STATE/postgres-password" "$STATE/postgres/pwfile"
    [ "$(id -u)" = 0 ] && chown -R postgres "$STATE/postgres"
    say "initdb: a new PostgreSQL cluster in $data"
    as_postgres initdb -D "$data" -U postgres --pwfile="$STATE/postgres/pwfile" --auth-host=scram-sha-256 \
      --auth-local=peer -E UTF8 >"$LOGS/initdb.log" 2>&1 || {
      tail -n 20 "$LOGS/initdb.log" >&2
      die "initdb failed (log: $LOGS/initdb.log)"
    }
    rm -f "$STATE/postgres/pwfile"
  fi
  listening "$SQL_PORT" && die "port $SQL_PORT (PostgreSQL) is taken: stop what listens there, or set REWIND_CLUSTER_PORT"
  # Loopback only, no Unix socket (its path could be too long under a deep folder).
  as_postgres pg_ctl -D "$data" -l "$STATE/postgres/postgres.log" \
    -o "-c listen_addresses=127.0.0.1 -p $SQL_PORT -c unix_socket_directories= -c max_connections=200" \
    start >/dev/null
  wait_for 60 "PostgreSQL on 127.0.0.1:$SQL_PORT" psql_admin -c 'select 1' ||
    die "PostgreSQL did not start (log: $STATE/postgres/postgres.log)"
}

stop_postgres() {
  local data=$STATE/postgres/data
  [ -f "$data/postmaster.pid" ] || return 0
  say "stopping PostgreSQL"
  as_postgres pg_ctl -D "$data" -m fast -t 60 stop >/dev/null || say "pg_ctl stop failed (log: $STATE/postgres/postgres.log)"
}

sql_tool() {
  "$BIN/temporal-sql-tool" --plugin postgres12 --ep 127.0.0.1 -p "$SQL_PORT" -u temporal --pw "$(sql_password)" "$@"
}

# The role, the two databases and their schemas; what is there already is kept, and update-schema
# brings an existing schema to this version's.
load_schemas() {
  if [ -z "$(psql_admin -c "select 1 from pg_roles where rolname = 'temporal'")" ]; then
    psql_admin -c "create role temporal login createdb password '$(sql_password)'"
  fi
  local db schema
  for db in temporal temporal_visibility; do
    schema=$([ $db = temporal ] && echo postgresql/v12/temporal || echo postgresql/v12/visibility)
    if [ -z "$(psql_admin -c "select 1 from pg_database where datname = '$db'")" ]; then
      say "temporal-sql-tool: creating database $db and loading its schema"
      sql_tool --db $db create-database >>"$LOGS/sql-tool.log" 2>&1
      sql_tool --db $db setup-schema -v 0.0 >>"$LOGS/sql-tool.log" 2>&1
    fi
    sql_tool --db $db update-schema --schema-name $schema >>"$LOGS/sql-tool.log" 2>&1 || {
      tail -n 20 "$LOGS/sql-tool.log" >&2
      die "temporal-sql-tool update-schema of $db failed (log: $LOGS/sql-tool.log)"
    }
  done
  say "schemas loaded: temporal and temporal_visibility at $TEMPORAL_VERSION's versions"
}

# ---------------------------------------------------------------------------------------------
# The four services, each a process started from the one templated config file.

service_env() {
  local service=$1
  echo "TEMPORAL_LOG_LEVEL=$LOG_LEVEL TEMPORAL_HISTORY_SHARDS=$SHARDS TEMPORAL_SQL_PORT=$SQL_PORT"
  echo "TEMPORAL_METRICS_PORT=$(metrics_port "$service") TEMPORAL_DYNAMIC_CONFIG=$ROOT/scripts/temporal-cluster-dynamic.yaml"
  local s
  for s in "${SERVICES[@]}"; do
    local upper
    upper=$(echo "$s" | tr '[:lower:]' '[:upper:]')
    echo "TEMPORAL_${upper}_PORT=$(service_port "$s") TEMPORAL_${upper}_MEMBERSHIP_PORT=$(membership_port "$s")"
  done
  echo "TEMPORAL_FRONTEND_HTTP_PORT=$(http_port)"
}

start_service() {
  local service=$1 log=$LOGS/$1.log
  local port
  port=$(service_port "$service")
  listening "$port" && die "port $port ($service) is taken: stop what listens there, or set REWIND_CLUSTER_PORT"
  # shellcheck disable=SC2046 # the settings are words on purpose
  env $(service_env "$service") TEMPORAL_SQL_PASSWORD="$(sql_password)" \
    "$BIN/temporal-server" --config-file "$ROOT/scripts/temporal-cluster.yaml" --allow-no-auth \
    start --service "$service" >>"$log" 2>&1 &
  echo $! >"$STATE/$service.pid"
}

service_pid() { cat "$STATE/$1.pid" 2>/dev/null || true; }

frontend_ready() {
  "$TEMPORAL_CLI" operator cluster health --address "127.0.0.1:$PORT" | grep -q SERVING
}

# A namespace answers through the frontend once history owns its shards and matching is in the ring.
namespace_ready() {
  "$TEMPORAL_CLI" operator namespace describe --address "127.0.0.1:$PORT" -n temporal-system >/dev/null
}

wait_for_service() {
  wait_for 90 "the $1 service on 127.0.0.1:$(service_port "$1")" \
    --pid "$(service_pid "$1")" "$LOGS/$1.log" listening "$(service_port "$1")"
}

start_services() {
  local service
  # Each service writes the cluster's metadata into a new database when it starts; started at
  # once, two of them race to insert it and one exits. The first alone, then the others.
  start_service frontend
  wait_for_service frontend || return 1
  for service in "${SERVICES[@]:1}"; do start_service "$service"; done
  for service in "${SERVICES[@]:1}"; do wait_for_service "$service" || return 1; done
  wait_for 90 "the frontend's health check to answer SERVING" \
    --pid "$(service_pid frontend)" "$LOGS/frontend.log" frontend_ready || return 1
  wait_for 90 "the frontend to describe the temporal-system namespace" \
    --pid "$(service_pid history)" "$LOGS/history.log" namespace_ready || return 1
  say "cluster up: frontend 127.0.0.1:$PORT, $SHARDS history shards, services as processes $(for s in "${SERVICES[@]}"; do printf '%s:%s ' "$s" "$(service_pid "$s")"; done)"
}

stop_services() {
  local service pid
  for service in "${SERVICES[@]}"; do
    pid=$(service_pid "$service")
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
  done
  for service in "${SERVICES[@]}"; do
    pid=$(service_pid "$service")
    [ -n "$pid" ] || continue
    if ! wait_for 60 "the $service service ($pid) to stop" bash -c "! kill -0 $pid"; then
      say "killing the $service service ($pid)"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$STATE/$service.pid"
  done
}

find_temporal_cli() {
  TEMPORAL_CLI=$(cd "$ROOT" && npx node --disable-warning=ExperimentalWarning src/dev/install-temporal-cli.ts)
}

cluster_env() {
  echo "TEMPORAL_ADDRESS=127.0.0.1:$PORT"
  echo "TEMPORAL_NAMESPACE=$NAMESPACE"
}

# ---------------------------------------------------------------------------------------------

start() {
  build
  find_temporal_cli
  mkdir -p "$LOGS"
  start_postgres
  load_schemas
  start_services || {
    stop
    die "the cluster did not start (logs: $LOGS)"
  }
  cluster_env
}

stop() {
  stop_services
  stop_postgres
}

# The cluster checks: a fresh cluster, then the cluster's test files (vitest.cluster.config.ts),
# which read the cluster's settings from .rewind/cluster-checks.json.
run_tests() {
  stop_services
  stop_postgres
  rm -rf "$STATE"
  mkdir -p "$STATE"
  local started=$SECONDS status=0
  trap 'stop' EXIT
  start >/dev/null
  cat >"$ROOT/.rewind/cluster-checks.json" <<EOF
{ "address": "127.0.0.1:$PORT", "namespace": "$NAMESPACE", "restartCommand": ["bash", "$ROOT/scripts/temporal-cluster.sh", "restart"], "logs": "$LOGS" }
EOF
  say "cluster ready in $((SECONDS - started)) s; running the cluster checks"
  (cd "$ROOT" && npx vitest run --config vitest.cluster.config.ts "$@") || status=$?
  say "cluster checks $([ $status = 0 ] && echo passed || echo FAILED) ($((SECONDS - started)) s with the cluster's start)"
  return $status
}

command=${1:-}
shift || true
case $command in
build) build ;;
start)
  mkdir -p "$STATE"
  start
  ;;
restart)
  find_temporal_cli
  say "restarting the services (the database stays)"
  stop_services
  start_services
  ;;
stop) stop ;;
reset)
  stop
  rm -rf "$STATE"
  say "state deleted ($STATE)"
  ;;
env) cluster_env ;;
status)
  for service in "${SERVICES[@]}"; do
    pid=$(service_pid "$service")
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$service: running ($pid)"; else echo "$service: stopped"; fi
  done
  if [ -f "$STATE/postgres/data/postmaster.pid" ]; then echo "postgres: running"; else echo "postgres: stopped"; fi
  ;;
test) run_tests "$@" ;;
*)
  sed -n '2,/^set -euo/p' "$0" | sed 's/^# \{0,1\}//' | grep -v '^set -euo' >&2
  exit 2
  ;;
esac

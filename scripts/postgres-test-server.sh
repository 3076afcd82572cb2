#!/usr/bin/env bash
# A private PostgreSQL server for the fleet tests that share a rollout across processes: a new
# cluster in a folder of its own, run as the `postgres` user (the server refuses to run as
# root), listening on a loopback port only, trusting local connections. Installs the server with
# apt-get when it is missing.
#
# Usage:
#     eval "$(scripts/postgres-test-server.sh start [DIR] [PORT])"   # exports MCUMGR_TEST_POSTGRES
#     scripts/postgres-test-server.sh stop [DIR]
set -euo pipefail
command=${1:-}
dir=${2:-/tmp/mcumgr-test-postgres}
port=${3:-55432}

bindir() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [[ -z "$found" ]]; then
        echo "installing postgresql (apt-get)" >&2
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
        found=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    fi
    echo "$found"
}

# Runs a command as the unprivileged server user (as is when not root).
as_server_user() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$command" in
    start)
        bin=$(bindir)
        if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then useradd --system postgres; fi
        mkdir -p "$dir"
        [[ $(id -u) -eq 0 ]] && chown postgres "$dir"
        if [[ ! -f "$dir/data/PG_VERSION" ]]; then
            as_server_user "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
        fi
        as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200 -c fsync=off" \
            start >&2
        as_server_user "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc \
            "SELECT 1 FROM pg_database WHERE datname = 'mcumgr'" | grep -q 1 \
            || as_server_user "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres mcumgr
        echo "export MCUMGR_TEST_POSTGRES=postgres://postgres@127.0.0.1:$port/mcumgr"
        ;;
    stop)
        bin=$(bindir)
        as_server_user "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
        ;;
    *)
        echo "usage: scripts/postgres-test-server.sh start|stop [DIR] [PORT]" >&2
        exit 64
        ;;
esac

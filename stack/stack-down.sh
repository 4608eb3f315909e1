#!/usr/bin/env bash
# Stops exactly the servers stack-up.sh started (by their pid files); data stays in .stack/.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STACK="${STACK_DIR:-$ROOT/.stack}"

STACK_TAG=stack STACK_LOGS=""
# shellcheck source=stack/stack-lib.sh
source "$ROOT/stack/stack-lib.sh"

# `--cluster` (or STACK_TOPOLOGY=cluster) stops the cluster topology (stack/cluster-down.sh) instead.
if [ "${1:-}" = --cluster ] || [ "${STACK_TOPOLOGY:-single}" = cluster ]; then
  [ "${1:-}" = --cluster ] && shift
  exec bash "$ROOT/stack/cluster-down.sh" "$@"
fi

# `stack-down.sh kafka` stops one service; no argument stops them all, and the cluster's servers
# if it runs too.
[ $# -eq 0 ] && [ -d "$STACK/cluster" ] && bash "$ROOT/stack/cluster-down.sh"
for service in "${@:-kafka clickhouse redis}"; do
  for name in $service; do
    case "$name" in
      kafka) stop kafka "$STACK/kafka/kafka.pid" ;;
      clickhouse) stop clickhouse "$STACK/clickhouse/clickhouse.pid" ;;
      redis) stop redis "$STACK/redis/redis.pid" ;;
      *) printf '[stack] unknown service %s\n' "$name" >&2; exit 2 ;;
    esac
  done
done

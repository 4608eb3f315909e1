#!/usr/bin/env bash
# Stops exactly the cluster servers stack/cluster-up.sh started (by their pid files), all at once so
# that the Kafka brokers shut down together; data stays in .stack/cluster/.
# Reached as `npm run stack:down -- --cluster`; plain `npm run stack:down` stops the cluster too.
# Arguments pick services as for cluster-up.sh; none stops them all.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STACK="${STACK_DIR:-$ROOT/.stack}"
C="$STACK/cluster"

STACK_TAG=cluster STACK_LOGS=""
# shellcheck source=stack/stack-lib.sh
source "$ROOT/stack/stack-lib.sh"

NODES=()
for arg in "${@:-kafka clickhouse zookeeper redis}"; do
  for name in $arg; do
    case "$name" in
      zookeeper | redis | clickhouse[1-4] | kafka[1-3]) NODES+=("$name") ;;
      clickhouse) NODES+=(clickhouse1 clickhouse2 clickhouse3 clickhouse4) ;;
      kafka) NODES+=(kafka1 kafka2 kafka3) ;;
      *) printf '[cluster] unknown service %s\n' "$name" >&2; exit 2 ;;
    esac
  done
done
# Kafka and ClickHouse first, together; ZooKeeper after the ClickHouse servers that use it.
pids=()
for name in "${NODES[@]}"; do
  case "$name" in
    kafka* | clickhouse*) stop "$name" "$C/$name/${name%[0-9]}.pid" & pids+=($!) ;;
  esac
done
[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"
for name in "${NODES[@]}"; do
  case "$name" in
    zookeeper | redis) stop "$name" "$C/$name/$name.pid" ;;
  esac
done
exit 0

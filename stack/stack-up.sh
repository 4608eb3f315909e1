#!/usr/bin/env bash
# Starts Kafka (KRaft, from Maven Central jars), ClickHouse and Redis on loopback, idempotently,
# waits until each answers and prints their addresses. State lives in .stack/ (ignored).
# `stack-up.sh kafka` starts one service (a test's private broker); no argument starts them all.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STACK="${STACK_DIR:-$ROOT/.stack}"
# shellcheck source=stack/stack.env
source "$ROOT/stack/stack.env"
# `--cluster` (or STACK_TOPOLOGY=cluster): ZooKeeper, 2 x 2 ClickHouse and 3 Kafka brokers instead,
# from stack/cluster-up.sh (its own ports, stack/cluster.env, and state, .stack/cluster/).
topology="${STACK_TOPOLOGY:-single}"
args=()
for arg in "$@"; do
  if [ "$arg" = --cluster ]; then topology=cluster; else args+=("$arg"); fi
done
case "$topology" in
  single) ;;
  cluster) exec bash "$ROOT/stack/cluster-up.sh" "${args[@]}" ;;
  *) printf '[stack] ERROR: STACK_TOPOLOGY=%s: single or cluster\n' "$topology" >&2; exit 2 ;;
esac
mkdir -p "$STACK"
SERVICES=" ${*:-kafka clickhouse redis} "
wants() { [[ "$SERVICES" == *" $1 "* ]]; }

STACK_TAG=stack STACK_LOGS="$STACK/*/log"
# shellcheck source=stack/stack-lib.sh
source "$ROOT/stack/stack-lib.sh"

apt_install() {
  command -v apt-get >/dev/null || die "$* missing and apt-get unavailable: install $* yourself"
  [ "$(id -u)" = 0 ] || die "$* missing: run 'sudo apt-get install $*'"
  say "installing $* from Debian"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null || die "cannot install $*"
  fi
}

if wants clickhouse; then command -v clickhouse-server >/dev/null || apt_install clickhouse-server clickhouse-client; fi
if wants redis; then command -v redis-server >/dev/null || apt_install redis-server; fi
if wants kafka; then command -v java >/dev/null || die "java (17+) is needed for Kafka"; fi

# --- Kafka ---------------------------------------------------------------------------------
if wants kafka; then
  kafka_libs
  KDIR="$STACK/kafka"
  mkdir -p "$KDIR/log"
  sed -e "s#@STACK@#$STACK#g" -e "s#@KAFKA_PORT@#$KAFKA_PORT#g" -e "s#@KAFKA_CONTROLLER_PORT@#$KAFKA_CONTROLLER_PORT#g" \
    "$ROOT/stack/kafka-server.properties" >"$KDIR/server.properties"
  KJAVA=(java -Xms256m -Xmx768m -Dkafka.logs.dir="$KDIR/log" -Dlog4j.configuration="file:$ROOT/stack/kafka-log4j.properties" -cp "$KLIBS/*")
  if running "$KDIR/kafka.pid"; then
    say "kafka already running"
  else
    refuse_taken KAFKA_PORT KAFKA_CONTROLLER_PORT
    if [ ! -f "$KDIR/data/meta.properties" ]; then
      "${KJAVA[@]}" kafka.tools.StorageTool format -t "$("${KJAVA[@]}" kafka.tools.StorageTool random-uuid)" \
        -c "$KDIR/server.properties" >"$KDIR/log/format.log" 2>&1 || die "kafka storage format failed: $KDIR/log/format.log"
    fi
    nohup "${KJAVA[@]}" kafka.Kafka "$KDIR/server.properties" >"$KDIR/log/stdout.log" 2>&1 &
    echo $! >"$KDIR/kafka.pid"
    watch_started kafka "$KDIR/kafka.pid" "$KDIR/log/stdout.log" "$KDIR/log/server.log"
  fi
fi

# --- ClickHouse ----------------------------------------------------------------------------
if wants clickhouse; then
  CDIR="$STACK/clickhouse"
  mkdir -p "$CDIR"/{data,tmp,user_files,format_schemas,log}
  sed -e "s#@STACK@#$STACK#g" -e "s#@CH_HTTP_PORT@#$CH_HTTP_PORT#g" -e "s#@CH_TCP_PORT@#$CH_TCP_PORT#g" \
    "$ROOT/stack/clickhouse-config.xml" >"$CDIR/config.xml"
  cp "$ROOT/stack/clickhouse-users.xml" "$CDIR/users.xml"
  if running "$CDIR/clickhouse.pid"; then
    say "clickhouse already running"
  else
    refuse_taken CH_HTTP_PORT CH_TCP_PORT
    nohup clickhouse-server --config-file="$CDIR/config.xml" >"$CDIR/log/stdout.log" 2>&1 &
    echo $! >"$CDIR/clickhouse.pid"
    watch_started clickhouse "$CDIR/clickhouse.pid" "$CDIR/log/stdout.log" "$CDIR/log/clickhouse.err.log"
  fi
fi

# --- Redis ---------------------------------------------------------------------------------
if wants redis; then
  start_redis "$STACK/redis" REDIS_PORT
fi

if wants redis; then
  wait_for redis "redis-cli -p $REDIS_PORT ping | grep -q PONG"
  say "redis       127.0.0.1:$REDIS_PORT      (REDIS_URL=redis://127.0.0.1:$REDIS_PORT)"
fi
if wants clickhouse; then
  wait_for clickhouse "curl -sf http://127.0.0.1:$CH_HTTP_PORT/ping"
  say "clickhouse  http://127.0.0.1:$CH_HTTP_PORT (CLICKHOUSE_URL=http://127.0.0.1:$CH_HTTP_PORT)"
fi
if wants kafka; then
  wait_for kafka "port_open $KAFKA_PORT" 240
  say "kafka       127.0.0.1:$KAFKA_PORT      (KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT)"
fi

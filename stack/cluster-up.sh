#!/usr/bin/env bash
# Starts the cluster topology on loopback, idempotently, from the same packages as the single-server
# stack (stack-up.sh): one ZooKeeper (from the ZooKeeper jars Kafka's Maven resolution brings),
# ClickHouse as 2 shards x 2 replicas (four clickhouse-server processes, cluster `adx`), three KRaft
# Kafka brokers (replication factor 3, min.insync.replicas 2) and one Redis. Waits until each answers
# and prints the addresses. State lives in .stack/cluster/ (or $STACK_DIR/cluster/).
# Reached as `npm run stack:up -- --cluster` or STACK_TOPOLOGY=cluster npm run stack:up.
# Arguments pick services: zookeeper, clickhouse (all four), clickhouse1..4, kafka (all three),
# kafka1..3, redis; none starts them all (a test restarts one killed node with `kafka2`, say).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STACK="${STACK_DIR:-$ROOT/.stack}"
C="$STACK/cluster"
# shellcheck source=stack/cluster.env
source "$ROOT/stack/cluster.env"
mkdir -p "$C"

STACK_TAG=cluster STACK_LOGS="$C/*/log"
# shellcheck source=stack/stack-lib.sh
source "$ROOT/stack/stack-lib.sh"
zk_ok() { (exec 3<>"/dev/tcp/127.0.0.1/$CLUSTER_ZK_PORT" && printf ruok >&3 && grep -q imok <&3); }

# Which nodes: "clickhouse" means all four, "kafka" all three.
NODES=" "
for arg in "${@:-zookeeper clickhouse kafka redis}"; do
  for name in $arg; do
    case "$name" in
      zookeeper | redis | clickhouse[1-4] | kafka[1-3]) NODES+="$name " ;;
      clickhouse) NODES+="clickhouse1 clickhouse2 clickhouse3 clickhouse4 " ;;
      kafka) NODES+="kafka1 kafka2 kafka3 " ;;
      *) die "unknown cluster service $name (zookeeper, clickhouse[1-4], kafka[1-3], redis)" ;;
    esac
  done
done
wants() { [[ "$NODES" == *" $1 "* ]]; }
wants_any() { [[ "$NODES" == *" $1"* ]]; }

if wants_any clickhouse; then command -v clickhouse-server >/dev/null || die "clickhouse-server missing: run 'npm run stack:up' once (it installs it) or apt-get install clickhouse-server"; fi
if wants redis; then command -v redis-server >/dev/null || die "redis-server missing: apt-get install redis-server"; fi

# --- Java jars: Kafka's, which include ZooKeeper's -------------------------------------------
if wants zookeeper || wants_any kafka; then
  command -v java >/dev/null || die "java (17+) is needed for Kafka and ZooKeeper"
  kafka_libs
  compgen -G "$KLIBS/zookeeper-[0-9]*.jar" >/dev/null || die "no ZooKeeper jar among $KLIBS"
fi

# --- ZooKeeper -----------------------------------------------------------------------------
if wants zookeeper; then
  ZDIR="$C/zookeeper"
  mkdir -p "$ZDIR/data" "$ZDIR/log"
  sed -e "s#@DATA@#$ZDIR/data#g" -e "s#@PORT@#$CLUSTER_ZK_PORT#g" "$ROOT/stack/zookeeper.cfg" >"$ZDIR/zoo.cfg"
  if running "$ZDIR/zookeeper.pid"; then
    say "zookeeper already running"
  else
    refuse_taken CLUSTER_ZK_PORT
    nohup java -Xms64m -Xmx${CLUSTER_ZK_HEAP_MB:-128}m -Dkafka.logs.dir="$ZDIR/log" \
      -Dlog4j.configuration="file:$ROOT/stack/kafka-log4j.properties" -cp "$KLIBS/*" \
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$ZDIR/zoo.cfg" >"$ZDIR/log/stdout.log" 2>&1 &
    echo $! >"$ZDIR/zookeeper.pid"
    watch_started zookeeper "$ZDIR/zookeeper.pid" "$ZDIR/log/stdout.log"
  fi
  # Before the ClickHouse servers, whose replication and DDL queue need it from their start.
  wait_for zookeeper zk_ok 240
  say "zookeeper   127.0.0.1:$CLUSTER_ZK_PORT"
fi

# --- ClickHouse: nodes 1-2 are shard 01, nodes 3-4 shard 02 ---------------------------------
for n in 1 2 3 4; do
  wants "clickhouse$n" || continue
  NDIR="$C/clickhouse$n"
  mkdir -p "$NDIR"/{data,tmp,user_files,format_schemas,log,config.d}
  http="CLUSTER_CH${n}_HTTP_PORT" tcp="CLUSTER_CH${n}_TCP_PORT" inter="CLUSTER_CH${n}_INTERSERVER_PORT"
  sed -e "s#@STACK@/clickhouse#$NDIR#g" -e "s#@CH_HTTP_PORT@#${!http}#g" -e "s#@CH_TCP_PORT@#${!tcp}#g" \
    "$ROOT/stack/clickhouse-config.xml" >"$NDIR/config.xml"
  sed -e "s#@INTERSERVER_PORT@#${!inter}#g" -e "s#@ZK_PORT@#$CLUSTER_ZK_PORT#g" \
    -e "s#@CH1_TCP_PORT@#$CLUSTER_CH1_TCP_PORT#g" -e "s#@CH2_TCP_PORT@#$CLUSTER_CH2_TCP_PORT#g" \
    -e "s#@CH3_TCP_PORT@#$CLUSTER_CH3_TCP_PORT#g" -e "s#@CH4_TCP_PORT@#$CLUSTER_CH4_TCP_PORT#g" \
    -e "s#@SHARD@#0$(((n + 1) / 2))#g" -e "s#@REPLICA@#node$n#g" \
    "$ROOT/stack/clickhouse-cluster.xml" >"$NDIR/config.d/cluster.xml"
  cp "$ROOT/stack/clickhouse-users.xml" "$NDIR/users.xml"
  if running "$NDIR/clickhouse.pid"; then
    say "clickhouse$n already running"
  else
    refuse_taken "$http" "$tcp" "$inter"
    nohup clickhouse-server --config-file="$NDIR/config.xml" >"$NDIR/log/stdout.log" 2>&1 &
    echo $! >"$NDIR/clickhouse.pid"
    watch_started "clickhouse$n" "$NDIR/clickhouse.pid" "$NDIR/log/stdout.log" "$NDIR/log/clickhouse.err.log"
  fi
done

# --- Kafka: three KRaft nodes, each broker and controller -------------------------------------
if wants_any kafka; then
  VOTERS="1@127.0.0.1:$CLUSTER_KAFKA1_CONTROLLER_PORT,2@127.0.0.1:$CLUSTER_KAFKA2_CONTROLLER_PORT,3@127.0.0.1:$CLUSTER_KAFKA3_CONTROLLER_PORT"
  # One cluster id for the three, kept so that a node restarted later joins the same cluster.
  [ -s "$C/kafka-cluster-id" ] || java -cp "$KLIBS/*" kafka.tools.StorageTool random-uuid 2>/dev/null >"$C/kafka-cluster-id"
  CLUSTER_ID="$(cat "$C/kafka-cluster-id")"
fi
for n in 1 2 3; do
  wants "kafka$n" || continue
  KDIR="$C/kafka$n"
  mkdir -p "$KDIR/log"
  port="CLUSTER_KAFKA${n}_PORT" cport="CLUSTER_KAFKA${n}_CONTROLLER_PORT"
  sed -e "s#@NODE_ID@#$n#g" -e "s#@VOTERS@#$VOTERS#g" -e "s#@PORT@#${!port}#g" -e "s#@CONTROLLER_PORT@#${!cport}#g" \
    -e "s#@DATA@#$KDIR/data#g" "$ROOT/stack/kafka-cluster.properties" >"$KDIR/server.properties"
  # 256-384 MB of heap a broker (the single broker has 768): three fit beside four ClickHouse servers.
  KJAVA=(java -Xms128m "-Xmx${CLUSTER_KAFKA_HEAP_MB:-320}m" -Dkafka.logs.dir="$KDIR/log"
    -Dlog4j.configuration="file:$ROOT/stack/kafka-cluster-log4j.properties" -cp "$KLIBS/*")
  if running "$KDIR/kafka.pid"; then
    say "kafka$n already running"
  else
    refuse_taken "$port" "$cport"
    if [ ! -f "$KDIR/data/meta.properties" ]; then
      "${KJAVA[@]}" kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$KDIR/server.properties" \
        >"$KDIR/log/format.log" 2>&1 || die "kafka$n storage format failed: $KDIR/log/format.log"
    fi
    # A fresh log, so that the readiness check below reads this life's "started" line only.
    [ ! -f "$KDIR/log/server.log" ] || mv "$KDIR/log/server.log" "$KDIR/log/server.log.prev"
    nohup "${KJAVA[@]}" kafka.Kafka "$KDIR/server.properties" >"$KDIR/log/stdout.log" 2>&1 &
    echo $! >"$KDIR/kafka.pid"
    watch_started "kafka$n" "$KDIR/kafka.pid" "$KDIR/log/stdout.log" "$KDIR/log/server.log"
  fi
done

# --- Redis: one, as in the single-server stack ------------------------------------------------
if wants redis; then
  start_redis "$C/redis" CLUSTER_REDIS_PORT
fi

# --- Readiness ---------------------------------------------------------------------------------
if wants redis; then
  wait_for redis "redis-cli -p $CLUSTER_REDIS_PORT ping | grep -q PONG"
  say "redis       127.0.0.1:$CLUSTER_REDIS_PORT      (REDIS_URL=redis://127.0.0.1:$CLUSTER_REDIS_PORT)"
fi
urls=()
for n in 1 2 3 4; do
  wants "clickhouse$n" || continue
  http="CLUSTER_CH${n}_HTTP_PORT"
  wait_for "clickhouse$n" "curl -sf http://127.0.0.1:${!http}/ping" 240
  urls+=("http://127.0.0.1:${!http}")
  say "clickhouse$n shard 0$(((n + 1) / 2)) replica node$n  http://127.0.0.1:${!http}"
done
brokers=()
for n in 1 2 3; do
  wants "kafka$n" || continue
  port="CLUSTER_KAFKA${n}_PORT"
  # The port answers before the broker has joined the quorum; "started" is logged once it is
  # registered and unfenced, ready for partitions (this waits ~20 s more on a loaded machine).
  wait_for "kafka$n" "port_open ${!port} && grep -q 'Kafka Server started' $C/kafka$n/log/server.log" 360
  brokers+=("127.0.0.1:${!port}")
done
if [ ${#brokers[@]} -gt 0 ]; then
  say "kafka       (KAFKA_BROKERS=$(IFS=,; echo "${brokers[*]}"))"
fi

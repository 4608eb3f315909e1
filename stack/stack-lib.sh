# Shell helpers of the stack scripts (stack-up.sh, stack-down.sh, cluster-up.sh, cluster-down.sh),
# sourced by each after it sets STACK_TAG (the prefix of its messages) and STACK_LOGS (where a
# server that did not answer left its log) and ROOT.
# shellcheck shell=bash

say() { printf '[%s] %s\n' "$STACK_TAG" "$*"; }
die() { printf '[%s] ERROR: %s\n' "$STACK_TAG" "$*" >&2; exit 1; }
# alive PID: the process exists and has not exited. A server killed with SIGKILL stays a zombie until
# its parent reaps it (a daemon's parent is PID 1, which in a container may take its time or never
# do it), and kill -0 still answers for a zombie: taken for running, it was never started again.
alive() { kill -0 "$1" 2>/dev/null && [ "$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)" != Z ]; }
running() { [ -f "$1" ] && alive "$(cat "$1")"; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Before starting a server: a port already answering belongs to a process this stack did not
# start (its pid file names none running), and attaching to it would test against a stranger.
# Asked for 5 s before giving up: a server of this stack killed with SIGKILL reads as exited as soon
# as its main thread is a zombie, while its other threads (ClickHouse has dozens) may still be
# closing the files they share, its listening socket among them; a restart right after the kill
# found the port answering and refused.
refuse_taken() {
  local var
  for var in "$@"; do
    for _ in $(seq 10); do
      port_open "${!var}" || continue 2
      sleep 0.5
    done
    die "$var=${!var} is held by a process stack:up did not start: stop it or set $var to a free port"
  done
}

# start_redis DIR PORT_VAR: one Redis without persistence on loopback, its pid, log and data in DIR; a
# running one (by its pid file) is left alone.
start_redis() {
  local dir=$1 var=$2
  mkdir -p "$dir"
  if running "$dir/redis.pid"; then
    say "redis already running"
    return 0
  fi
  refuse_taken "$var"
  # In the background like the other servers, not daemonized: a daemon's parent returns before the
  # daemon binds its port and writes its pid file, so one dying there could not be told from one
  # not started yet. Its log is its output.
  nohup redis-server --port "${!var}" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    >"$dir/redis.log" 2>&1 &
  echo $! >"$dir/redis.pid"
  watch_started redis "$dir/redis.pid" "$dir/redis.log"
}

# Servers this run started, as "name<TAB>pid<TAB>logs": wait_for checks them while it waits, since
# one that has exited will never answer. Without it a ClickHouse with a bad configuration, a broker
# that could not bind or a ZooKeeper that died at start kept the run waiting its whole bound (up to
# 180 s) and then blamed no one.
STARTED=()
# watch_started NAME PIDFILE LOG...: NAME was just started in the background (its pid in PIDFILE);
# the LOGs are where it says why it stopped (its output first).
watch_started() { STARTED+=("$1"$'\t'"$(cat "$2")"$'\t'"${*:3}"); }

# Fails the run, naming the server and its log's last lines, when a server watch_started registered
# has exited.
fail_if_exited() {
  local entry name pid logs log status tails=""
  for entry in "${STARTED[@]}"; do
    IFS=$'\t' read -r name pid logs <<<"$entry"
    alive "$pid" && continue
    # Each is a child of this shell, which has its exit status.
    status=0
    wait "$pid" 2>/dev/null || status=$?
    for log in $logs; do
      [ -s "$log" ] && tails+=$'\n'"--- $log:"$'\n'"$(tail -n 8 "$log")"
    done
    die "$name exited at start (status $status; log: ${logs// /, })${tails}"
  done
}

# wait_for WHAT CHECK [TRIES]: runs CHECK every 0.5 s until it succeeds; fails the run after TRIES
# (120) or as soon as a server this run started has exited.
wait_for() {
  local what=$1 check=$2 tries=${3:-120}
  for _ in $(seq "$tries"); do
    if eval "$check" >/dev/null 2>&1; then return 0; fi
    fail_if_exited
    sleep 0.5
  done
  die "$what did not answer in time (see $STACK_LOGS)"
}

# Kafka's jars (and ZooKeeper's, which they bring) resolved once from Maven Central into $KLIBS.
kafka_libs() {
  KLIBS="${KAFKA_LIBS_DIR:-$ROOT/.stack/kafka-libs}"
  if [ ! -f "$KLIBS/.complete" ]; then
    command -v mvn >/dev/null || die "mvn is needed to fetch Kafka's jars from Maven Central"
    say "resolving Kafka jars from Maven Central"
    rm -rf "$KLIBS"
    mvn -q -f "$ROOT/stack/kafka-pom.xml" dependency:copy-dependencies -DoutputDirectory="$KLIBS" || die "mvn could not resolve Kafka"
    touch "$KLIBS/.complete"
  fi
}

# Stops the server of a pid file: SIGTERM, 30 s to end, then SIGKILL; the pid file goes either way.
stop() {
  local name=$1 pidfile=$2
  if running "$pidfile"; then
    local pid
    pid=$(cat "$pidfile")
    kill "$pid"
    for _ in $(seq 60); do alive "$pid" || break; sleep 0.5; done
    alive "$pid" && kill -9 "$pid"
    say "stopped $name"
  fi
  rm -f "$pidfile"
}

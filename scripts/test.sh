#!/usr/bin/env bash
# The whole test suite on Node 24: installs what is missing, type-checks, lints, checks formatting and import
# rules (no cycles, no upward imports), builds (integration tests run the compiled process
# entries), then runs every Jest project, and the Redis-heavy integration files a second time on
# a Redis Cluster. Integration tests start their own Redis, MongoDB-wire server and provider
# mocks on free ports.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/use-node.sh
SVC_TEST=1 bash scripts/ensure-deps.sh
echo "[test] node $(node --version)" >&2
# The client library first: tests import it as a package, through its built type declarations.
npx tsc -p sdk/tsconfig.json
npx tsc -p tsconfig.json --noEmit
# The client library's own tests run through Jest without a type check: checked here.
npx tsc -p sdk/tsconfig.test.json --noEmit
# The benchmarks and drills have a build of their own (npm run bench:*, drills): it must keep compiling.
npx tsc -p tsconfig.bench.json --noEmit --incremental false
npx eslint . --max-warnings=0
# One formatting for the whole tree (npx prettier --write . fixes it).
npx prettier --check . --log-level warn
npx depcruise api core workers scripts bench test sdk/src --config .dependency-cruiser.cjs
bash scripts/build-if-stale.sh
# Runs Jest with its JSON results in $1; the exit status says whether every test passed. Jest writes
# that file once the last test has finished: a process still alive a minute later is held only by
# a timer or socket some test left open, so it is stopped and named, and the results stand.
run_jest() {
  local out=$1
  shift
  # The module registries of ESM test files are not all freed between files: run in band, the whole
  # suite grew one heap to V8's default limit (about 4 GB). jest.config.js's workerIdleMemoryLimit runs
  # the files in a worker replaced once its heap passes 2 GB; the 8 GB limit is room for one large file.
  NODE_OPTIONS="--experimental-vm-modules --max-old-space-size=8192" ./node_modules/.bin/jest --ci --json --outputFile="$out" "$@" &
  local pid=$! stopped=""
  while kill -0 "$pid" 2>/dev/null; do
    if [ -s "$out" ] && [ $(($(date +%s) - $(stat -c %Y "$out"))) -gt 60 ]; then
      echo "[test] jest did not exit 60 s after writing its results (a test left a handle open): stopping it" >&2
      kill -TERM "$pid" 2>/dev/null || true
      sleep 2
      kill -KILL "$pid" 2>/dev/null || true
      stopped=1
      break
    fi
    sleep 2
  done
  local code=0
  wait "$pid" || code=$?
  [ -n "$stopped" ] || return "$code"
  node -e "process.exit(JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')).success ? 0 : 1)" "$out"
}

# What the local MongoDB-wire server of a failed run logged (its warnings and errors: a reply it could
# not encode closes a connection, which a test sees as a 503 'database is not reachable'). The global
# set-up starts that file afresh at each run; one older than the run is another run's.
mongo_server_log=.local/mongo-server-test.log
print_mongo_server_log() {
  local since=$1
  [ -z "${TEST_MONGODB_URI:-}" ] && [ -s "$mongo_server_log" ] && [ -n "$(find "$mongo_server_log" -newer "$since")" ] || return 0
  # Without the frames of stack traces: an exception's line and its causes stay.
  echo "[test] the local MongoDB-wire server's warnings and errors during that run (last 60, without stack frames; all in $mongo_server_log):" >&2
  grep -v '^[[:space:]]' "$mongo_server_log" | tail -n 60 >&2
}

results=$(mktemp)
run_started=$(mktemp)
status=0
run_jest "$results" "$@" || {
  status=$?
  print_mongo_server_log "$run_started"
}
# The cluster pass: the files that exercise Redis (the OTP pipeline from accept to validation,
# the sent journal, limits, sign-in, the workers, the queue dashboard, readiness, two processes of
# each role sharing work, waiting and streaming notification events across API processes, the
# signing-key change notice and its subscription, pipelines that share script methods, priorities of
# fair dispatch, of OTPs and of activation codes, the queue metrics) again, on a local Redis Cluster of 3 masters that the global setup starts.
cluster_results=$(mktemp)
if [ $# -eq 0 ]; then
  touch "$run_started"
  TEST_REDIS_CLUSTER=1 run_jest "$cluster_results" \
    test/integration/otp-flow.test.ts test/integration/otp-delivery.test.ts test/integration/sent-journal.test.ts \
    test/integration/users-activation.test.ts test/integration/sign-in-errors.test.ts test/integration/notifications-worker.test.ts \
    test/integration/worker-recovery.test.ts test/integration/platform-health.test.ts test/integration/redis-cluster.test.ts test/integration/scaling-apart.test.ts \
    test/integration/notifications-wait.test.ts test/integration/notifications-stream.test.ts test/integration/notification-user-events.test.ts \
    test/integration/notification-user-event-outbox.test.ts test/integration/signing-key-changes.test.ts \
    test/integration/lean-redis-pipelines.test.ts test/integration/dispatch-fairness.test.ts test/integration/dispatch-fairness-resend.test.ts \
    test/integration/dispatch-fairness-activation.test.ts test/integration/platform-metrics.test.ts \
    test/e2e/queues-dashboard.test.ts --selectProjects=integration || {
    status=1
    print_mongo_server_log "$run_started"
  }
  FUZZ_SKIP_BUILD=1 bash scripts/fuzz-api.sh || status=1
fi
# One plain closing line, whatever reads the log.
node -e "
const fs = require('fs');
const read = (f) => { try { return JSON.parse(fs.readFileSync(f, 'utf8')); } catch { return undefined; } };
const [all, cluster] = [read(process.argv[1]), read(process.argv[2])];
const passed = (all?.numPassedTests ?? 0) + (cluster?.numPassedTests ?? 0);
const failed = (all?.numFailedTests ?? 0) + (cluster?.numFailedTests ?? 0);
if (cluster) console.log('(' + cluster.numTotalTests + ' of these tests ran again on a Redis Cluster)');
// The last line stays exactly 'tests: N passed, N failed': CI reads it.
console.log('tests: ' + passed + ' passed, ' + failed + ' failed');
" "$results" "$cluster_results" || true
rm -f "$results" "$cluster_results" "$run_started"
exit $status

// Variables read by the local tooling (npm start, drills, tests), not by the service: they are
// listed with the settings in docs/configuration.md and `.env.example`, and read where they are used.

export interface ToolVariable {
  readonly names: readonly string[];
  readonly readBy: string;
  readonly doc: string;
  /** Written into `.env.example` (the local-run ones). */
  readonly example?: string;
}

export const TOOL_VARIABLES: readonly ToolVariable[] = [
  {
    names: ['LOCAL_MONGO_BACKEND'],
    readBy: '`npm start`',
    example: 'journal',
    doc: '`journal` (default: data on disk in a write-ahead journal, survives `kill -9`) or `memory` (lost when the server stops); see [operations.md](operations.md)',
  },
  {
    names: ['LOCAL_MONGO_FSYNC'],
    readBy: '`npm start`',
    example: 'everysec',
    doc: "when the local MongoDB-wire server's journal reaches the disk: `always` (before each answer), `everysec` (default) or `off`; see [reliability.md](reliability.md)",
  },
  {
    names: ['DRILL_NODE_OPTIONS', 'MALLOC_ARENA_MAX'],
    readBy: '`npm run drills`',
    doc: 'Node flags and the glibc arena count given to every role of the drills ([reliability.md](reliability.md))',
  },
  {
    names: ['FUZZ_MAX_EXAMPLES', 'FUZZ_SEED'],
    readBy: '`npm test` (fuzzing step)',
    doc: 'examples per operation (default 50) and seed (default 1) of schemathesis',
  },
  {
    names: ['TEST_REDIS_URL', 'TEST_MONGODB_URI', 'TEST_TWILIO_MOCK_URL', 'TEST_SENDGRID_MOCK_URL'],
    readBy: 'tests',
    doc: "set by the test run's global setup, which starts only what is not given: `TEST_MONGODB_URI` alone points the whole suite at any MongoDB ([operations.md](operations.md#tests-and-benchmarks)); each test file uses its own database and queue prefix",
  },
  {
    names: ['TEST_LOCAL_MONGO_CLASSES'],
    readBy: 'tests',
    doc: 'a folder holding the local MongoDB-wire server\'s launcher compiled from this checkout (`javac -encoding UTF-8 -cp "scripts/mongo-server/lib/*" -d <folder> scripts/mongo-server/*.java`), which the launcher probe (local-mongo-reply-copies) uses before `scripts/mongo-server/classes`: for a clone whose classes folder is shared with another checkout',
  },
  {
    names: ['TEST_REDIS_CLUSTER', 'TEST_REDIS_CLUSTER_NODES'],
    readBy: 'tests',
    doc: '`TEST_REDIS_CLUSTER=1` makes the global setup start a local 3-master Redis Cluster and run the tests on it (the cluster pass of `npm test`); `TEST_REDIS_CLUSTER_NODES` points them at an existing cluster instead',
  },
];

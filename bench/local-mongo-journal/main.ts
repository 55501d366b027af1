// What the local MongoDB-wire server's write-ahead journal costs, and how long it takes to start
// again after many writes (with compaction, and without it for comparison).
// Run: npm run bench:local-mongo-journal
//   PART=all|throughput|restart (default all)
//   WRITES=<per throughput arm, default 4000>
//   RESTART_WRITES=<default 1000000, then the journal filled to just under its compaction threshold>, RESTART_DOCUMENTS=<default 1000>, RESTART_BATCH=<updates per command, default 100>
//   UNCOMPACTED_WRITES=<the same without compaction, default 100000; 0 skips it>
import { DEFAULT_COMPACT_AFTER_BYTES } from '../../scripts/local-services.js';
import { envInt, envString, machineInfo, printTable, runBenchmark, writeResult } from '../support/bench-kit.js';
import { measureRestart, type RestartResult } from './restart.js';
import { measureThroughput } from './throughput.js';

/** Far beyond any journal here: compaction never happens. */
const NEVER = 2 ** 50;

void runBenchmark('local-mongo-journal', async () => {
  const part = envString('PART', 'all');
  if (part === 'all' || part === 'throughput') {
    const machine = machineInfo();
    const writes = envInt('WRITES', 4000);
    const throughput = { writesPerArm: writes, bestOfTwo: await measureThroughput(writes) };
    console.log(JSON.stringify(throughput));
    console.log(`written to ${writeResult('local-mongo-journal-throughput', { machine, throughput })}`);
  }
  if (part === 'all' || part === 'restart') {
    const documents = envInt('RESTART_DOCUMENTS', 1000);
    const batch = Math.max(1, envInt('RESTART_BATCH', 100));
    const uncompacted = envInt('UNCOMPACTED_WRITES', 100000);
    const arms = [
      {
        name: 'compaction (default threshold)',
        writes: envInt('RESTART_WRITES', 1_000_000),
        documents,
        batch,
        fillJournalTo: DEFAULT_COMPACT_AFTER_BYTES,
      },
      ...(uncompacted > 0 ? [{ name: 'no compaction', writes: uncompacted, documents, batch, compactAfterBytes: NEVER }] : []),
    ];
    const machine = machineInfo();
    const restarts: RestartResult[] = [];
    for (const arm of arms) restarts.push(await measureRestart(arm));
    printTable(
      ['arm', 'writes', 'journal KiB', 'snapshot KiB', 'restart ms (JVM CPU)', 'empty JVM start ms (CPU)', 'recovery ms (CPU)'],
      restarts.map((r) => [
        r.arm,
        r.writes,
        Math.round(r.journalBytes / 1024),
        Math.round(r.snapshotBytes / 1024),
        `${r.restartWallMs} (${r.restartProcessCpuMs})`,
        `${r.emptyStartWallMs} (${r.emptyStartProcessCpuMs})`,
        `${r.recoveryMs} (${r.recoveryCpuMs})`,
      ]),
    );
    console.log(`written to ${writeResult('local-mongo-journal-restart', { machine, restart: restarts })}`);
  }
});

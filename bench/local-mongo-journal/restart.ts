// How long the journaled server takes to start again after many writes: updates to a bounded set
// of documents (the service's rows, each updated again and again), with compaction at its default
// threshold (the journal then filled to just under it: the slowest restart) and, for comparison,
// without compaction.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { mongo } from 'mongoose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { processCpuMs } from '../support/bench-kit.js';
import type { JournalBackend, LocalService } from '../../scripts/local-services.js';
import { startJournalBenchServer } from './journal-bench-server.js';

export interface RestartArm {
  name: string;
  writes: number;
  documents: number;
  /** Updates sent per command (an ordered bulk write); 1 is one command per update, as the service mostly writes. */
  batch: number;
  compactAfterBytes?: number;
  /** After the writes, more until the journal is just under this size: the slowest restart. */
  fillJournalTo?: number;
}

export interface RestartResult {
  arm: string;
  writes: number;
  documents: number;
  batch: number;
  writeSeconds: number;
  journalBytes: number;
  snapshotBytes: number;
  generation: number;
  /** From starting the JVM to the server listening. */
  restartWallMs: number;
  /** The same for an empty in-memory server: the JVM's own start, to subtract. */
  emptyStartWallMs: number;
  /** CPU the whole JVM used from its start to listening (every thread: JIT, GC), and the same for the empty one. */
  restartProcessCpuMs: number;
  emptyStartProcessCpuMs: number;
  /** The server's own report of reading its files: wall and CPU of the thread that reads them. */
  recoveryMs: number;
  recoveryCpuMs: number;
  recoveryReport: string;
}

type Row = { _id: string; n: number; state: string };

const update = (i: number) => ({ $inc: { n: 1 }, $set: { state: i % 2 === 0 ? 'SENT' : 'QUEUED' } });

/** Batches of 100 updates until one more would cross `target` bytes of journal; returns the updates made. */
async function fillJournal(
  rows: mongo.Collection<Row>,
  journalFile: string,
  target: number,
  documents: number,
  first: number,
): Promise<number> {
  let made = 0;
  let lastRecord = 0;
  for (let size = statSync(journalFile).size; size + 2 * lastRecord < target;) {
    const start = first + made;
    await rows.bulkWrite(
      Array.from({ length: 100 }, (_, k) => ({
        updateOne: { filter: { _id: `row-${(start + k) % documents}` }, update: update(start + k) },
      })),
      { ordered: true },
    );
    made += 100;
    const next = statSync(journalFile).size;
    lastRecord = Math.max(lastRecord, next - size);
    size = next;
  }
  return made;
}

async function writeUpdates(url: string, arm: RestartArm, journalFile: string): Promise<number> {
  const mongo = await connectMongo(`${url}/bench`);
  try {
    const rows = mongo.getClient().db().collection<Row>('rows');
    for (let i = 0; i < arm.documents; i += 1000) {
      const ids = Array.from({ length: Math.min(1000, arm.documents - i) }, (_, k) => i + k);
      await rows.insertMany(ids.map((id) => ({ _id: `row-${id}`, n: 0, state: 'QUEUED' })));
    }
    let next = 0;
    let reported = 0;
    const commands = Math.ceil(arm.writes / arm.batch);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let c = next++; c < commands; c = next++) {
          const first = c * arm.batch;
          const count = Math.min(arm.batch, arm.writes - first);
          if (count === 1) await rows.updateOne({ _id: `row-${first % arm.documents}` }, update(first));
          else
            await rows.bulkWrite(
              Array.from({ length: count }, (_, k) => ({
                updateOne: { filter: { _id: `row-${(first + k) % arm.documents}` }, update: update(first + k) },
              })),
              { ordered: true },
            );
          const done = Math.floor(((c + 1) * 10) / commands);
          if (done > reported) {
            reported = done;
            process.stdout.write(`  ${arm.name}: ${done * 10} % of ${arm.writes} writes\n`);
          }
        }
      }),
    );
    return arm.fillJournalTo ? await fillJournal(rows, journalFile, arm.fillJournalTo, arm.documents, arm.writes) : 0;
  } finally {
    await mongo.close();
  }
}

async function verify(url: string, arm: RestartArm, writes: number): Promise<void> {
  const mongo = await connectMongo(`${url}/bench`);
  try {
    const rows = await mongo.getClient().db().collection<Row>('rows').find().toArray();
    const sum = rows.reduce((total, row) => total + row.n, 0);
    if (rows.length !== arm.documents || sum !== writes)
      throw new Error(`after the restart: ${rows.length} rows, ${sum} updates counted; expected ${arm.documents} and ${writes}`);
  } finally {
    await mongo.close();
  }
}

async function timeStart(start: () => Promise<LocalService>) {
  const started = performance.now();
  const server = await start();
  return { server, wallMs: performance.now() - started, processCpuMs: processCpuMs(server.pid) };
}

export async function measureRestart(arm: RestartArm): Promise<RestartResult> {
  const dir = mkdtempSync(join(tmpdir(), 'journal-restart-'));
  const journalFile = join(dir, 'journal.bson');
  const backend: JournalBackend = { journalFile, ...(arm.compactAfterBytes ? { compactAfterBytes: arm.compactAfterBytes } : {}) };
  try {
    const writing = await startJournalBenchServer(backend);
    const started = performance.now();
    let writes = arm.writes;
    try {
      writes += await writeUpdates(writing.url, arm, journalFile);
    } finally {
      await writing.stop();
    }
    const writeSeconds = (performance.now() - started) / 1000;
    const snapshotFile = `${journalFile}.snapshot`;
    const empty = await timeStart(() => startJournalBenchServer('memory'));
    await empty.server.stop();
    const restarted = await timeStart(() => startJournalBenchServer(backend));
    try {
      await verify(restarted.server.url, arm, writes);
    } finally {
      await restarted.server.stop();
    }
    const report = (restarted.server.startupOutput ?? '').split('\n').find((line) => line.startsWith('journal: loaded')) ?? '';
    const timing = /in (\d+) ms \((\d+) ms of CPU\)/.exec(report);
    return {
      arm: arm.name,
      writes,
      documents: arm.documents,
      batch: arm.batch,
      writeSeconds: Math.round(writeSeconds),
      journalBytes: statSync(journalFile).size,
      snapshotBytes: existsSync(snapshotFile) ? statSync(snapshotFile).size : 0,
      generation: Number(readFileSync(journalFile).readBigInt64LE(8)),
      restartWallMs: Math.round(restarted.wallMs),
      emptyStartWallMs: Math.round(empty.wallMs),
      restartProcessCpuMs: restarted.processCpuMs,
      emptyStartProcessCpuMs: empty.processCpuMs,
      recoveryMs: Number(timing?.[1] ?? NaN),
      recoveryCpuMs: Number(timing?.[2] ?? NaN),
      recoveryReport: report,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { startInfra } from '../../bench/support/bench-kit.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { startFuzzStores } from '../../scripts/fuzz/fuzz-stores.js';
import type { LocalService } from '../../scripts/local-services.js';
import { eventually } from '../support/waiting.js';

/** A command mongo-java-server does not know: it answers an error and logs `unknown query` at ERROR. */
async function sendUnknownCommand(server: LocalService, marker: string): Promise<void> {
  const client = await MongoClient.connect(server.url, { serverSelectionTimeoutMS: 5000 });
  try {
    await expect(client.db('toollogs').command({ [marker]: 1 })).rejects.toThrow(/no such (cmd|command)/);
  } finally {
    await client.close();
  }
}

const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

// Fuzzing and the benchmarks start their own MongoDB-wire server: what it says (a reply it could not
// encode closes a connection, seen as a 503 or a failed request) must be readable after the run,
// in a file of their own beside the tests' and npm start's.
describe.each([
  { tool: 'fuzzing (scripts/fuzz-api.ts)', name: 'fuzz', start: startFuzzStores },
  { tool: 'the benchmarks (bench/support/bench-kit.ts startInfra)', name: 'bench', start: () => startInfra() },
])('the MongoDB-wire server of $tool', ({ name, start }) => {
  test(`when it logs an error, then the line reaches .local/mongo-server-${name}.log`, async () => {
    const stores = await start();
    try {
      const file = join(projectRoot, '.local', `mongo-server-${name}.log`);
      expect(stores.mongo.logFile).toBe(file);
      const marker = `svcToolLog${name}${Date.now()}`;
      await sendUnknownCommand(stores.mongo, marker);
      await eventually(async () => (read(file).includes(marker) ? true : undefined));
    } finally {
      await Promise.all([stores.redis.stop(), stores.mongo.stop()]);
    }
  });
});

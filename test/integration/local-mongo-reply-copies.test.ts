import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../core/platform/project-root.js';
import { mongoServerClasspath } from '../../scripts/local-services.js';

const run = promisify(execFile);

/**
 * The launcher probed: scripts/mongo-server/classes (built by scripts/ensure-deps.sh), or first a
 * folder given in TEST_LOCAL_MONGO_CLASSES that holds a launcher compiled from these sources (a
 * clone whose classes folder is another checkout's compiles its own there).
 */
const launcherClasspath = process.env.TEST_LOCAL_MONGO_CLASSES
  ? `${process.env.TEST_LOCAL_MONGO_CLASSES}:${mongoServerClasspath}`
  : mongoServerClasspath;

/**
 * The local MongoDB-wire server encodes a reply on its network thread after the command has
 * returned, while other connections' commands go on. A reply that held the stored document itself
 * changed under the encoding when another connection's update added or removed a field of that
 * document: the encoding threw and the server closed the connection (seen as a 503 'database is
 * not reachable' among ten concurrent validations of one OTP). The probe replays that interleaving
 * in one thread, in a fixed order, against the launcher's backend.
 */
describe('local MongoDB-wire server: a reply is the document as its command left it', () => {
  const classes = mkdtempSync(join(tmpdir(), 'reply-probe-'));
  afterAll(() => rmSync(classes, { recursive: true, force: true }));

  test('when another connection adds and removes fields of the document while a findAndModify, find, getMore, aggregate, $lookup or distinct reply is encoded, then each reply encodes and shows the document (or sub-document) before that change', async () => {
    const probe = join(projectRoot, 'test', 'support', 'local-mongo', 'ReplySnapshotProbe.java');
    await run('javac', ['-cp', launcherClasspath, '-d', classes, probe]);
    const { stdout } = await run('java', ['-cp', `${classes}:${launcherClasspath}`, 'ReplySnapshotProbe', 'IdIndexedMemoryBackend']);
    const before = '[_id, status, attemptsUsed, resendCode] ACTIVE';
    expect(stdout.trim().split('\n')).toEqual([
      `findAndModify ${before}`,
      `find ${before}`,
      `getMore ${before}`,
      `aggregate ${before}`,
      `lookup ${before}`,
      'distinct [status, queuedAt] QUEUED',
    ]);
  });
});

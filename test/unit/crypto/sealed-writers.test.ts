import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../core/platform/project-root.js';
import { SEALED_COLLECTIONS } from '../../../core/sealing/sealed-values.js';

/**
 * Every place that seals a value with the server key, and where the value is kept. The re-seal
 * command (`npm run reseal`) walks SEALED_COLLECTIONS; a value it does not know stays under the old
 * key, and dropping that key loses it. A new writer fails this test until it is listed here, with
 * its collection in SEALED_COLLECTIONS (or a reason it needs no re-seal).
 */
const SEALING_WRITERS: Record<string, string> = {
  'auth/sealed-signing-jwk.ts': 'server_secrets',
  'push/vapid-keys.ts': 'server_secrets',
  'clients/callback-secret.ts': 'clients',
  'otp/otp-digest.ts': 'otps',
  'otp/otp-generation.service.ts': 'otps',
  'otp/otp-delivery-row.ts': 'deliveries',
  'otp/otp-failover.ts': 'deliveries',
  'users/activation.service.ts': 'users',
  'users/enrollment.service.ts': 'users',
  'users/activation-deliveries.service.ts': 'deliveries',
  'push/push-subscriptions.service.ts': 'push_subscriptions',
  'idempotency/idempotent-requests.ts': 'idempotency_records',
  // Not MongoDB: the sealed copy rides in a queued job, which reads its row when the copy does not open.
  'deliveries/delivery-envelope.ts': 'redis',
  // The re-seal itself.
  'sealing/reseal.ts': 'reseal',
};

/** core/ files that call encryptSecret, comments left out. */
function sealingFiles(): string[] {
  const coreDir = join(projectRoot, 'core');
  return readdirSync(coreDir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && file !== join('crypto', 'secret-box.ts'))
    .filter((file) =>
      /\bencryptSecret\(/.test(
        readFileSync(join(coreDir, file), 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/(^|[^:'"`])\/\/.*$/gm, '$1'),
      ),
    )
    .map((file) => file.split('\\').join('/'))
    .sort();
}

describe('values sealed with the server key', () => {
  test('when core/ is scanned for code that seals, then every writer is listed with where its values are kept', () => {
    expect(sealingFiles()).toEqual(Object.keys(SEALING_WRITERS).sort());
  });

  test('when a writer keeps its values in MongoDB, then the re-seal walks that collection', () => {
    const walked = new Set(SEALED_COLLECTIONS.map(({ collection }) => collection));
    const kept = Object.values(SEALING_WRITERS).filter((where) => where !== 'redis' && where !== 'reseal');
    expect(kept.filter((collection) => !walked.has(collection))).toEqual([]);
  });
});

// `npm run migrate [-- --check]`: brings MongoDB's indexes and data to this version's
// declarations before the version starts (core/migrations/migrate-store.ts). With --check it
// changes nothing (it creates no index and no collection) and exits 3 when a migration is needed,
// 4 when stored documents share a key of a unique index it would build (the run would stop there).
// Prints JSON on stdout, logs on stderr; a failure exits 1 with its reason on stderr (stored
// documents sharing the key of a unique index are named there, with what to do).
import { connectMongo } from '../core/platform/db/mongo-connection.js';
import { createLogger, maskContactsInText } from '../core/platform/logger/logger.js';
import { migrateStore } from '../core/migrations/migrate-store.js';
import { checkBeforeMigrating } from '../core/migrations/store-check.js';
import { countStaleMobileKeys } from '../core/users/live-mobile-keys.migration.js';
import { ConfigError } from '../core/platform/config/config.js';
import { readSettings } from '../core/platform/config/settings-reader.js';
import { mongoUriOrLocal } from './mongo-uri-or-local.js';
import { DuplicateKeysError } from '../core/platform/db/unique-index-build.js';

async function main(): Promise<number> {
  const checkOnly = process.argv.includes('--check');
  // Only the settings migrating needs, read and checked as the service reads them.
  const { values, problems } = readSettings(process.env, ['LOG_LEVEL']);
  if (problems.length > 0) throw new ConfigError(problems);
  const logger = createLogger({ level: values.LOG_LEVEL, name: 'migrate', destination: process.stderr });
  // MONGODB_URI, else the local server of `npm start`.
  const mongo = await connectMongo(mongoUriOrLocal(process.env));
  try {
    if (checkOnly) {
      const { blocked: duplicates, ...inspected } = await checkBeforeMigrating(mongo);
      const check = { ...inspected, staleMobileKeys: await countStaleMobileKeys(mongo, logger) };
      const needed = check.drifted.length > 0 || check.obsolete.length > 0 || check.staleMobileKeys > 0;
      // Listed only when there are any, each as the migration would tell it (masked already).
      const blocked = duplicates.length > 0 ? { blockedByDuplicateKeys: duplicates.map((err) => err.message) } : {};
      process.stdout.write(JSON.stringify({ migrationNeeded: needed, ...check, ...blocked }, null, 2) + '\n');
      // 4: the migration (or a process creating a missing index at start) would stop on them.
      return duplicates.length > 0 ? 4 : needed ? 3 : 0;
    }
    // Index builds wait as long as MongoDB builds: their own connection, without a socket timeout.
    const builds = await connectMongo(mongoUriOrLocal(process.env), { forIndexBuilds: true });
    try {
      process.stdout.write(JSON.stringify(await migrateStore(mongo, logger, builds), null, 2) + '\n');
    } finally {
      await builds.close();
    }
    return 0;
  } finally {
    await mongo.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    // Masked as log lines are: a unique-key error quotes the e-mail address or number it met. The
    // error naming stored duplicates is masked already, all but its ObjectIds, which masking the
    // whole text could take for phone numbers.
    const told = err instanceof DuplicateKeysError ? err.message : maskContactsInText(err instanceof Error ? err.message : String(err));
    console.error('migration failed:', told);
    process.exit(1);
  },
);

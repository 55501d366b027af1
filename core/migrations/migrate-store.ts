import type { Connection } from 'mongoose';
import {
  declaredIndexes,
  declaredOf,
  defaultIndexName,
  type DeclaredIndex,
  type ExistingIndex,
  type IndexDrift,
} from '../platform/db/index-drift.js';
import {
  compareModelIndexes,
  existingIndexes,
  forgetIndexBuilds,
  duringMigration,
  registeredModel,
} from '../platform/db/model-registry.js';
import { isMongoError, MONGO_CODES } from '../platform/db/mongo-error-codes.js';
import { dropIndexByKey } from '../platform/db/drop-index.js';
import { createDeclaredIndex, refuseDuplicateKeys } from '../platform/db/unique-index-build.js';
import { buildIndex, type IndexBuildRoute } from '../platform/db/index-build.js';
import { migrateToEnterprises } from '../enterprises/enterprise-migration.js';
import type { Logger } from '../platform/logger/logger.js';
import { migrateLiveMobileKeys, type WithheldMobileKey } from '../users/live-mobile-keys.migration.js';
import { DECLARED_MODELS } from './declared-models.js';
import { obsoleteIndexes } from './store-check.js';
import { dropSupersededIndexes } from './superseded-indexes.js';

export interface MigrationReport {
  /** Indexes of an older version dropped (`collection.index`). */
  dropped: string[];
  /** TTL changed in place (`collMod`). */
  modified: string[];
  /** Dropped and created again with the declared options. */
  rebuilt: string[];
  /** Created where missing: by the data steps' own models (the users') and the declared ones after them. */
  created: string[];
  /**
   * Live users left without the unique key of their mobile number, whose phone an earlier user's
   * number already reaches (live-mobile-keys.migration.ts); only when there are any.
   */
  withheldMobileKeys?: WithheldMobileKey[];
}

const label = (collection: string, name: string) => `${collection}.${name}`;

/**
 * Changes an index's TTL in place with `collMod` (no rebuild, the index keeps serving). The
 * local MongoDB-wire server has no `collMod`: there the index is dropped and created again.
 */
async function changeTtl(
  connection: Connection,
  drift: IndexDrift,
  declared: DeclaredIndex,
  route: IndexBuildRoute | undefined,
): Promise<'modified' | 'rebuilt'> {
  try {
    await connection.db?.command({
      collMod: drift.collection,
      index: { name: drift.name, expireAfterSeconds: declared.options.expireAfterSeconds },
    });
    return 'modified';
  } catch (err) {
    if (!isMongoError(err, MONGO_CODES.CommandNotFound)) throw err;
    await rebuild(connection, drift, declared, route);
    return 'rebuilt';
  }
}

async function rebuild(
  connection: Connection,
  drift: IndexDrift,
  declared: DeclaredIndex,
  route: IndexBuildRoute | undefined,
): Promise<void> {
  // Stored duplicates are looked for before the old index goes: a unique index they would refuse
  // leaves the old one serving instead of the collection without either.
  if (declared.options.unique) await refuseDuplicateKeys(connection, drift.collection, declared);
  const old = (await existingIndexes(connection, drift.collection)).find((index) => index.name === drift.name);
  await dropIndexByKey(connection, drift.collection, drift.name);
  try {
    await createDeclaredIndex(connection, drift.collection, declared, route);
  } catch (err) {
    // Refused all the same: a running version wrote a duplicate between the check and the build
    // (the old index let it in). The old index comes back, so the collection is not left without
    // either; the refusal is what the operator reads. Should the restore fail too, the next run
    // (or a process at start) finds the index missing and builds it or tells the same refusal.
    if (old) await restoreIndex(connection, drift.collection, old, route).catch(() => undefined);
    throw err;
  }
}

/** Creates an index again as it existed (its key, name and the options that change what it does). */
async function restoreIndex(
  connection: Connection,
  collection: string,
  index: ExistingIndex,
  route: IndexBuildRoute | undefined,
): Promise<void> {
  const { key, name, unique, sparse, expireAfterSeconds, partialFilterExpression } = index;
  const options = {
    name: name ?? defaultIndexName(key),
    ...(unique !== undefined ? { unique } : {}),
    ...(sparse !== undefined ? { sparse } : {}),
    ...(expireAfterSeconds !== undefined ? { expireAfterSeconds } : {}),
    ...(partialFilterExpression !== undefined ? { partialFilterExpression } : {}),
  };
  await buildIndex(connection, collection, { key, options }, route);
}

/**
 * Brings the database to this version: data migrations first (the pre-enterprise one), mobile
 * number keys in the form SMS are sent to, then every declared index as declared (missing ones
 * created, a changed TTL modified in place, any other changed option by drop-and-create), then
 * the indexes an older version replaced dropped. Idempotent: a second run changes nothing, and a
 * run interrupted half-way is finished by the next. Run by `npm run migrate` before a version
 * with changed declarations starts; the previous version's command brings a rollback back.
 * Indexes are built through `buildsVia` when given (a connection without a socket timeout: a
 * build on a large collection takes minutes), announced and reported while they run; every
 * other command goes through `connection`, bounded by its socket timeout.
 */
export async function migrateStore(connection: Connection, logger: Logger, buildsVia?: Connection): Promise<MigrationReport> {
  const route: IndexBuildRoute | undefined = buildsVia ? { connection: buildsVia, logger } : undefined;
  const report: MigrationReport = { dropped: [], modified: [], rebuilt: [], created: [] };
  // The steps' own models (the users' unique keys) build through the route too, and the indexes
  // they create (on a fresh database) are reported with those created below, where the loop then
  // finds them present and does not create them again.
  duringMigration(connection, { route, created: report.created });
  try {
    return await migrate(connection, logger, route, report);
  } finally {
    duringMigration(connection, undefined);
  }
}

async function migrate(
  connection: Connection,
  logger: Logger,
  route: IndexBuildRoute | undefined,
  report: MigrationReport,
): Promise<MigrationReport> {
  report.dropped.push(...(await obsoleteIndexes(connection)));
  await migrateToEnterprises(connection, logger);
  const withheld = await migrateLiveMobileKeys(connection, logger);
  if (withheld.length > 0) report.withheldMobileKeys = withheld;
  for (const { name, schema } of DECLARED_MODELS) {
    const model = registeredModel(connection, name, schema);
    await model.init();
    const declared = declaredIndexes(model.schema.indexes() as [Record<string, unknown>, Record<string, unknown>][]);
    const { missing, drifted } = await compareModelIndexes(model);
    for (const drift of drifted) {
      const target = declaredOf(drift, declared) as DeclaredIndex;
      if (drift.ttlOnly) report[await changeTtl(connection, drift, target, route)].push(label(drift.collection, drift.name));
      else {
        await rebuild(connection, drift, target, route);
        report.rebuilt.push(label(drift.collection, drift.name));
      }
    }
    for (const index of missing) {
      await createDeclaredIndex(connection, model.collection.collectionName, index, route);
      report.created.push(label(model.collection.collectionName, index.name));
    }
  }
  // Superseded indexes go once their replacements exist: a unique index replaced by a wider one
  // (groups' and templates' names, now unique per owner) leaves no moment without either, so no
  // two shared groups or templates of one name get in meanwhile.
  report.dropped.push(...(await dropSupersededIndexes(connection)));
  // The processes of this connection see the indexes as they are now.
  forgetIndexBuilds(connection);
  logger.info(report, 'MongoDB migrated');
  return report;
}

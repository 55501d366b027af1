import type { Connection } from 'mongoose';
import { maskContactsInText } from '../logger/logger.js';
import type { DeclaredIndex } from './index-drift.js';
import { buildIndex, type IndexBuildRoute } from './index-build.js';
import { isSocketTimeout, socketTimeoutOf } from './mongo-connection.js';
import { isMongoError, MONGO_CODES } from './mongo-error-codes.js';

/** The command that builds the indexes once the duplicates are resolved. */
const MIGRATE_COMMAND = 'npm run migrate';
/** Groups named in the error: enough to see the pattern, few enough to read. */
const MAX_GROUPS = 5;
/** Documents named per group. */
const MAX_DOCUMENTS = 5;
/** How much sooner than the connection's socket timeout the server is asked to stop the look-up. */
const LOOKUP_MARGIN_MS = 5_000;

/** One key value that several stored documents share, and (some of) those documents. */
export interface DuplicateKeyGroup {
  /** The shared value of each key field, in the index's order; null for a missing field. */
  key: unknown[];
  count: number;
  documents: { _id: unknown; enterpriseId?: unknown; userId?: unknown }[];
}

/**
 * A unique index that cannot be built because stored documents already share one of its keys
 * (MongoDB's duplicate-key error, 11000). Its message names the collection, the index, the key
 * fields and the colliding documents, and what to do. Every value that could be an e-mail address
 * or a phone number (key values, user and enterprise ids, string `_id`s) is masked in the message
 * itself; ObjectIds are printed whole, since they are the documents' exact handle and masking text
 * with their digit runs could turn one into a "phone number".
 */
export class DuplicateKeysError extends Error {
  constructor(
    readonly collection: string,
    readonly index: string,
    readonly keyFields: string[],
    // Not kept on the error: a process logs a start-up error with its fields, and the key values
    // and ids in the groups are unmasked.
    groups: DuplicateKeyGroup[],
    readonly moreGroups: boolean,
  ) {
    super(describe(collection, index, keyFields, groups, moreGroups));
    this.name = 'DuplicateKeysError';
  }
}

/**
 * The look-up of a unique index's duplicates did not finish in time (a large collection, a busy
 * MongoDB). `buildRefused`: MongoDB refused the build over duplicates, which could not be listed;
 * otherwise the duplicates were looked for before a build, and whether there are any is unknown.
 * Names only the collection, the index and its fields: no stored value.
 */
export class DuplicateLookupTimeoutError extends Error {
  constructor(
    readonly collection: string,
    readonly index: string,
    readonly keyFields: string[],
    readonly limitMs: number,
    readonly buildRefused: boolean,
  ) {
    const unique = `the unique index ${index} of ${collection} on (${keyFields.join(', ')})`;
    const within = `within ${limitMs / 1000} s (a large collection, or MongoDB busy)`;
    const byHand = `grouping ${collection} on (${keyFields.join(', ')}) and keeping the groups of more than one document`;
    super(
      (buildRefused
        ? [
            `${unique} cannot be built: stored documents share a key (duplicate key).`,
            `They could not be listed ${within}: list them by ${byHand}, or give the listing more time with a longer socketTimeoutMS in MONGODB_URI.`,
            `Resolve the duplicates (in each group, change or delete every document but one), then run ${MIGRATE_COMMAND} again.`,
          ]
        : [
            `${unique} could not be checked for stored documents sharing a key ${within}.`,
            `Give the check more time with a longer socketTimeoutMS in MONGODB_URI, or check by ${byHand} and resolve what it finds; then run ${MIGRATE_COMMAND} again.`,
          ]
      ).join('\n'),
    );
    this.name = 'DuplicateLookupTimeoutError';
  }
}

/**
 * How long the look-up of duplicates may take. Grouping every key of a large collection takes
 * long, and it runs while a process starts or a migration waits. The connection's socket timeout
 * (SOCKET_TIMEOUT_MS unless MONGODB_URI sets socketTimeoutMS; without one, the default's) ends an
 * unanswered command anyway, with a network error that says nothing of the index; MongoDB is asked
 * to stop a little sooner (maxTimeMS), so that its answer comes first and the work stops on the
 * server too. An operator whose collection needs longer raises socketTimeoutMS: no setting of its own.
 * None (undefined) when the connection has no socket timeout: connectMongo always sets one, so 0
 * is an operator's explicit `socketTimeoutMS=0` in MONGODB_URI, the driver's "never time out".
 */
export function duplicateLookupTimeMs(connection: Connection): number | undefined {
  const socketTimeout = socketTimeoutOf(connection);
  if (socketTimeout === 0) return undefined;
  return socketTimeout - Math.min(LOOKUP_MARGIN_MS, Math.floor(socketTimeout / 2));
}

/** The look-up's deadline passed between two of its commands. */
class DeadlinePassed extends Error {}

/**
 * MongoDB stopped a command at its maxTimeMS, a command went unanswered past the socket timeout
 * (a server that ignores maxTimeMS, like the local MongoDB-wire server), or the deadline passed.
 */
function isOutOfTime(err: unknown): boolean {
  return err instanceof DeadlinePassed || isMongoError(err, MONGO_CODES.MaxTimeMSExpired) || isSocketTimeout(err);
}

// Controls, format characters (bidirectional overrides, zero-width ones), line and paragraph separators.
const INVISIBLE_OR_CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

function isObjectId(value: unknown): value is { toHexString(): string } {
  return typeof value === 'object' && value !== null && (value as { _bsontype?: unknown })._bsontype === 'ObjectId';
}

/**
 * A stored value as the operator reads it. Each string, number and field name is masked on its
 * own, at any depth: masked as JSON text, a number after `[`, `:` or `,` reads as a count and stays
 * whole (a key holding `[15550100002]`, data written by hand). Then JSON, whose quoting escapes
 * newlines and ESC, with what it leaves escaped too: C1 controls (U+009B is a terminal's CSI), DEL,
 * the line and paragraph separators and the format characters (bidirectional overrides reorder
 * what the operator reads). Whoever creates a user id or a template name chooses its characters.
 */
function shown(value: unknown): string {
  if (isObjectId(value)) return value.toHexString();
  const json = JSON.stringify(value ?? null, (_field, v: unknown) => {
    if (typeof v === 'string') return maskContactsInText(v);
    if (typeof v === 'number' || typeof v === 'bigint') {
      const text = String(v);
      const masked = maskContactsInText(text);
      return masked === text ? (typeof v === 'bigint' ? text : v) : masked;
    }
    // A subdocument's field names are stored values too.
    if (typeof v === 'object' && v !== null && !Array.isArray(v))
      return Object.fromEntries(Object.entries(v).map(([name, inner]) => [maskContactsInText(name), inner as unknown]));
    return v;
  });
  return json.replace(INVISIBLE_OR_CONTROL, (found) =>
    [...Array(found.length).keys()].map((i) => `\\u${found.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}

function describe(collection: string, index: string, keyFields: string[], groups: DuplicateKeyGroup[], moreGroups: boolean): string {
  const lines = groups.map((group) => {
    const key = keyFields.map((field, i) => `${field} ${shown(group.key[i])}`).join(', ');
    const documents = group.documents.map((doc) => {
      const owner = [
        ...(doc.enterpriseId !== undefined ? [`enterpriseId ${shown(doc.enterpriseId)}`] : []),
        ...(doc.userId !== undefined ? [`userId ${shown(doc.userId)}`] : []),
      ];
      return `_id ${shown(doc._id)}${owner.length > 0 ? ` (${owner.join(', ')})` : ''}`;
    });
    const unnamed = group.count - group.documents.length;
    return `- ${key}: ${group.count} documents: ${documents.join('; ')}${unnamed > 0 ? `; and ${unnamed} more` : ''}`;
  });
  return [
    `the unique index ${index} of ${collection} on (${keyFields.join(', ')}) cannot be built: stored documents share a key (duplicate key).`,
    `${moreGroups ? `The first ${groups.length} groups` : groups.length === 1 ? 'The group' : `The ${groups.length} groups`} of documents sharing a key:`,
    ...lines,
    `Resolve the duplicates (in each group, change or delete every document but one), then run ${MIGRATE_COMMAND} again.`,
  ].join('\n');
}

/**
 * The documents the index covers: a sparse index leaves out those without any of its fields, a
 * partial one those outside its filter. Only these can collide.
 */
function coveredFilter(index: DeclaredIndex): Record<string, unknown> {
  const fields = Object.keys(index.key);
  const filters: Record<string, unknown>[] = [];
  if (index.options.sparse) filters.push({ $or: fields.map((field) => ({ [field]: { $exists: true } })) });
  if (index.options.partialFilterExpression) filters.push(index.options.partialFilterExpression);
  return filters.length === 0 ? {} : filters.length === 1 ? (filters[0] as Record<string, unknown>) : { $and: filters };
}

/**
 * The first groups of stored documents that share a key of this unique index (none when the index
 * could be built). Grouped by the key fields under positional names (`k0`, `k1`: a field name may
 * hold a dot, a group key's may not), each a missing field as null: the index keys it as null too.
 * An object, not an array: the local MongoDB-wire server does not evaluate expressions in an array.
 */
export async function findDuplicateKeys(
  connection: Connection,
  collection: string,
  index: DeclaredIndex,
): Promise<{ groups: DuplicateKeyGroup[]; moreGroups: boolean }> {
  const limitMs = duplicateLookupTimeMs(connection);
  try {
    return await lookUpDuplicateKeys(connection, collection, index, limitMs);
  } catch (err) {
    if (limitMs !== undefined && isOutOfTime(err))
      throw new DuplicateLookupTimeoutError(collection, index.name, Object.keys(index.key), limitMs, false);
    throw err;
  }
}

/** findDuplicateKeys: its commands share one deadline (`limitMs` from now), each asking MongoDB to stop by then. */
async function lookUpDuplicateKeys(
  connection: Connection,
  collection: string,
  index: DeclaredIndex,
  limitMs: number | undefined,
): Promise<{ groups: DuplicateKeyGroup[]; moreGroups: boolean }> {
  const deadline = limitMs === undefined ? undefined : Date.now() + limitMs;
  // Each command's maxTimeMS option: none without a deadline.
  const timeLeft = (): { maxTimeMS?: number } => {
    if (deadline === undefined) return {};
    const left = deadline - Date.now();
    if (left <= 0) throw new DeadlinePassed();
    return { maxTimeMS: left };
  };
  const fields = Object.keys(index.key);
  const covered = coveredFilter(index);
  const shared = await connection
    .collection(collection)
    .aggregate<{ _id: Record<string, unknown>; count: number }>(
      [
        { $match: covered },
        {
          $group: {
            _id: Object.fromEntries(fields.map((field, i) => [`k${i}`, { $ifNull: [`$${field}`, null] }])),
            count: { $sum: 1 },
          },
        },
        { $match: { count: { $gt: 1 } } },
        // The largest groups first: where most of the work is.
        { $sort: { count: -1 } },
        { $limit: MAX_GROUPS + 1 },
      ],
      // A group per distinct key: on a large collection more than MongoDB holds in memory.
      // The first command has the whole limit (a millisecond may have passed since the deadline was set).
      { allowDiskUse: true, ...(limitMs === undefined ? {} : { maxTimeMS: limitMs }) },
    )
    .toArray();
  const groups: DuplicateKeyGroup[] = [];
  for (const { _id: grouped, count } of shared.slice(0, MAX_GROUPS)) {
    const key = fields.map((_, i) => grouped[`k${i}`] ?? null);
    // `$eq`: a stored value is taken as it is, never as a query (a subdocument { $exists: true }
    // would otherwise match every document with the field, a stored regular expression every
    // string it matches). `$eq: null` finds a missing field too, as the index keys it.
    const sameKey = Object.fromEntries(fields.map((field, i) => [field, { $eq: key[i] ?? null }]));
    const documents = await connection
      .collection(collection)
      .find<DuplicateKeyGroup['documents'][number]>(
        { $and: [covered, sameKey] },
        { projection: { _id: 1, enterpriseId: 1, userId: 1 }, ...timeLeft() },
      )
      .sort({ _id: 1 })
      .limit(MAX_DOCUMENTS)
      .toArray();
    groups.push({ key, count, documents });
  }
  return { groups, moreGroups: shared.length > MAX_GROUPS };
}

/** Throws DuplicateKeysError when stored documents share a key of this unique index. */
export async function refuseDuplicateKeys(connection: Connection, collection: string, index: DeclaredIndex): Promise<void> {
  const { groups, moreGroups } = await findDuplicateKeys(connection, collection, index);
  if (groups.length > 0) throw new DuplicateKeysError(collection, index.name, Object.keys(index.key), groups, moreGroups);
}

/**
 * Creates a declared index. When it is unique and MongoDB refuses it over stored duplicates, the
 * error names them (DuplicateKeysError) instead of MongoDB's message, which quotes one key only
 * (possibly a phone number) and names no document. Should the duplicates be gone by the time they
 * are looked for (another process deleted them), or the look-up fail, MongoDB's error stands:
 * running again builds it or tells again. The build itself goes through `route` when given (the
 * migration command: no time limit), else the connection (index-build.ts).
 */
export async function createDeclaredIndex(
  connection: Connection,
  collection: string,
  index: DeclaredIndex,
  route?: IndexBuildRoute,
): Promise<void> {
  try {
    await buildIndex(connection, collection, { key: index.key, options: { name: index.name, ...index.options } }, route);
  } catch (err) {
    if (!index.options.unique || !isMongoError(err, MONGO_CODES.DuplicateKey)) throw err;
    // The look-up only explains the refusal: when it fails itself (a failover, a value the server
    // cannot group), the refusal is what the operator must see; when it ran out of time, that the
    // duplicates are there but could not be listed, and how to go on.
    const lookup = await refuseDuplicateKeys(connection, collection, index).then(
      () => undefined,
      (found: unknown) => found,
    );
    if (lookup instanceof DuplicateLookupTimeoutError)
      throw new DuplicateLookupTimeoutError(collection, index.name, lookup.keyFields, lookup.limitMs, true);
    throw lookup instanceof DuplicateKeysError ? lookup : err;
  }
}

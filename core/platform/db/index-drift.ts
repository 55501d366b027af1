/**
 * Declared indexes (a schema's) against the indexes a collection has. Only the options that
 * change what MongoDB does are compared: which writes it accepts (`unique`, `sparse`,
 * `partialFilterExpression`) and when it deletes documents (`expireAfterSeconds`).
 */
export type IndexKey = Record<string, 1 | -1 | '2dsphere' | 'text' | 'hashed'>;

export interface DeclaredIndex {
  name: string;
  key: IndexKey;
  options: IndexOptions;
}

export interface IndexOptions {
  unique?: boolean;
  sparse?: boolean;
  expireAfterSeconds?: number;
  partialFilterExpression?: Record<string, unknown>;
}

export interface ExistingIndex extends IndexOptions {
  name?: string;
  key: IndexKey;
}

export interface IndexDrift {
  collection: string;
  /** The index as it exists (its name in the database). */
  name: string;
  key: IndexKey;
  /** Each option that differs: what the code declares and what the database has. */
  differences: { option: keyof IndexOptions | 'key'; declared: unknown; existing: unknown }[];
  /** Only the TTL differs: `collMod` changes it in place; anything else needs drop-and-create. */
  ttlOnly: boolean;
}

export interface IndexComparison {
  missing: DeclaredIndex[];
  drifted: IndexDrift[];
}

/** MongoDB's default index name: `field_1_other_-1`. */
export function defaultIndexName(key: IndexKey): string {
  return Object.entries(key)
    .map(([field, direction]) => `${field}_${String(direction)}`)
    .join('_');
}

/** A schema's `indexes()` (mongoose) as declared indexes. */
export function declaredIndexes(schemaIndexes: [Record<string, unknown>, Record<string, unknown>][]): DeclaredIndex[] {
  return schemaIndexes.map(([key, options]) => ({
    key: key as IndexKey,
    name: typeof options.name === 'string' ? options.name : defaultIndexName(key as IndexKey),
    options: {
      ...(options.unique === true ? { unique: true } : {}),
      ...(options.sparse === true ? { sparse: true } : {}),
      ...(typeof options.expireAfterSeconds === 'number' ? { expireAfterSeconds: options.expireAfterSeconds } : {}),
      ...(options.partialFilterExpression ? { partialFilterExpression: options.partialFilterExpression as Record<string, unknown> } : {}),
    },
  }));
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const sameKey = (a: IndexKey, b: IndexKey) => sameJson(Object.entries(a), Object.entries(b));

/** The declaration a drift was found against (its key is the declared one). */
export function declaredOf(drift: IndexDrift, declared: DeclaredIndex[]): DeclaredIndex | undefined {
  return declared.find((index) => sameKey(index.key, drift.key));
}

export function compareIndexes(collection: string, declared: DeclaredIndex[], existing: ExistingIndex[]): IndexComparison {
  const missing: DeclaredIndex[] = [];
  const drifted: IndexDrift[] = [];
  for (const index of declared) {
    // The same key under any name is the same index to MongoDB (it refuses a second one).
    const found = existing.find((e) => sameKey(e.key, index.key)) ?? existing.find((e) => e.name === index.name);
    if (!found) {
      missing.push(index);
      continue;
    }
    const differences: IndexDrift['differences'] = [];
    if (!sameKey(found.key, index.key)) differences.push({ option: 'key', declared: index.key, existing: found.key });
    for (const option of ['unique', 'sparse', 'expireAfterSeconds', 'partialFilterExpression'] as const) {
      const normalise = (value: unknown) => (option === 'unique' || option === 'sparse' ? value === true : value);
      if (!sameJson(normalise(index.options[option]), normalise(found[option]))) {
        differences.push({ option, declared: normalise(index.options[option]), existing: normalise(found[option]) });
      }
    }
    if (differences.length > 0) {
      drifted.push({
        collection,
        name: found.name ?? index.name,
        key: index.key,
        differences,
        ttlOnly:
          differences.every((d) => d.option === 'expireAfterSeconds') &&
          found.expireAfterSeconds !== undefined &&
          index.options.expireAfterSeconds !== undefined,
      });
    }
  }
  return { missing, drifted };
}

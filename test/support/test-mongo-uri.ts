/**
 * The connection string of one test database on the run's MongoDB (TEST_MONGODB_URI), which is
 * either the local MongoDB-wire server started by the global set-up or any MongoDB given by
 * whoever runs the suite (a replica set with credentials and options, say). The given string's
 * hosts, credentials and options are kept; a database named in it becomes the prefix of every
 * test database (`<given>_<name>`), and credentials keep authenticating against it.
 */
export function testMongoUri(database: string, extraOptions: Record<string, string> = {}): string {
  const base = process.env.TEST_MONGODB_URI;
  if (!base) throw new Error('TEST_MONGODB_URI missing: run through `npm test` (or set it to a MongoDB of your own)');
  return withDatabase(base, database, extraOptions);
}

/** `uri` pointing at `database` instead (see {@link testMongoUri}); exported for its unit test. */
export function withDatabase(uri: string, database: string, extraOptions: Record<string, string> = {}): string {
  return rebuild(uri, (given) => (given ? `${given}_${database}` : database), extraOptions);
}

function rebuild(uri: string, nameOf: (given: string) => string, extraOptions: Record<string, string>): string {
  const [head = '', query = ''] = uri.split(/\?(.*)/s);
  const hostsStart = head.indexOf('://') + 3;
  const slash = head.indexOf('/', hostsStart);
  const hosts = slash === -1 ? head : head.slice(0, slash);
  const given = slash === -1 ? '' : decodeURIComponent(head.slice(slash + 1));
  const options = new URLSearchParams(query);
  // Without authSource the driver authenticates against the database of the string: keep that
  // the given database, not the test database that replaces it.
  const hasCredentials = hosts.slice(hostsStart).includes('@');
  if (given && hasCredentials && !options.has('authSource')) options.set('authSource', given);
  for (const [name, value] of Object.entries(extraOptions)) options.set(name, value);
  const name = nameOf(given);
  const search = options.toString();
  return `${hosts}/${encodeURIComponent(name)}${search ? `?${search}` : ''}`;
}

/**
 * A test database reached through one address (a proxy in front of one server) instead of the
 * run's hosts: credentials and options kept, `directConnection` so that the driver does not go
 * around the proxy to the replica set's other members.
 */
export function testMongoUriVia(address: string, databaseName: string): string {
  const base = process.env.TEST_MONGODB_URI ?? '';
  // An SRV name lists hosts through DNS: the proxy stands for one of them, over TLS as SRV implies.
  const srv = base.startsWith('mongodb+srv://');
  const uri = rebuild(base.replace(/^mongodb\+srv:/, 'mongodb:'), () => databaseName, {
    directConnection: 'true',
    ...(srv ? { tls: 'true' } : {}),
  });
  const hostsStart = uri.indexOf('://') + 3;
  const hostsEnd = uri.indexOf('/', hostsStart);
  const hosts = uri.slice(hostsStart, hostsEnd);
  const at = hosts.lastIndexOf('@');
  return `${uri.slice(0, hostsStart)}${at === -1 ? '' : hosts.slice(0, at + 1)}${address}${uri.slice(hostsEnd)}`;
}

/** The `host:port` commands are sent to: the replica set's primary, else the first host given. */
export function firstTestMongoHost(): string {
  const base = process.env.TEST_MONGODB_URI ?? '';
  const hosts = base.slice(base.indexOf('://') + 3).split(/[/?]/)[0] ?? '';
  return (hosts.slice(hosts.lastIndexOf('@') + 1).split(',')[0] ?? '').trim();
}

import { localServerLog, startMongoServer, type LocalService, type MongoOptions } from '../../scripts/local-services.js';

/**
 * A MongoDB-wire server of this benchmark. Its warnings and errors (a journal compaction that
 * failed, a reply it could not encode) go to `mongo-server-bench-journal.log` in `logDirectory`
 * (`.local` unless a test gives its own), a file of its own: the benchmark starts a dozen servers
 * one after another, each moving the file it finds to `.1`, which would push another benchmark's
 * last log out of `mongo-server-bench.log`.
 */
export function startJournalBenchServer(backend: NonNullable<MongoOptions['backend']>, logDirectory?: string): Promise<LocalService> {
  return startMongoServer({ backend, log: localServerLog('bench-journal', logDirectory) });
}

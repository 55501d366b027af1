import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the global set-up leaves the pids of the servers it started, for the teardown. */
export const servicesStateFile = join(tmpdir(), `svc-identity-test-services-${process.pid}.json`);

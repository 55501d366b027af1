import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mongoUriOrLocal } from '../../../scripts/mongo-uri-or-local.js';

// The admin CLI, migrate and reseal run in an operator's shell next to `npm start`, which
// records its local MongoDB-wire server in .local/mongo.json instead of exporting MONGODB_URI.
describe('the MongoDB the operator tools work on', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mongo-uri-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });
  const recordLocalServer = (url: string) => {
    mkdirSync(join(root, '.local'));
    writeFileSync(join(root, '.local', 'mongo.json'), JSON.stringify({ url, port: 42875, pid: 1 }));
  };

  test('when MONGODB_URI is not set and npm start recorded its local server, then the service database on that server is used', () => {
    recordLocalServer('mongodb://127.0.0.1:42875');
    expect(mongoUriOrLocal({}, root)).toBe('mongodb://127.0.0.1:42875/svc-identity');
  });

  test('when MONGODB_URI is set empty, then it counts as not set, as the service reads it', () => {
    recordLocalServer('mongodb://127.0.0.1:42875');
    expect(mongoUriOrLocal({ MONGODB_URI: '' }, root)).toBe('mongodb://127.0.0.1:42875/svc-identity');
  });

  test('when MONGODB_URI is set, then it wins over the local server', () => {
    recordLocalServer('mongodb://127.0.0.1:42875');
    expect(mongoUriOrLocal({ MONGODB_URI: 'mongodb://db.internal:27017/svc-identity' }, root)).toBe(
      'mongodb://db.internal:27017/svc-identity',
    );
  });

  test('when neither is there, then the refusal says both what is missing and how to get it', () => {
    expect(() => mongoUriOrLocal({}, root)).toThrow('MONGODB_URI is not set and no local MongoDB was started by `npm start`');
  });

  test('when MONGODB_URI is not a MongoDB URI, then it is refused as the service refuses it', () => {
    recordLocalServer('mongodb://127.0.0.1:42875');
    expect(() => mongoUriOrLocal({ MONGODB_URI: 'postgres://db' }, root)).toThrow(
      'MONGODB_URI: must be a mongodb:// or mongodb+srv:// URI',
    );
  });
});

import {
  connectMongo,
  DEFAULT_SERVER_SELECTION_TIMEOUT_MS,
  SOCKET_TIMEOUT_MS,
  WRITE_CONCERN_TIMEOUT_MS,
} from '../../core/platform/db/mongo-connection.js';
import { testMongoUri } from '../support/test-mongo-uri.js';

// Production settings (majority writes, retried writes, timeouts) are applied wherever the
// operator's MONGODB_URI does not set them; what the URI says wins.
describe('MongoDB connection', () => {
  test('when MONGODB_URI sets none of the options, then writes wait for a majority, are retried after a failover, and the timeouts are the defaults', async () => {
    const connection = await connectMongo(testMongoUri('mongo_connection_default'));
    try {
      const options = connection.getClient().options;
      expect({
        writeConcern: { w: options.writeConcern?.w, wtimeoutMS: options.writeConcern?.wtimeoutMS },
        retryWrites: options.retryWrites,
        serverSelectionTimeoutMS: options.serverSelectionTimeoutMS,
        socketTimeoutMS: options.socketTimeoutMS,
      }).toEqual({
        writeConcern: { w: 'majority', wtimeoutMS: WRITE_CONCERN_TIMEOUT_MS },
        retryWrites: true,
        serverSelectionTimeoutMS: DEFAULT_SERVER_SELECTION_TIMEOUT_MS,
        socketTimeoutMS: SOCKET_TIMEOUT_MS,
      });
      // The local server accepts (and ignores) the majority write concern, as a standalone mongod does.
      const inserted = await connection.collection('probe').insertOne({ at: new Date() });
      expect(inserted.acknowledged).toBe(true);
      await connection.dropDatabase();
    } finally {
      await connection.close();
    }
  });

  test('when MONGODB_URI sets its own write concern, retries and timeouts, then those values are kept', async () => {
    const connection = await connectMongo(
      testMongoUri('mongo_connection_own', {
        w: '1',
        wtimeoutMS: '2500',
        retryWrites: 'false',
        serverSelectionTimeoutMS: '3000',
        socketTimeoutMS: '600000',
      }),
      { serverSelectionTimeoutMs: 20_000 },
    );
    try {
      const options = connection.getClient().options;
      expect({
        w: options.writeConcern?.w,
        wtimeoutMS: options.writeConcern?.wtimeoutMS,
        retryWrites: options.retryWrites,
        serverSelectionTimeoutMS: options.serverSelectionTimeoutMS,
        socketTimeoutMS: options.socketTimeoutMS,
      }).toEqual({ w: 1, wtimeoutMS: 2500, retryWrites: false, serverSelectionTimeoutMS: 3000, socketTimeoutMS: 600000 });
      await connection.db?.admin().command({ ping: 1 });
    } finally {
      await connection.close();
    }
  });

  test('when MONGODB_SERVER_SELECTION_TIMEOUT_MS is set and the URI says nothing, then the setting is the selection timeout', async () => {
    const connection = await connectMongo(testMongoUri('mongo_connection_setting'), { serverSelectionTimeoutMs: 20_000 });
    try {
      expect(connection.getClient().options.serverSelectionTimeoutMS).toBe(20_000);
    } finally {
      await connection.close();
    }
  });
});

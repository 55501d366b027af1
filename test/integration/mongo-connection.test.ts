import { connectMongo, SOCKET_TIMEOUT_MS } from '../../core/db/mongo-connection.js';

// A command unanswered for SOCKET_TIMEOUT_MS fails, unless the operator's MONGODB_URI says
// otherwise (a slow server with very large collections needs more for one bulk update).
describe('MongoDB connection', () => {
  const base = process.env.TEST_MONGODB_URI;
  if (!base) throw new Error('TEST_MONGODB_URI missing: run through `npm test`');

  test('when MONGODB_URI sets no socketTimeoutMS, then commands get the default timeout', async () => {
    const connection = await connectMongo(`${base}/mongo_connection_default`);
    try {
      expect(connection.getClient().options.socketTimeoutMS).toBe(SOCKET_TIMEOUT_MS);
      await connection.db?.admin().command({ ping: 1 });
    } finally {
      await connection.close();
    }
  });

  test('when MONGODB_URI sets socketTimeoutMS, then that value is kept', async () => {
    const connection = await connectMongo(`${base}/mongo_connection_long?socketTimeoutMS=600000`);
    try {
      expect(connection.getClient().options.socketTimeoutMS).toBe(600000);
      await connection.db?.admin().command({ ping: 1 });
    } finally {
      await connection.close();
    }
  });
});

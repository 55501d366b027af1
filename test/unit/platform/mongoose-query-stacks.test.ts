import mongoose from 'mongoose';
import { connectMongo } from '../../../core/platform/db/mongo-connection.js';

describe('mongoose settings of every connection', () => {
  test('when the connection module is loaded, then queries record no stack trace of their own', () => {
    expect(typeof connectMongo).toBe('function');
    expect(mongoose.get('skipOriginalStackTraces')).toBe(true);
  });
});

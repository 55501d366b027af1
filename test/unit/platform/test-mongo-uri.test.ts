import { withDatabase } from '../../support/test-mongo-uri.js';

// TEST_MONGODB_URI may name any MongoDB: its hosts, credentials and options must survive the
// switch to each test file's own database.
describe('test database URIs', () => {
  test('when the URI names no database, then the test database is appended', () => {
    expect(withDatabase('mongodb://127.0.0.1:40001', 'otp_ab12')).toBe('mongodb://127.0.0.1:40001/otp_ab12');
  });

  test('when the URI names a database and options, then the database becomes the prefix and the options are kept', () => {
    expect(withDatabase('mongodb://db1:27017,db2:27017/ci?replicaSet=rs0&readPreference=primary', 'otp_ab12')).toBe(
      'mongodb://db1:27017,db2:27017/ci_otp_ab12?replicaSet=rs0&readPreference=primary',
    );
  });

  test('when the URI has credentials and a database but no authSource, then they keep authenticating against that database', () => {
    expect(withDatabase('mongodb://tester:s%40cret@db1/ci?tls=true', 'otp_ab12')).toBe(
      'mongodb://tester:s%40cret@db1/ci_otp_ab12?tls=true&authSource=ci',
    );
    expect(withDatabase('mongodb+srv://tester:pw@cluster0.example.net/ci?authSource=admin', 'x')).toBe(
      'mongodb+srv://tester:pw@cluster0.example.net/ci_x?authSource=admin',
    );
  });

  test('when options are added, then they replace the same options of the URI', () => {
    expect(withDatabase('mongodb://db1/?w=1', 'x', { w: 'majority', socketTimeoutMS: '1000' })).toBe(
      'mongodb://db1/x?w=majority&socketTimeoutMS=1000',
    );
  });
});

import { noticeRedisTarget } from '../../../scripts/admin-cli/key-change-notice.js';

// Which Redis the CLI tells of a rotation: the one of the deployment whose MongoDB it rotated in.
describe('the Redis the CLI announces a rotation on', () => {
  const local = 'redis://127.0.0.1:6390';

  test('when REDIS_URL is given, then it is used with the deployment queue prefix', () => {
    expect(noticeRedisTarget({ REDIS_URL: 'redis://redis.internal:6379', QUEUE_PREFIX: 'prod' }, local)).toEqual({
      target: { kind: 'single', url: 'redis://redis.internal:6379' },
      queuePrefix: 'prod',
    });
  });

  test('when neither Redis nor MongoDB is given, then the CLI works on the local deployment of npm start and tells its Redis', () => {
    expect(noticeRedisTarget({}, local)).toMatchObject({ target: { kind: 'single', url: local } });
  });

  test('when MONGODB_URI names another deployment and no Redis is given, then the local Redis of npm start is not told in its place', () => {
    // The rotation is stored in that deployment; a notice to this checkout's local Redis would
    // reach none of its processes, and the CLI would say nothing of it.
    expect(noticeRedisTarget({ MONGODB_URI: 'mongodb://db.internal:27017/svc-identity' }, local).target).toBeUndefined();
  });
});

import { Redis } from 'ioredis';
import type { CommandStartedEvent } from 'mongodb';
import { startRedisServer, type LocalService } from '../../scripts/local-services.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startTestService, uniqueName, type TestService } from '../support/test-service.js';
import { testMongoUri } from '../support/test-mongo-uri.js';
import { createGroups, sendJson, uniqueMobile, userBody } from '../support/users-helpers.js';
import { eventually } from '../support/waiting.js';

/**
 * What one enrollment costs the stores, counted on the real servers: MongoDB through the driver's
 * command monitoring, Redis through MONITOR on a Redis of this file's own (so no other file's
 * commands are seen). docs/enrollment.md ("What one enrollment costs the stores") gives the same
 * numbers: a change that adds a command must change both, on purpose.
 */
describe('the store commands of one enrollment', () => {
  let redisServer: LocalService;
  let service: TestService;
  let token: string;
  let monitor: Redis;
  let feed: Redis | undefined;
  let markers: Redis;
  const mongoCommands: string[] = [];
  const redisCommands: string[] = [];
  // MongoDB's events are emitted in this process as each command is sent: a flag tells the enrollment's.
  let counting = false;

  beforeAll(async () => {
    redisServer = await startRedisServer();
    service = await startTestService('enrollcommands', {
      REDIS_URL: redisServer.url,
      MONGODB_URI: testMongoUri(uniqueName('enrollcommands'), { monitorCommands: 'true' }),
    });
    await createGroups(service, ['retail', 'vip']);
    token = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
    service.ctx.mongo.getClient().on('commandStarted', (event: CommandStartedEvent) => {
      if (counting) mongoCommands.push(`${event.commandName} ${String(event.command[event.commandName])}`);
    });
    monitor = new Redis(redisServer.url);
    markers = new Redis(redisServer.url);
    feed = await monitor.monitor();
    // Commands a Lua script runs are shown too, as from `lua`: only what a client sent is a round
    // trip. Lines reach this client some time after Redis ran them, so the enrollment's are told
    // by markers sent around it, not by when they arrive.
    feed.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua') redisCommands.push(args.slice(0, 2).join(' ').toLowerCase());
    });
    await markers.ping();
  });
  afterAll(async () => {
    await markers?.quit();
    feed?.disconnect();
    monitor?.disconnect();
    await service?.close();
    await redisServer?.stop();
  });

  const enroll = (userId: string) =>
    sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { secondaryGroups: 'vip', mobileNumber: uniqueMobile() }));

  test('an enrollment sending its code by SMS makes 7 MongoDB commands and 3 Redis commands', async () => {
    // The first enrollment loads the Lua scripts and opens the connections; a bulk enrollment pays that once.
    expect((await enroll('first')).status).toBe(201);

    // MONITOR shows commands in the order Redis ran them: what comes between the two markers is
    // the enrollment's (every command of it is sent before its answer).
    const marker = (name: string) => `echo ${name}-${process.hrtime.bigint()}`;
    const start = marker('enrollment-start');
    const end = marker('enrollment-answered');
    await markers.echo(start.slice(5));
    await eventually(async () => (redisCommands.includes(start) ? true : undefined));
    counting = true;
    expect((await enroll('second')).status).toBe(201);
    counting = false;
    await markers.echo(end.slice(5));
    await eventually(async () => (redisCommands.includes(end) ? true : undefined));
    const redisOfEnrollment = redisCommands
      .slice(redisCommands.indexOf(start) + 1, redisCommands.indexOf(end))
      .map((line) => line.split(' ')[0]);

    expect(mongoCommands.sort()).toEqual([
      'find groups', // the groups named, with the user and mobile look-ups below (read together)
      'find groups', // read again after the insert (group deletion protocol)
      'find users', // the userId
      'find users', // the live mobile number
      'insert activity', // user.enrolled
      'insert users',
      'update users', // the entry taken off the user, once the record holds it
    ]);
    expect(redisOfEnrollment.sort()).toEqual([
      'evalsha', // the client's enrollment budget
      'evalsha', // the enterprise's (sent with the client's)
      'evalsha', // the enrollment job (BullMQ)
    ]);
  });
});

import { noServerReachable } from '../../../core/platform/db/mongo-reachability.js';

const topology = (...types: string[]) => ({ servers: new Map(types.map((type, i) => [`db${i}:27017`, { type }])) });

// Commands fail at once only when MongoDB is down; during an election they wait for the new primary.
describe('MongoDB reachability', () => {
  test('when every server is unknown, then MongoDB is unreachable', () => {
    expect(noServerReachable(topology('Unknown'))).toBe(true);
    expect(noServerReachable(topology('Unknown', 'Unknown', 'Unknown'))).toBe(true);
  });

  test('when a replica set has no primary but secondaries answer (an election), then it is reachable', () => {
    expect(noServerReachable(topology('Unknown', 'RSSecondary', 'RSSecondary'))).toBe(false);
    expect(noServerReachable(topology('RSSecondary', 'RSSecondary', 'RSArbiter'))).toBe(false);
  });

  test('when the driver knows no server yet, then nothing is concluded', () => {
    expect(noServerReachable(topology())).toBe(false);
  });
});

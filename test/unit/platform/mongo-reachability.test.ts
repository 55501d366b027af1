import { noServerReachable } from '../../../core/platform/db/mongo-reachability.js';

const address = (i: number) => `db${i}:27017`;
const topology = (...types: string[]) => ({ servers: new Map(types.map((type, i) => [address(i), { type }])) });
/** The addresses of the first `count` servers, as the driver's failed checks name them. */
const failed = (count: number) => new Set(Array.from({ length: count }, (_, i) => address(i)));

// Commands fail at once only when MongoDB is down; during an election, or while the driver
// reconnects after a closed connection, they wait.
describe('MongoDB reachability', () => {
  test('when every server is unknown and the last check of each failed, then MongoDB is unreachable', () => {
    expect(noServerReachable(topology('Unknown'), failed(1))).toBe(true);
    expect(noServerReachable(topology('Unknown', 'Unknown', 'Unknown'), failed(3))).toBe(true);
  });

  test('when a server is unknown only because a connection closed (its last check passed), then it is not concluded unreachable', () => {
    expect(noServerReachable(topology('Unknown'), failed(0))).toBe(false);
    expect(noServerReachable(topology('Unknown', 'Unknown', 'Unknown'), failed(2))).toBe(false);
  });

  test('when a replica set has no primary but secondaries answer (an election), then it is reachable', () => {
    expect(noServerReachable(topology('Unknown', 'RSSecondary', 'RSSecondary'), failed(1))).toBe(false);
    expect(noServerReachable(topology('RSSecondary', 'RSSecondary', 'RSArbiter'), failed(0))).toBe(false);
  });

  test('when the driver knows no server yet, then nothing is concluded', () => {
    expect(noServerReachable(topology(), failed(0))).toBe(false);
  });
});

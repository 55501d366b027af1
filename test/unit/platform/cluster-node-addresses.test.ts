import { clusterNodeAddresses } from '../../../core/platform/queues/redis-eviction-policy.js';

describe('addresses of a Redis Cluster from CLUSTER NODES', () => {
  test('when masters and replicas are listed, then every live one is read, IPv6 and host names included, failed ones left out', () => {
    const answer = [
      '07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected',
      '67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922',
      '292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f [::1]:30003@31003,redis-3 master - 0 1426238318243 3 connected 10923-16383',
      '6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 slave,fail 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 disconnected',
      'e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460',
      '',
    ].join('\n');
    expect(clusterNodeAddresses(answer)).toEqual([
      { host: '127.0.0.1', port: 30004 },
      { host: '127.0.0.1', port: 30002 },
      { host: '::1', port: 30003 },
      { host: '127.0.0.1', port: 30001 },
    ]);
  });
});

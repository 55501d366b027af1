import { callerBlock } from '../../../core/platform/throttling/caller-block.js';

describe('the caller behind an address, for per-address budgets', () => {
  test.each([
    ['an IPv4 address', '203.0.113.7', '203.0.113.7'],
    ['an IPv6 address', '2001:db8:41:7::1', '2001:db8:41:7::/64'],
    ['another address of that /64, written out', '2001:0db8:0041:0007:ffff:ffff:ffff:ffff', '2001:db8:41:7::/64'],
    ['an address of the next /64', '2001:db8:41:8::1', '2001:db8:41:8::/64'],
    ['an IPv4-mapped IPv6 address (a dual-stack socket)', '::ffff:203.0.113.7', '203.0.113.7'],
    ['a link-local address with a zone', 'fe80::1%eth0', 'fe80::/64'],
    ['something that is not an address', 'unknown', 'unknown'],
  ])('when it is %s (%s), then the caller is %s', (_label, address, caller) => {
    expect(callerBlock(address)).toBe(caller);
  });
});

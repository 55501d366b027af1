import { isAddressAllowed } from '../../api/middleware/ip-allow-list.middleware.js';
import { normalizeCidr } from '../../core/clients/clients.service.js';

describe('IP allow-list matcher', () => {
  test('when an IPv4 caller is inside an IPv4 range, then it is allowed', () => {
    expect(isAddressAllowed('10.1.2.3', ['192.168.0.0/16', '10.0.0.0/8'])).toBe(true);
  });

  test('when an IPv4 caller is outside every range, then it is refused', () => {
    expect(isAddressAllowed('11.0.0.1', ['10.0.0.0/8', '127.0.0.1/32'])).toBe(false);
  });

  test('when an IPv6 caller is inside an IPv6 range, then it is allowed', () => {
    expect(isAddressAllowed('2001:db8::42', ['2001:db8::/32'])).toBe(true);
    expect(isAddressAllowed('::1', ['::1/128'])).toBe(true);
  });

  test('when an IPv6 caller is outside the IPv6 range, then it is refused', () => {
    expect(isAddressAllowed('2001:db9::1', ['2001:db8::/32'])).toBe(false);
  });

  test('when a dual-stack socket reports an IPv4-mapped address, then IPv4 ranges apply', () => {
    expect(isAddressAllowed('::ffff:127.0.0.1', ['127.0.0.1/32'])).toBe(true);
    expect(isAddressAllowed('::ffff:10.9.9.9', ['127.0.0.1/32'])).toBe(false);
  });

  test('when an IPv4 caller meets an IPv4-mapped IPv6 range, then it matches through the mapping', () => {
    expect(isAddressAllowed('10.0.0.7', ['::ffff:10.0.0.0/104'])).toBe(true);
  });

  test('when an IPv6 caller meets only IPv4 ranges, then it is refused', () => {
    expect(isAddressAllowed('::1', ['127.0.0.1/32', '0.0.0.0/0'])).toBe(false);
  });

  test('when the list is empty or the address is not an address, then it is refused', () => {
    expect(isAddressAllowed('127.0.0.1', [])).toBe(false);
    expect(isAddressAllowed('not-an-ip', ['0.0.0.0/0'])).toBe(false);
    expect(isAddressAllowed('', ['0.0.0.0/0'])).toBe(false);
  });

  test('when a stored range is broken, then it matches nothing and the others still work', () => {
    expect(isAddressAllowed('10.0.0.1', ['garbage', '10.0.0.0/8'])).toBe(true);
  });

  test('when client ranges are registered, then bare addresses become one-address ranges', () => {
    expect(normalizeCidr('127.0.0.1')).toBe('127.0.0.1/32');
    expect(normalizeCidr('::1')).toBe('::1/128');
    expect(normalizeCidr('10.0.0.0/8')).toBe('10.0.0.0/8');
    expect(normalizeCidr('2001:DB8::/32')).toBe('2001:db8::/32');
    expect(() => normalizeCidr('10.0.0.0/33')).toThrow("Invalid field allowedIps: '10.0.0.0/33' is not an IP address or CIDR range");
  });
});

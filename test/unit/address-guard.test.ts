import { describe, expect, it } from 'vitest';
import { isInternalAddress, publicAddressProblem } from '../../src/webhooks/index.ts';

// The one address policy (callback and file addresses): an address is public only when its range is global
// unicast, and so is every IPv4 address it carries (mapped, compatible, translated, NAT64, 6to4, Teredo).

describe('isInternalAddress', () => {
  it.each([
    // IPv4
    '0.0.0.0', '10.0.0.1', '100.64.0.1', '127.0.0.1', '127.8.9.10', '169.254.169.254', '172.16.0.1', '172.31.255.254',
    '192.0.0.8', '192.0.2.1', '192.168.1.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.1', '240.0.0.1',
    '255.255.255.255',
    // IPv6 as such
    '::', '::1', 'fc00::1', 'fdff:ffff::1', 'fe80::1', 'fe80::1%eth0', 'fec0::1', 'feff::1', 'ff02::1', '100::1',
    '2001:db8::1', '[::1]',
    // IPv4 inside IPv6
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::127.0.0.1', '::7f00:1', '::a00:1', '::ffff:0:7f00:1',
    '::ffff:0:a9fe:a9fe', '64:ff9b::7f00:1', '64:ff9b::10.0.0.1', '64:ff9b::c0a8:101',
    '64:ff9b:1::5db8:d822', '2002:7f00:1::', '2002:a00:1::1', '2002:c0a8:101::',
    // Teredo: server, then the client inverted (127.0.0.1 → 80ff:fffe, 93.184.216.34 → a247:27dd)
    '2001:0:5db8:d822:0:0:80ff:fffe', '2001:0:a00:1:0:0:a247:27dd',
    // names
    'localhost', 'LOCALHOST', 'api.localhost', 'localhost.',
  ])('%s is internal', (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each([
    '93.184.216.34', '8.8.8.8', '2606:2800:220:1::', '2001:4860:4860::8888', '[2606:2800:220:1::]', '::ffff:93.184.216.34',
    '::ffff:5db8:d822', '64:ff9b::5db8:d822', '2002:5db8:d822::1', '2001:0:5db8:d822:0:0:a247:27dd', 'cdn.example.com',
  ])('%s is not internal', (address) => {
    expect(isInternalAddress(address)).toBe(false);
  });
});

describe('publicAddressProblem', () => {
  it.each([
    ['https://[::127.0.0.1]/x', 'must not be an internal-network address'],
    ['https://[::ffff:0:7f00:1]/x', 'must not be an internal-network address'],
    ['https://[64:ff9b::7f00:1]/x', 'must not be an internal-network address'],
    ['https://[2002:7f00:1::]/x', 'must not be an internal-network address'],
    ['https://[fec0::1]/x', 'must not be an internal-network address'],
    ['https://0177.0.0.1/x', 'must not be an internal-network address'],
    ['https://2130706433/x', 'must not be an internal-network address'],
    ['https://0x7f.1/x', 'must not be an internal-network address'],
    ['http://93.184.216.34/x', 'must be an https address'],
    ['not a url', 'must be an absolute URL'],
  ])('%s: %s', (url, message) => {
    expect(publicAddressProblem(url, false)?.message).toBe(message);
    expect(publicAddressProblem(url, true)).toBeNull();
  });

  it('accepts public https addresses', () => {
    expect(publicAddressProblem('https://93.184.216.34/x', false)).toBeNull();
    expect(publicAddressProblem('https://[2606:2800:220:1::]/x', false)).toBeNull();
    expect(publicAddressProblem('https://cdn.example.com/x.png', false)).toBeNull();
  });
});

/**
 * Host names the tests resolve without DNS (`startEmulator({ resolveHost: resolveTestHost })`): each names what it
 * resolves to, internal ranges of every kind, a mix, and a public one.
 */
export const TEST_HOSTS: Record<string, string[]> = {
  'loopback.example.net': ['127.0.0.1'],
  'loopback6.example.net': ['::1'],
  'ten.example.net': ['10.20.30.40'],
  'oneseventwo.example.net': ['172.31.255.1'],
  'oneninetwo.example.net': ['192.168.1.1'],
  'linklocal.example.net': ['169.254.169.254'],
  'metadata.example.net': ['169.254.169.254'],
  'ula.example.net': ['fd00::1'],
  'compat.example.net': ['::7f00:1'],
  'translated.example.net': ['::ffff:0:7f00:1'],
  'nat64.example.net': ['64:ff9b::7f00:1'],
  'sixtofour.example.net': ['2002:7f00:1::'],
  'sitelocal.example.net': ['fec0::1'],
  'mixed.example.net': ['93.184.216.34', '10.0.0.1'],
  'public.example.net': ['93.184.216.34', '2606:2800:220:1::'],
};

/** Resolves a test host name; any other name does not resolve. */
export const resolveTestHost = async (host: string): Promise<string[]> => TEST_HOSTS[host] ?? [];

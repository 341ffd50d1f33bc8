import { lookup } from 'node:dns/promises';
import type { LookupAddress, LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where webhooks may send (decisions.md section 14): https to public addresses only, so that a
 * key holder cannot reach the service's own network. Checked again at each connection
 * (`guardedLookup`), so a host that resolves elsewhere later gains nothing.
 */
export class WebhookUrlRefused extends Error {
  constructor(
    message: string,
    /** Whether WEBHOOK_ALLOW_PRIVATE_URLS=true would have allowed it: an http:// URL, or a host that is not public. */
    readonly allowedWhenPrivate = false,
  ) {
    super(message);
  }
}

/** Address ranges that are not the public internet, each with the word the refusal uses. */
const NOT_PUBLIC: [range: string, family: 'ipv4' | 'ipv6', what: string][] = [
  ['0.0.0.0/8', 'ipv4', 'unspecified'],
  ['10.0.0.0/8', 'ipv4', 'private'],
  ['100.64.0.0/10', 'ipv4', 'private (carrier-grade NAT)'],
  ['127.0.0.0/8', 'ipv4', 'loopback'],
  ['169.254.0.0/16', 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0/12', 'ipv4', 'private'],
  ['192.0.0.0/24', 'ipv4', 'reserved'],
  ['192.0.2.0/24', 'ipv4', 'reserved for documentation'],
  ['192.88.99.0/24', 'ipv4', 'reserved (6to4 relay)'],
  ['192.168.0.0/16', 'ipv4', 'private'],
  ['198.18.0.0/15', 'ipv4', 'reserved for benchmarks'],
  ['198.51.100.0/24', 'ipv4', 'reserved for documentation'],
  ['203.0.113.0/24', 'ipv4', 'reserved for documentation'],
  ['224.0.0.0/4', 'ipv4', 'multicast'],
  ['240.0.0.0/4', 'ipv4', 'reserved'],
  ['::/128', 'ipv6', 'unspecified'],
  ['::1/128', 'ipv6', 'loopback'],
  ['::/96', 'ipv6', 'reserved (IPv4-compatible)'],
  ['100::/64', 'ipv6', 'reserved (discard)'],
  ['2001::/23', 'ipv6', 'reserved (protocol assignments, Teredo)'],
  ['2001:db8::/32', 'ipv6', 'reserved for documentation'],
  ['2002::/16', 'ipv6', 'reserved (6to4)'],
  ['fc00::/7', 'ipv6', 'private (unique local)'],
  ['fe80::/10', 'ipv6', 'link-local'],
  ['fec0::/10', 'ipv6', 'private (site-local)'],
  ['ff00::/8', 'ipv6', 'multicast'],
];

const blocked = NOT_PUBLIC.map(([range, family, what]) => {
  const list = new BlockList();
  const [network, prefix] = range.split('/');
  list.addSubnet(network, Number(prefix), family);
  return { list, family, what };
});

/** Why `address` (an IP literal) is not a public address, or null when it is one. */
export function whyNotPublic(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const groups = ipv6Groups(address);
    // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses reach an IPv4 address: it decides.
    const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
    const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
    if (mapped || nat64) return whyNotPublic([groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join('.'));
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const hit = blocked.find((range) => range.family === type && range.list.check(address, type));
  if (hit) return hit.what;
  // Public IPv6 unicast is 2000::/3; everything outside it is special in some way.
  if (family === 6 && (ipv6Groups(address)[0] & 0xe000) !== 0x2000) return 'not a global unicast address';
  return null;
}

/**
 * Checks a webhook URL's form and, unless private targets are allowed, that its host is or
 * resolves to public addresses only (every address it resolves to). Throws WebhookUrlRefused
 * with a reason a client can act on.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = parseWebhookUrl(raw, allowPrivate);
  if (allowPrivate) return url;
  const host = bareHost(url);
  if (isIP(host)) {
    refuseIfNotPublic(host);
    return url;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new WebhookUrlRefused(`host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new WebhookUrlRefused(`host ${host} does not resolve`);
  for (const { address } of addresses) refuseIfNotPublic(address, host);
  return url;
}

/** The URL's form alone: absolute http(s), no user name or password, https unless private targets are allowed. */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlRefused('must be an absolute URL such as https://example.com/webhooks');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    throw new WebhookUrlRefused(
      allowPrivate ? 'must be an http:// or https:// URL' : 'must be an https:// URL',
      !allowPrivate && url.protocol === 'http:',
    );
  }
  if (url.username || url.password) throw new WebhookUrlRefused('must not carry a user name or password');
  return url;
}

/** The host of a URL without the brackets of an IPv6 literal. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * A `lookup` for the worker's connections (net.connect / tls.connect): resolves as usual, then
 * refuses the connection when any address the host resolves to is not public. IP-literal hosts
 * never reach a lookup; the worker checks them itself before each attempt.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true, verbatim: true } as LookupAllOptions)
    .then((addresses) => {
      if (addresses.length === 0) throw new WebhookUrlRefused(`host ${hostname} does not resolve`);
      for (const { address } of addresses) refuseIfNotPublic(address, hostname);
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    })
    .catch((error: NodeJS.ErrnoException) => callback(error, ''));
};

function refuseIfNotPublic(address: string, host?: string): void {
  const why = whyNotPublic(address);
  if (why === null) return;
  const what = host ? `host ${host} resolves to ${address}, which` : `${address}`;
  throw new WebhookUrlRefused(`${what} is not a public address (${why}); only public addresses are allowed`, true);
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail read as two groups). */
function ipv6Groups(address: string): number[] {
  const words = (text: string) =>
    text === ''
      ? []
      : text.split(':').flatMap((part) => {
          if (isIP(part) !== 4) return [parseInt(part, 16)];
          const [a, b, c, d] = part.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head, tail] = address.split('::');
  if (tail === undefined) return words(head);
  const front = words(head);
  const back = words(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

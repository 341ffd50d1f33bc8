import { createHash, randomBytes } from 'node:crypto';

const KEY_PREFIX = 'tsk_';
/** Random bytes in a key, written in base64url without padding. */
const KEY_BYTES = 32;
/** What every key issued looks like: `tsk_` and its random bytes. */
const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9_-]{${Math.ceil((KEY_BYTES * 4) / 3)}}$`);

export interface GeneratedApiKey {
  /** The whole key: shown to its owner once, never stored. */
  secret: string;
  /** Its readable start, stored to recognise the key in lists. */
  prefix: string;
  secretHash: string;
}

/** A new key: `tsk_` and 32 random bytes, stored only as its sha256. */
export function generateApiKey(): GeneratedApiKey {
  const secret = KEY_PREFIX + randomBytes(KEY_BYTES).toString('base64url');
  return { secret, prefix: secret.slice(0, 12), secretHash: hashApiKey(secret) };
}

/**
 * sha256 is enough here: keys carry 256 random bits, so a slow hash would add cost to
 * every request and no safety.
 */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Whether `token` has the shape of a key the service issues (generateApiKey): anything else names no key, and needs no look-up. */
export function hasKeyShape(token: string): boolean {
  return KEY_SHAPE.test(token);
}

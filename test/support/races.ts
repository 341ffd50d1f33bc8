import type { AddressInfo } from 'node:net';
import { POOL_MAX } from '../../src/database/database-engine';
import type { TestApp } from './test-app';
import { engine } from './test-database';

/**
 * Races: requests sent at the same moment, many rounds, with the invariants checked after each
 * round. They need a database that runs transactions side by side. PGlite runs one transaction
 * at a time (one connection inside the process), so no two writes can interleave there: the
 * races are skipped on it, and say so.
 */
export const describeRaces = (name: string, body: () => void): void => {
  if (engine === 'postgresql') {
    return describe(name, () => {
      // A race of RACE_ROUNDS rounds takes up to a minute on a busy machine: each has ten.
      jest.setTimeout(10 * 60_000);
      body();
    });
  }
  describe(name, () => {
    it.skip('races need concurrent transactions: PGlite runs one at a time, so they run on PostgreSQL only', () => undefined);
  });
};

/** Rounds of each race: RACE_ROUNDS, default 200 (the bar of issue 24). */
export const RACE_ROUNDS = Number(process.env.RACE_ROUNDS ?? 200);

/**
 * How many rounds of a race of `width` requests run at once (inLanes): as many as keep every
 * request of lanes racing together on a pool connection of its own, so that none waits for one
 * and each race is as simultaneous as alone; at most 4.
 */
export const lanesFor = (width: number): number => Math.max(1, Math.min(4, Math.floor(POOL_MAX / width)));

/**
 * Runs rounds 0 to `rounds` - 1 in `lanes` lanes at once, each lane its rounds one after the
 * other (lane l: rounds l, l + lanes, ...). A lane works on a project of its own, whose rows and
 * event row no other lane locks: one lane's requests use the time another waits for PostgreSQL,
 * and its races meet the same contention as alone. Every lane runs to its end; then the first
 * failure, if any, is thrown.
 */
export async function inLanes(lanes: number, rounds: number, round: (index: number, lane: number) => Promise<void>): Promise<void> {
  const settled = await Promise.allSettled(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let index = lane; index < rounds; index += lanes) await round(index, lane);
    }),
  );
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface Answer {
  status: number;
  body: Json;
}

/** A key's requests over real connections to a listening app (fetch, kept alive), so that several can be in flight at once. */
export interface RaceClient {
  get(path: string): Promise<Answer>;
  post(path: string, body?: object): Promise<Answer>;
  patch(path: string, body: object): Promise<Answer>;
  delete(path: string): Promise<Answer>;
}

/** Makes the app listen on a free port of 127.0.0.1 (once: several tests may share an app) and answers its base URL. */
export async function listen(t: TestApp): Promise<string> {
  if (!t.app.getHttpServer().listening) await t.app.listen(0, '127.0.0.1');
  const { port } = t.app.getHttpServer().address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export function raceClient(baseUrl: string, token: string): RaceClient {
  const send = async (method: string, path: string, body?: object): Promise<Answer> => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    get: (path) => send('GET', path),
    post: (path, body) => send('POST', path, body),
    patch: (path, body) => send('PATCH', path, body),
    delete: (path) => send('DELETE', path),
  };
}

/**
 * Sends every request at the same moment: each is started before any answer is awaited, and
 * their answers come back in the order given.
 */
export function atOnce(...requests: (() => Promise<Answer>)[]): Promise<Answer[]> {
  return Promise.all(requests.map((request) => request()));
}

/** What the app's /metrics says of one counter, summed over the labels that match `labels`. */
export async function counter(baseUrl: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (!match) continue;
    const set = match[1] ?? '';
    if (Object.entries(labels).every(([key, value]) => set.includes(`${key}="${value}"`))) total += Number(match[2]);
  }
  return total;
}

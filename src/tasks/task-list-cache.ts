import { Injectable } from '@nestjs/common';

export interface TaskListCacheLimits {
  /** Totals remembered, one small entry per list (filters without cursor and limit). */
  totals: number;
  /** Pages remembered, per list, cursor and limit. */
  pages: number;
  /**
   * Everything the cache holds, keys included: each entry counts two bytes per character of its
   * key (and of its page's JSON text) and ENTRY_OVERHEAD_BYTES for the Map entry and the objects
   * around them. Keys are long (the list's SQL conditions and values, a cursor), so distinct
   * lists that each answer a short page cost more in keys than in bodies.
   */
  bytes: number;
}

export const TASK_LIST_CACHE_LIMITS: Readonly<TaskListCacheLimits> = { totals: 10_000, pages: 20_000, bytes: 64 * 1024 * 1024 };
const ENTRY_OVERHEAD_BYTES = 200;

export interface RememberedTotal {
  version: string;
  total: number;
}

export interface RememberedPage extends RememberedTotal {
  /** The whole response body, as it was sent. */
  body: string;
}

/**
 * What task lists answered, remembered per project version, so that a list nobody changed
 * is not read again. Exact, not a time-based cache: the database raises a project's version
 * in every transaction that changes anything its task lists show (migration
 * `task_list_version_triggers`), and an answer is reused only after reading that the
 * version is still the one it was computed at. The search words are the exception: a comment
 * changes them without raising it, so a list that reads them is remembered by the project's
 * event sequence too (TaskReader.version).
 *
 * - Totals, per list: counting every match is most of a list request's database time on a
 *   large project, and the count is the same on every page.
 * - Pages, per list, cursor and limit: boards and sync jobs poll the same pages.
 *
 * Per process and least recently used first out, bounded in entries and in bytes whatever
 * the clients ask for; every instance checks the version in the database, so several
 * instances stay exact.
 */
@Injectable()
export class TaskListCache {
  /** Its bounds (a test may lower them on a running app's cache, to see it evict). */
  readonly limits: TaskListCacheLimits = { ...TASK_LIST_CACHE_LIMITS };
  private readonly totals = new Map<string, RememberedTotal>();
  private readonly pages = new Map<string, RememberedPage>();
  private bytes = 0;

  total(list: string): RememberedTotal | undefined {
    return touch(this.totals, list);
  }

  page(page: string): RememberedPage | undefined {
    return touch(this.pages, page);
  }

  remember(list: string, page: string, answer: RememberedPage): void {
    this.forget(this.totals, list);
    this.add(this.totals, list, { version: answer.version, total: answer.total });
    this.forget(this.pages, page);
    this.add(this.pages, page, answer);
    const { totals, pages, bytes } = this.limits;
    while (this.totals.size > totals) this.forget(this.totals, oldest(this.totals));
    while (this.pages.size > pages) this.forget(this.pages, oldest(this.pages));
    // Pages go first: a total is small and saves the most (a count of every match).
    while (this.bytes > bytes && this.pages.size) this.forget(this.pages, oldest(this.pages));
    while (this.bytes > bytes && this.totals.size) this.forget(this.totals, oldest(this.totals));
  }

  /** What the cache holds: entries, and bytes as counted against `limits.bytes`. */
  usage(): { totals: number; pages: number; bytes: number } {
    return { totals: this.totals.size, pages: this.pages.size, bytes: this.bytes };
  }

  private add<T extends RememberedTotal>(map: Map<string, T>, key: string, entry: T): void {
    map.set(key, entry);
    this.bytes += bytesOf(key, entry);
  }

  private forget<T extends RememberedTotal>(map: Map<string, T>, key: string): void {
    const entry = map.get(key);
    if (!entry) return;
    map.delete(key);
    this.bytes -= bytesOf(key, entry);
  }
}

/** A Map iterates in insertion order: re-inserting an entry marks it as the most recently used. */
function touch<T>(map: Map<string, T>, key: string): T | undefined {
  const entry = map.get(key);
  if (entry !== undefined) {
    map.delete(key);
    map.set(key, entry);
  }
  return entry;
}

function oldest(map: Map<string, unknown>): string {
  return map.keys().next().value as string;
}

function bytesOf(key: string, entry: RememberedTotal | RememberedPage): number {
  return ENTRY_OVERHEAD_BYTES + 2 * (key.length + entry.version.length + ('body' in entry ? entry.body.length : 0));
}

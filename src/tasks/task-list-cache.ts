import { Injectable } from '@nestjs/common';

/** Totals remembered, one small entry per list (filters without cursor and limit). */
const MAX_TOTALS = 10_000;
/** Memory for remembered pages, counted as two bytes per character of their JSON text. */
const MAX_PAGE_BYTES = 64 * 1024 * 1024;

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
 * version is still the one it was computed at.
 *
 * - Totals, per list: counting every match is most of a list request's database time on a
 *   large project, and the count is the same on every page.
 * - Pages, per list, cursor and limit: boards and sync jobs poll the same pages.
 *
 * Per process and least recently used first out; every instance checks the version in the
 * database, so several instances stay exact.
 */
@Injectable()
export class TaskListCache {
  private readonly totals = new Map<string, RememberedTotal>();
  private readonly pages = new Map<string, RememberedPage>();
  private pageBytes = 0;

  total(list: string): RememberedTotal | undefined {
    return touch(this.totals, list);
  }

  page(page: string): RememberedPage | undefined {
    return touch(this.pages, page);
  }

  remember(list: string, page: string, answer: RememberedPage): void {
    this.totals.delete(list);
    this.totals.set(list, { version: answer.version, total: answer.total });
    if (this.totals.size > MAX_TOTALS) this.totals.delete(oldest(this.totals));

    this.forgetPage(page);
    this.pages.set(page, answer);
    this.pageBytes += bytes(answer);
    while (this.pageBytes > MAX_PAGE_BYTES) this.forgetPage(oldest(this.pages));
  }

  private forgetPage(page: string): void {
    const entry = this.pages.get(page);
    if (!entry) return;
    this.pages.delete(page);
    this.pageBytes -= bytes(entry);
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

function bytes(page: RememberedPage): number {
  return page.body.length * 2;
}

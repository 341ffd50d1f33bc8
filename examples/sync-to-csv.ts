/**
 * Prints every live task of a project as CSV, paging through GET /api/v1/tasks with the cursor:
 *
 *   TASKS_API_URL=http://localhost:3000 TASKS_API_KEY=tsk_... npx tsx examples/sync-to-csv.ts > tasks.csv
 *
 * TASKS_PAGE_SIZE (1 to 100, default 100) sets the page size.
 */
import { createClient, type TaskDto } from '../clients/typescript';

// `estimate` in points (empty: not estimated); `rank` the backlog order: sorting by it as text gives that order.
const COLUMNS = [
  'id',
  'title',
  'status',
  'priority',
  'assignee',
  'sprint',
  'labels',
  'dueDate',
  'estimate',
  'rank',
  'blocked',
  'createdAt',
  'updatedAt',
] as const;

function row(task: TaskDto): string[] {
  return [
    task.id,
    task.title,
    task.status,
    task.priority,
    task.assignee?.name ?? '',
    task.sprint?.name ?? '',
    task.labels.map((label) => label.name).join(';'),
    task.dueDate ?? '',
    task.estimate === null ? '' : String(task.estimate),
    task.rank,
    String(task.blocked),
    task.createdAt,
    task.updatedAt,
  ];
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvLine(fields: readonly string[]): string {
  return fields.map((field) => (/[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field)).join(',') + '\r\n';
}

async function main(): Promise<void> {
  const apiKey = process.env.TASKS_API_KEY;
  if (!apiKey) throw new Error('Set TASKS_API_KEY to a project key (tsk_...)');
  const api = createClient({ baseUrl: process.env.TASKS_API_URL ?? 'http://localhost:3000', apiKey });
  const limit = Number(process.env.TASKS_PAGE_SIZE ?? 100);

  process.stdout.write(csvLine(COLUMNS));
  let cursor: string | undefined;
  do {
    const { data, error } = await api.GET('/api/v1/tasks', { params: { query: { limit, cursor } } });
    if (error) throw new Error(`GET /api/v1/tasks answered ${error.status} ${error.code}: ${error.detail}`);
    for (const task of data.tasks) process.stdout.write(csvLine(row(task)));
    cursor = data.nextCursor ?? undefined;
  } while (cursor);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});

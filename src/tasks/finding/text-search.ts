import { Prisma } from '../../generated/prisma/client';
import type { EventType } from '../../changes/change';

/**
 * "The task matches this search" (decisions.md section 25, `search`), as a boolean SQL condition
 * on the task row aliased `t`: the task's document (title, description, live comments; migration
 * `task_search`) holds the words of `search`, each also as a prefix. The grammar is
 * websearch_to_tsquery's (`"a phrase"`, `-word`, `or`, otherwise every word); a search without any
 * word is the empty query, which matches nothing. The text is a parameter, never SQL.
 *
 * The filter language's `text ~ "..."` is this condition (src/tasks/finding).
 */
export function textSearchCondition(search: string): Prisma.Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM task_search s WHERE s.task_id = t.id AND ${documentMatches(search)})`;
}

/**
 * textSearchCondition for a row image of the task `t` (task_list_deltas), which may be older than
 * the task: its title from the image; its description, which deltas do not keep, and its comment
 * words as they are now. That is the task's words at the image's time while wordsKeptSince holds.
 */
export function textSearchRowCondition(search: string): Prisma.Sql {
  return Prisma.sql`(task_search_heading(t.title, (SELECT latest.description FROM tasks latest WHERE latest.id = t.id))
    || COALESCE((SELECT s.comments FROM task_search s WHERE s.task_id = t.id), ''::tsvector)) @@ task_search_query(${search})`;
}

/**
 * The events of changes to a task's words that its row images cannot show: its comments', and a
 * purge, whose delta's old row would be read with a description and comment words now gone.
 */
const WORDS_CHANGED_OUTSIDE_TASK_ROWS = [
  'comment.created',
  'comment.updated',
  'comment.deleted',
  'task.purged',
] as const satisfies readonly EventType[];

/**
 * Since the task list version `version` and the event `sequence`, no task of the project had its
 * description replaced (a delta says so: migration `task_list_delta_description`), its comments
 * changed or was purged: every task's words were its row's title with its description and comment
 * words of now, which textSearchRowCondition reads. Only while the events since `sequence` are all
 * kept (EVENT_RETENTION_DAYS prunes them); a delta that does not say, or of a deleted row, counts as
 * a replaced description.
 */
export function wordsKeptSince(projectId: string, version: string, sequence: string): Prisma.Sql {
  return Prisma.sql`${sequence}::bigint >= COALESCE((SELECT q.pruned_through FROM event_sequences q WHERE q.project_id = ${projectId}::uuid), 0)
    AND NOT EXISTS (SELECT 1 FROM events e WHERE e.project_id = ${projectId}::uuid AND e.sequence > ${sequence}::bigint
                       AND e.type IN (${Prisma.join(WORDS_CHANGED_OUTSIDE_TASK_ROWS)}))
    AND NOT EXISTS (SELECT 1 FROM task_list_deltas d WHERE d.project_id = ${projectId}::uuid AND d.version > ${version}::bigint
                       AND (d.new_row IS NULL OR (d.new_row ->> 'description_changed')::boolean IS NOT FALSE))`;
}

/** The ids of the project's tasks, live or in the trash, whose document matches `search`: at most `limit`, through the GIN index. */
export function textSearchHits(projectId: string, search: string, limit: number): Prisma.Sql {
  return Prisma.sql`SELECT s.task_id FROM task_search s WHERE ${projectDocumentMatches(projectId, search)} LIMIT ${limit}`;
}

/**
 * How many of the project's live tasks `search` finds, counted on task_search without reading
 * their tasks: the project's matches, less those in the trash. A task has one task_search row
 * (its primary key), from its insert (trigger `tasks_search_inserted`) to its purge (the cascade),
 * of its own project (their foreign key), so this is the count of live matching tasks; joining
 * every match to its task doubled a broad search's cost (docs/performance.md, issue 38).
 */
export function liveTextSearchCount(projectId: string, search: string): Prisma.Sql {
  return Prisma.sql`((SELECT count(*) FROM task_search s WHERE ${projectDocumentMatches(projectId, search)})
    - (SELECT count(*) FROM tasks t JOIN task_search s ON s.task_id = t.id
        WHERE t.project_id = ${projectId}::uuid AND t.deleted_at IS NOT NULL AND ${documentMatches(search)}))::int`;
}

/**
 * The search document of the task_search row `s`: its heading's words and its comments'. The
 * text of the GIN index's expression (migration `task_search_project_index`, where it follows the
 * project: the statements that read the index name their project, projectDocumentMatches, so that
 * it reads that project's words only).
 */
const DOCUMENT = Prisma.raw('(s.heading || s.comments)');

/** The task_search row `s` is of the project and holds the words of `search`: what the GIN index serves, the project first. */
function projectDocumentMatches(projectId: string, search: string): Prisma.Sql {
  return Prisma.sql`s.project_id = ${projectId}::uuid AND ${documentMatches(search)}`;
}

/** The search document `s` holds the words of `search`. */
function documentMatches(search: string): Prisma.Sql {
  return Prisma.sql`${DOCUMENT} @@ task_search_query(${search})`;
}

/**
 * How well a task matches `search`, for `sort=relevance`: ts_rank of its weighted document
 * (a word in the title weighs more than in the description, more than in a comment). An
 * expression on the task row `t`; 0 for a task without a document.
 */
export function textSearchRank(search: string): Prisma.Sql {
  return Prisma.sql`COALESCE((SELECT ts_rank(${DOCUMENT}, task_search_query(${search})) FROM task_search s WHERE s.task_id = t.id), 0)`;
}

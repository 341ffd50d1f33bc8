-- hand-written: sprint_scope and closed_tallies for sprints whose ledger was written before them.

-- Velocity's tallies of the reports already frozen.
UPDATE "sprints" SET "closed_tallies" = json_build_object('committed', "report"->'committed', 'completed', "report"->'completed')
 WHERE "report" IS NOT NULL;

-- Each task's standing, from its ledger rows in order (src/sprints/sprint-ledger.sql.ts keeps it from now on).
INSERT INTO "sprint_scope" ("sprint_id", "task_id", "project_id", "committed", "committed_estimate", "entered", "entered_estimate",
                            "left_estimate", "reestimated", "in_scope", "carried_over", "estimate", "status", "title")
SELECT o."sprint_id", o."task_id", min(o."project_id"::text)::uuid,
       bool_or(o."kind" = 'committed'),
       max(o."estimate") FILTER (WHERE o."kind" = 'committed'),
       bool_or(o.entering),
       (max(ARRAY[o."id"::numeric, o."estimate"]) FILTER (WHERE o.entering))[2],
       (max(ARRAY[o."id"::numeric, o."estimate"]) FILTER (WHERE NOT o."in_scope" AND NOT o."carried_over" AND o.was_in))[2],
       COALESCE(sum(COALESCE(o."estimate", 0) - COALESCE(o.was_estimate, 0)) FILTER (WHERE o."in_scope" AND o.was_in), 0),
       bool_or(o."in_scope") FILTER (WHERE o.last),
       bool_or(o."carried_over") FILTER (WHERE o.last),
       max(o."estimate") FILTER (WHERE o.last),
       max(o."status") FILTER (WHERE o.last),
       max(o."title") FILTER (WHERE o.last)
  FROM (
    SELECT l.*, COALESCE(lag(l."in_scope") OVER w, false) AS was_in, lag(l."estimate") OVER w AS was_estimate,
           l."kind" = 'changed' AND l."in_scope" AND NOT COALESCE(lag(l."in_scope") OVER w, false) AS entering,
           lead(l."id") OVER w IS NULL AS last
      FROM "sprint_ledger" l
    WINDOW w AS (PARTITION BY l."sprint_id", l."task_id" ORDER BY l."id")
  ) o
 GROUP BY o."sprint_id", o."task_id";

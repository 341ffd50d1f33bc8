-- hand-written: the window of the sprints closed before closes kept it (decisions.md section 26).

-- A closed sprint's burndown is frozen: its ideal line is drawn on the window it had when it
-- closed, which closes keep from now on. For the sprints closed before, the best known is the
-- window they have now: taken once, here, so that their burndown changes with this release and
-- never again (a later change of their window leaves it as it is).
UPDATE "sprints" SET "closed_start_date" = "start_date", "closed_end_date" = "end_date"
 WHERE "status" = 'closed';

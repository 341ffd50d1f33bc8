import { SprintStatus, TaskPriority, TaskStatus } from '../generated/prisma/enums';

/** The fixed workflow, in order (interface specification, Task statuses). */
export const TASK_STATUSES = Object.values(TaskStatus);
export const TASK_PRIORITIES = Object.values(TaskPriority);
export const SPRINT_STATUSES = Object.values(SprintStatus);

/** `done` and `cancelled` count as finished: a finished blocker blocks nothing. */
export const FINISHED_STATUSES: readonly TaskStatus[] = [TaskStatus.done, TaskStatus.cancelled];

export { TaskPriority, TaskStatus };

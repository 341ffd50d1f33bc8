import { ApiProperty, PickType } from '@nestjs/swagger';
import type { SameKeys, ShownField } from '../common/fields/fields';
import type { TASK_FIELDS } from '../tasks/task-fields';
import { ListTasksQueryDto, TaskDto } from '../tasks/task.dto';
import type { ShownRelation } from '../tasks/task-view.sql';

/** A task in the trash: as the task list shows it, with when it was deleted. */
export class TrashedTaskDto extends TaskDto {
  @ApiProperty({ type: String, format: 'date-time' })
  deletedAt: string;
}

// The trash shows exactly what TASK_FIELDS and TASK_RELATION_VIEWS show there (task-view.sql.ts).
const _trashedTaskHasEveryField: SameKeys<
  keyof TrashedTaskDto,
  keyof TaskDto | ShownField<typeof TASK_FIELDS, 'trash'> | ShownRelation<'trash'>,
  'TrashedTaskDto'
> = true;

export class TrashListDto {
  /** Most recently deleted first. */
  tasks: TrashedTaskDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page; null on the last page' })
  nextCursor: string | null;
  /** All tasks in the trash, across all pages. */
  @ApiProperty({ type: 'integer', minimum: 0 })
  total: number;
}

/** The trash's query: a page, and the task list's `filter` expression. */
export class TrashQueryDto extends PickType(ListTasksQueryDto, ['limit', 'cursor', 'filter'] as const) {}

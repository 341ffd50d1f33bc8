import { ApiProperty, ApiPropertyOptional, IntersectionType, PickType } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { SearchedPageQueryDto } from '../common/pagination/page.dto';
import { OnlyWith } from '../common/validation/validators';
import type { SameKeys, ShownField } from '../common/fields/fields';
import type { TASK_FIELDS } from '../tasks/task-fields';
import { ListTasksQueryDto, TaskDto } from '../tasks/task.dto';
import type { ShownRelation } from '../tasks/task-view.sql';

/** The trash's query: a page, `search`, the task list's `filter` expression, and its order. */
export class TrashListQueryDto extends IntersectionType(SearchedPageQueryDto, PickType(ListTasksQueryDto, ['filter'] as const)) {
  /** `deleted`: most recently deleted first; `relevance` (only with `search`): best match first, ties newest created first. */
  @IsOptional()
  @IsIn(['deleted', 'relevance'], { message: 'must be deleted or relevance' })
  @OnlyWith('relevance', 'search')
  @ApiPropertyOptional({ enum: ['deleted', 'relevance'], default: 'deleted' })
  // The default as a value: a cursor of the default order then belongs to `sort=deleted` too (CursorCodec).
  sort?: 'deleted' | 'relevance' = 'deleted';
}

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

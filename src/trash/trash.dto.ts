import { ApiProperty } from '@nestjs/swagger';
import { TaskDto } from '../tasks/task.dto';

/** A task in the trash: as the task list shows it, with when it was deleted. */
export class TrashedTaskDto extends TaskDto {
  @ApiProperty({ type: String, format: 'date-time' })
  deletedAt: string;
}

export class TrashListDto {
  /** Most recently deleted first. */
  tasks: TrashedTaskDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page; null on the last page' })
  nextCursor: string | null;
  /** All tasks in the trash, across all pages. */
  @ApiProperty({ type: 'integer', minimum: 0 })
  total: number;
}

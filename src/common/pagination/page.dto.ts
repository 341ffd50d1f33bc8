import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { digitsToNumber, IsText } from '../validation/validators';

/** `limit` and `cursor`, as every paginated list takes them (decisions.md section 3). */
export class PageQueryDto {
  /** Page size, 1 to 100. */
  @IsOptional()
  @Transform(digitsToNumber)
  @IsInt({ message: 'must be an integer from 1 to 100' })
  @Min(1, { message: 'must be an integer from 1 to 100' })
  @Max(100, { message: 'must be an integer from 1 to 100' })
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50 })
  limit?: number = 50;

  /** The `nextCursor` of the previous page. */
  @IsOptional()
  @IsString()
  cursor?: string;
}

/**
 * A page of a task list that `search` may narrow (decisions.md section 25): GET /api/v1/tasks and
 * GET /api/v1/trash. The grammar is src/tasks/finding/text-search.ts's.
 */
export class SearchedPageQueryDto extends PageQueryDto {
  /**
   * Full-text search over title, description and live comments, 1 to 500 characters, e.g.
   * `sign -template`, `"due date"`, `invoice or receipt`: every word required and also a prefix,
   * `"..."` adjacent words, `-word` excludes, `or` takes either; case- and accent-insensitive. With
   * `sort=relevance`, best match first (title over description over comments). Punctuation is
   * never an error: a search without any word matches nothing (docs/finding-work.md).
   */
  @IsOptional()
  @IsString()
  @IsText(1, 500)
  @ApiPropertyOptional({ minLength: 1, maxLength: 500 })
  search?: string;
}

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
   * Full-text search over the title, the description and the live comments, 1 to 500 characters:
   * case- and accent-insensitive (`resume` finds `Résumé`), each word also a prefix (`deploy` finds
   * `deployment`); every word is required, `"two words"` must be adjacent in that order, `-word`
   * excludes, `or` between two terms takes either. Punctuation is never an error: a search
   * without any word matches nothing. Combined with every other filter (AND); with
   * `sort=relevance`, best match first (title over description over comments). E.g. `sign -template`,
   * `"due date"`, `invoice or receipt`.
   */
  @IsOptional()
  @IsString()
  @IsText(1, 500)
  @ApiPropertyOptional({ minLength: 1, maxLength: 500 })
  search?: string;
}

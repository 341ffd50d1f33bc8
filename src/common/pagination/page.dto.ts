import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { digitsToNumber } from '../validation/validators';

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

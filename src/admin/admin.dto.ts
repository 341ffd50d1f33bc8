import { ApiProperty, PartialType } from '@nestjs/swagger';
import { ArrayUnique, IsArray, IsString, Matches } from 'class-validator';
import { ALL_PERMISSIONS, Permission } from '../auth/permissions';
import { IsEachOneOf, IsNotBlank, IsText } from '../common/validation/validators';
import { LabelDto, MemberDto } from '../projects/project-resources.dto';

export class CreateProjectDto {
  /** 1 to 200 characters, not only white space. */
  @IsString()
  @IsText(1, 200)
  @IsNotBlank()
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Apollo' })
  name: string;
}

export class ProjectDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  name: string;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;
}

export class ProjectResponseDto {
  project: ProjectDto;
}

export class ProjectListDto {
  /** Newest first. */
  projects: ProjectDto[];
}

export class CreateMemberDto {
  /** 1 to 200 characters, not only white space. */
  @IsString()
  @IsText(1, 200)
  @IsNotBlank()
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Ada Lovelace' })
  name: string;
}

/** A new name; tasks assigned to the member show it (they show members by id). Null is not a name: 400. */
export class UpdateMemberDto extends PartialType(CreateMemberDto, { skipNullProperties: false }) {}

export class MemberResponseDto {
  member: MemberDto;
}

export class CreateLabelDto {
  /** 1 to 100 characters, not only white space; unique within the project. */
  @IsString()
  @IsText(1, 100)
  @IsNotBlank()
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'bug' })
  name: string;

  /** #rrggbb (stored in lower case) */
  @IsString()
  @Matches(/^#[0-9a-fA-F]{6}$/, { message: 'must be a hex color of the form #rrggbb' })
  @ApiProperty({ example: '#d73a4a' })
  color: string;
}

/** A new name or colour; tasks show the label as it is now. Neither can be cleared: null is 400. */
export class UpdateLabelDto extends PartialType(CreateLabelDto, { skipNullProperties: false }) {}

export class LabelResponseDto {
  label: LabelDto;
}

export class CreateApiKeyDto {
  /** Names the key in history entries: "<name> (API)". */
  @IsString()
  @IsText(1, 100)
  @IsNotBlank()
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'Sync job' })
  name: string;

  @IsArray()
  @ArrayUnique({ message: 'must not name a permission twice' })
  @IsEachOneOf(ALL_PERMISSIONS, 'a permission')
  @ApiProperty({
    // From the list itself, so that a new permission is never left out of the description.
    description: `Any of ${ALL_PERMISSIONS.join(', ')}, each at most once; reads need none.`,
    type: 'array',
    items: { type: 'string', enum: [...ALL_PERMISSIONS] },
    uniqueItems: true,
    example: ['tasks:create', 'tasks:edit'],
  })
  permissions: Permission[];
}

export class ApiKeyDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  name: string;
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...ALL_PERMISSIONS] } })
  permissions: string[];
  /** The readable start of the key, to recognise it. */
  prefix: string;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;
}

/** A key as the project's key list shows it: when it was last used, and whether it is revoked. */
export class ListedApiKeyDto extends ApiKeyDto {
  /** When a request last authenticated with it (recorded at most once a minute), or null if never. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastUsedAt: string | null;
  /** When it was revoked, or null while it works. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  revokedAt: string | null;
}

export class ApiKeyListDto {
  /** Newest first, revoked keys included; never a secret or its hash. */
  keys: ListedApiKeyDto[];
}

export class IssuedApiKeyDto {
  key: ApiKeyDto;
  /** The key itself: shown this once, stored only as a hash. */
  secret: string;
}

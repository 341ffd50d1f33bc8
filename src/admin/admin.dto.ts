import { PartialType } from '@nestjs/swagger';
import { ArrayUnique, IsArray, IsIn, IsString, Matches } from 'class-validator';
import { ALL_PERMISSIONS, Permission } from '../auth/permissions';
import { IsNotBlank, IsText } from '../common/validation/validators';
import { LabelDto, MemberDto } from '../projects/project-resources.dto';

export class CreateProjectDto {
  @IsString()
  @IsText(1, 200)
  @IsNotBlank()
  name: string;
}

export class ProjectDto {
  id: string;
  name: string;
  createdAt: string;
}

export class ProjectResponseDto {
  project: ProjectDto;
}

export class CreateMemberDto {
  @IsString()
  @IsText(1, 200)
  @IsNotBlank()
  name: string;
}

export class MemberResponseDto {
  member: MemberDto;
}

export class CreateLabelDto {
  @IsString()
  @IsText(1, 100)
  @IsNotBlank()
  name: string;

  /** #rrggbb (stored in lower case) */
  @IsString()
  @Matches(/^#[0-9a-fA-F]{6}$/, { message: 'must be a hex color of the form #rrggbb' })
  color: string;
}

/** A new name or colour; tasks show the label as it is now. */
export class UpdateLabelDto extends PartialType(CreateLabelDto) {}

export class LabelResponseDto {
  label: LabelDto;
}

export class CreateApiKeyDto {
  /** Names the key in history entries: "<name> (API)". */
  @IsString()
  @IsText(1, 100)
  @IsNotBlank()
  name: string;

  /** Any of tasks:create, tasks:edit, tasks:delete, sprints:manage; reads need none. */
  @IsArray()
  @ArrayUnique()
  @IsIn(ALL_PERMISSIONS, { each: true, message: `each element must be one of: ${ALL_PERMISSIONS.join(', ')}` })
  permissions: Permission[];
}

export class ApiKeyDto {
  id: string;
  name: string;
  permissions: string[];
  /** The readable start of the key, to recognise it. */
  prefix: string;
  createdAt: string;
}

export class IssuedApiKeyDto {
  key: ApiKeyDto;
  /** The key itself: shown this once, stored only as a hash. */
  secret: string;
}

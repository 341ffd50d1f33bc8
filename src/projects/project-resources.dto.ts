import { ApiProperty } from '@nestjs/swagger';

/** A project membership, as tasks' `assignee` and GET /api/v1/members show it. */
export class MemberDto {
  @ApiProperty({ format: 'uuid' })
  membershipId: string;
  name: string;
}

export class LabelDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  name: string;
  /** #rrggbb, in lower case */
  @ApiProperty({ pattern: '^#[0-9a-f]{6}$', example: '#d73a4a' })
  color: string;
}

export class MemberListDto {
  members: MemberDto[];
}

export class LabelListDto {
  labels: LabelDto[];
}

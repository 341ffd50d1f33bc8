/** A project membership, as tasks' `assignee` and GET /api/v1/members show it. */
export class MemberDto {
  membershipId: string;
  name: string;
}

export class LabelDto {
  id: string;
  name: string;
  /** #rrggbb */
  color: string;
}

export class MemberListDto {
  members: MemberDto[];
}

export class LabelListDto {
  labels: LabelDto[];
}

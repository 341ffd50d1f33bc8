import { Prisma } from '../generated/prisma/client';

/**
 * The JSON shapes of a label (LabelDto) and a member (MemberDto), built by PostgreSQL from the
 * row named `alias` (of `labels`, of `memberships`): the one definition used by
 * GET /api/v1/labels and /members, the labels and assignee a task shows, the admin answers and
 * the events label.* and member.*.
 */
export function labelJson(alias: string): Prisma.Sql {
  return Prisma.raw(`json_build_object('id', ${alias}.id, 'name', ${alias}.name, 'color', ${alias}.color)`);
}

export function memberJson(alias: string): Prisma.Sql {
  return Prisma.raw(`json_build_object('membershipId', ${alias}.id, 'name', ${alias}.name)`);
}

/** From the label row `l`. */
export const LABEL_JSON = labelJson('l');
/** From the membership row `m`. */
export const MEMBER_JSON = memberJson('m');

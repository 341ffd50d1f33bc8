import { Prisma } from '../generated/prisma/client';

/**
 * The JSON shapes of a label (from the label row `l`) and a member (from the membership row
 * `m`), as the admin answers and their events (label.*, member.*) show them, and as
 * GET /api/v1/labels and /members list them (LabelDto, MemberDto).
 */
export const LABEL_JSON = Prisma.raw(`json_build_object('id', l.id, 'name', l.name, 'color', l.color)`);
export const MEMBER_JSON = Prisma.raw(`json_build_object('membershipId', m.id, 'name', m.name)`);

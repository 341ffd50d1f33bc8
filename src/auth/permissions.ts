/** Key permissions (decisions.md section 2). Reads need none. */
export const ALL_PERMISSIONS = ['tasks:create', 'tasks:edit', 'tasks:delete', 'sprints:manage', 'webhooks:manage'] as const;

export type Permission = (typeof ALL_PERMISSIONS)[number];

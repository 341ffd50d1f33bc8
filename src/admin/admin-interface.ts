import { HttpStatus, Inject, Injectable, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { Problem } from '../common/errors/problem';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DatabaseStart } from '../database/database.module';

/**
 * What a newcomer must be told about the admin interface, in one place: the log line at start
 * without ADMIN_TOKEN, the 404 of its paths then, and the routes that change a sprint's status
 * (decisions.md sections 8 and 26).
 */

/** What the admin interface does, as the messages name it. */
const ADMIN_INTERFACE = 'the admin interface (/admin/v1: sprint activation and closing, projects, members, labels, keys)';
const HOW_TO_TURN_IT_ON = 'set ADMIN_TOKEN to a long random value (e.g. ADMIN_TOKEN=$(openssl rand -hex 32)) and restart the server';

/** The admin routes of a sprint's status: AdminSprintsController serves them, and the read-only `status` names them. */
export const SPRINT_STATUS_ROUTES = { path: 'admin/v1/sprints/:sprintId', activate: 'activate', close: 'close' } as const;

/** `status` in a sprint body: what changes it instead (ReadOnlyField's message). */
export const SPRINT_STATUS_READ_ONLY =
  `is read-only: sprints are activated and closed by the app, through the admin interface: ` +
  `POST /${SPRINT_STATUS_ROUTES.path.replace(':sprintId', '{sprintId}')}/${SPRINT_STATUS_ROUTES.activate} and ` +
  `POST /${SPRINT_STATUS_ROUTES.path.replace(':sprintId', '{sprintId}')}/${SPRINT_STATUS_ROUTES.close} (enabled by ADMIN_TOKEN)`;

/** What `GET /` says of the admin interface. */
export function adminInterfaceState(enabled: boolean): { enabled: boolean; path: string; description: string } {
  const does = 'sprint activation and closing, projects, members, labels, keys';
  return {
    enabled,
    path: '/admin/v1',
    description: enabled
      ? `The app side (${does}), with Authorization: Bearer <ADMIN_TOKEN>`
      : `Off: the app side (${does}) needs ADMIN_TOKEN. To turn it on, ${HOW_TO_TURN_IT_ON}.`,
  };
}

/** The 404 of every /admin/v1 path while the admin interface is off: not the "no such endpoint" of a typo. */
export function adminInterfaceOff(): Problem {
  return new Problem(
    HttpStatus.NOT_FOUND,
    'not_found',
    `${capitalized(ADMIN_INTERFACE)} is off: this server was started without ADMIN_TOKEN. To turn it on, ${HOW_TO_TURN_IT_ON}.`,
  );
}

/** Says once, at start, that the admin interface is off and how to turn it on; on PostgreSQL, that no key can be issued meanwhile. */
@Injectable()
class AdminInterfaceOffNotice implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly database: DatabaseStart,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.adminToken !== null) return;
    const keys =
      this.database.engine.kind === 'postgresql'
        ? ' On PostgreSQL no project key can be issued without it (the admin interface issues them).'
        : ' Without it the demo key (npm run demo:key) is the only way to a key.';
    new Logger('Admin').log(`ADMIN_TOKEN is not set: ${ADMIN_INTERFACE} is off. To turn it on, ${HOW_TO_TURN_IT_ON}.${keys}`);
  }
}

/** Served while ADMIN_TOKEN is unset, in place of AdminModule. */
@Module({ providers: [AdminInterfaceOffNotice] })
export class AdminInterfaceOffModule {}

function capitalized(text: string): string {
  return text[0].toUpperCase() + text.slice(1);
}

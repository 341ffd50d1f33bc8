import { ApiProperty } from '@nestjs/swagger';

export class ServiceLinksDto {
  /** The Swagger UI: every endpoint, tried in the browser. */
  @ApiProperty({ example: '/docs' })
  docs: string;
  /** The OpenAPI 3.1 document. */
  @ApiProperty({ example: '/docs/openapi.json' })
  openapi: string;
  /** Liveness. */
  @ApiProperty({ example: '/health' })
  health: string;
  /** Readiness: the database answers. */
  @ApiProperty({ example: '/ready' })
  ready: string;
  /** The API, with a project key. */
  @ApiProperty({ example: '/api/v1' })
  api: string;
}

export class AdminInterfaceStateDto {
  /** Whether /admin/v1 is served: only when the server was started with ADMIN_TOKEN. */
  enabled: boolean;
  @ApiProperty({ example: '/admin/v1' })
  path: string;
  /** What it does, and how to turn it on while it is off. */
  description: string;
}

/** What `GET /` answers: the service, and where to go from here. */
export class ServiceIndexDto {
  /** The service's name. */
  @ApiProperty({ example: 'task-planning-service' })
  name: string;
  /** The service's version (the API's is in its paths: /api/v1). */
  @ApiProperty({ example: '0.1.0' })
  version: string;
  links: ServiceLinksDto;
  adminInterface: AdminInterfaceStateDto;
}

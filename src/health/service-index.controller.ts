import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { adminInterfaceState } from '../admin/admin-interface';
import { Public } from '../auth/auth.decorators';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ServiceIndexDto } from './service-index.dto';

// The service's own package: its name and version, as `npm` knows them (dist/ and src/ sit at the same depth).
const PACKAGE = require('../../package.json') as { name: string; version: string };

@ApiTags('health')
@Public()
@Controller()
export class ServiceIndexController {
  private readonly index: ServiceIndexDto;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.index = {
      name: PACKAGE.name,
      version: PACKAGE.version,
      links: { docs: '/docs', openapi: '/docs/openapi.json', health: '/health', ready: '/ready', api: '/api/v1' },
      adminInterface: adminInterfaceState(config.adminToken !== null),
    };
  }

  /** The service's name and version, where its documentation and probes are, and whether the admin interface is on: the first URL a person opens. */
  @Get()
  @ApiOkResponse({ type: ServiceIndexDto })
  getServiceIndex(): ServiceIndexDto {
    return this.index;
  }
}

import { Controller, Get, Header, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { JSON_CONTENT_TYPE, type JsonText } from '../common/http/json-text';
import { VelocityDto, VelocityQueryDto } from './sprint-report.dto';
import { SprintReportsService } from './sprint-reports.service';

@ApiTags('sprints')
@ApiKeyAuthenticated()
@Controller('api/v1/reports')
export class ReportsController {
  constructor(private readonly reports: SprintReportsService) {}

  /** What the project's last closed sprints committed to and completed, and the mean of what they completed. */
  @Get('velocity')
  @Header('Content-Type', JSON_CONTENT_TYPE)
  @ApiOkResponse({ type: VelocityDto })
  getVelocity(@CurrentCaller() caller: Caller, @Query() query: VelocityQueryDto): Promise<JsonText<VelocityDto>> {
    return this.reports.velocity(caller, query);
  }
}

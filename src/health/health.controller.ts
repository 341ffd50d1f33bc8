import { Controller, Get, HttpStatus } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/auth.decorators';
import { Problem } from '../common/errors/problem';
import { ProblemDto } from '../common/errors/problem.dto';
import { PrismaService } from '../database/prisma.service';
import { DrainState } from '../lifecycle/drain-state';

class HealthDto {
  // This file is not a .dto.ts, which the Swagger plugin reads: the property is declared here.
  @ApiProperty({ enum: ['ok', 'ready'], description: '`ok` from /health, `ready` from /ready' })
  status: string;
}

@ApiTags('health')
@Public()
@Controller()
export class HealthController {
  constructor(
    private readonly prisma: PrismaService,
    private readonly drain: DrainState,
  ) {}

  /** Liveness: the process answers. */
  @Get('health')
  @ApiOkResponse({ type: HealthDto })
  checkHealth(): HealthDto {
    return { status: 'ok' };
  }

  /** Readiness: the service takes new requests (it is not shutting down) and the database answers. */
  @Get('ready')
  @ApiOkResponse({ type: HealthDto })
  @ApiServiceUnavailableResponse({ type: ProblemDto, description: 'Shutting down, or the database does not answer (service_unavailable)' })
  async checkReadiness(): Promise<HealthDto> {
    // From SIGTERM on, at once: a load balancer stops sending new requests while the ones received are answered.
    if (this.drain.isDraining) throw new Problem(HttpStatus.SERVICE_UNAVAILABLE, 'service_unavailable', 'The service is shutting down');
    try {
      await this.prisma.$queryRaw`SELECT 1`;
    } catch {
      throw new Problem(HttpStatus.SERVICE_UNAVAILABLE, 'service_unavailable', 'The database does not answer');
    }
    return { status: 'ready' };
  }
}

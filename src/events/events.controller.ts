import { Controller, Get, Header, Query } from '@nestjs/common';
import { ApiGoneResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuthenticated, CurrentCaller } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { JSON_CONTENT_TYPE, type JsonText } from '../common/http/json-text';
import { EventFeedDto, EventFeedQueryDto } from './event.dto';
import { EventsService } from './events.service';

@ApiTags('events')
@ApiKeyAuthenticated()
@Controller('api/v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  /**
   * The change feed: the project's events after `after`, oldest first. With `wait`, a read that
   * finds nothing yet is held until an event commits (answered within about 100 ms) or the wait ends.
   */
  @Get()
  @Header('Content-Type', JSON_CONTENT_TYPE)
  @ApiOkResponse({ type: EventFeedDto })
  @ApiGoneResponse({
    description: 'Events after `after` were removed by EVENT_RETENTION_DAYS (events_expired): resynchronise from the lists',
    type: ProblemDto,
  })
  listEvents(@CurrentCaller() caller: Caller, @Query() query: EventFeedQueryDto): Promise<JsonText<EventFeedDto>> {
    return this.events.feed(caller, query);
  }
}

import { Controller, Get, Header, Headers, Query, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiGoneResponse,
  ApiHeader,
  ApiOkResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import type { MediaTypeObject, ReferenceObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { Request, Response } from 'express';
import { ApiKeyAuthenticated, CurrentCaller } from '../auth/auth.decorators';
import type { Caller } from '../auth/caller';
import { ProblemDto } from '../common/errors/problem.dto';
import { JSON_CONTENT_TYPE, type JsonText } from '../common/http/json-text';
import { EventDto, EventFeedDto, EventFeedProblemDto, EventFeedQueryDto, EventStreamQueryDto } from './event.dto';
import { EventStreams, STREAMS_PER_KEY } from './event-stream.service';
import { EventsService } from './events.service';
import { EVENT_STREAM_HEADERS, RECONNECT_AFTER_MS } from './server-sent-events';

const EXPIRED = 'Events after the position were removed by EVENT_RETENTION_DAYS (events_expired): resynchronise from the lists';
const BEYOND_THE_END =
  'An invalid query parameter; or `after` beyond the end of the feed (validation_failed naming it, with `lastSequence`, where a reader may start)';

/** The stream's answer: text, whose messages' `data` is an EventDto (x-event-data, for readers and the tests' answer checker). */
const EVENT_STREAM_CONTENT: Record<string, MediaTypeObject & { 'x-event-data': ReferenceObject }> = {
  'text/event-stream': {
    schema: {
      type: 'string',
      description:
        `Server-Sent Events: first \`retry: ${RECONNECT_AFTER_MS}\`, then one message per event ` +
        '(`id: <sequence>`, `event: <type>`, `data: <the event as JSON>`), and `: keep-alive` comments. ' +
        'The `data` of each message is an EventDto, as the feed lists it (x-event-data).',
    },
    'x-event-data': { $ref: getSchemaPath(EventDto) },
  },
};

@ApiTags('events')
@ApiKeyAuthenticated()
@Controller('api/v1/events')
export class EventsController {
  constructor(
    private readonly events: EventsService,
    private readonly streams: EventStreams,
  ) {}

  /**
   * The change feed: the project's events after `after`, oldest first. With `wait`, a read that
   * finds nothing yet is held until an event commits (answered within about 100 ms) or the wait ends.
   */
  @Get()
  @Header('Content-Type', JSON_CONTENT_TYPE)
  @ApiOkResponse({ type: EventFeedDto })
  @ApiBadRequestResponse({ description: BEYOND_THE_END, type: EventFeedProblemDto })
  @ApiGoneResponse({ description: EXPIRED, type: ProblemDto })
  listEvents(@CurrentCaller() caller: Caller, @Query() query: EventFeedQueryDto): Promise<JsonText<EventFeedDto>> {
    return this.events.feed(caller, query);
  }

  /**
   * The change feed as Server-Sent Events: the project's events after `Last-Event-ID` (the header
   * an EventSource sends when it reconnects), else after `after`, else from now on; oldest first,
   * then live as they commit (within about 100 ms, whichever instance wrote them). Each message
   * is `id: <sequence>`, `event: <type>` and `data: <the event as JSON, on one line>`; the first is
   * `retry: 2000`, and a `: keep-alive` comment comes every 15 s. The stream ends when the service
   * shuts down (reconnect with Last-Event-ID), within one keep-alive interval of its key's
   * revocation, and at once for a client that leaves 8 MiB unread. An idle stream holds no
   * database connection; a key holds at most 10 streams at once, counted across the service's
   * instances when they share Redis (REDIS_URL), else on each instance.
   */
  @Get('stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'The id of the last event received: the stream starts after it (wins over `after`)',
    schema: { type: 'string', pattern: '^\\s*\\d+\\s*$' },
  })
  @ApiOkResponse({
    description: 'The stream, open until the client leaves or the service shuts down',
    headers: {
      'Cache-Control': { description: 'Never cached', required: true, schema: { type: 'string', enum: [EVENT_STREAM_HEADERS['Cache-Control']] } },
      'X-Accel-Buffering': { description: 'Tells nginx not to buffer it', required: true, schema: { type: 'string', enum: ['no'] } },
    },
    content: EVENT_STREAM_CONTENT,
  })
  @ApiBadRequestResponse({
    description: `${BEYOND_THE_END}; or a Last-Event-ID that is not a sequence number, or beyond the end`,
    type: EventFeedProblemDto,
  })
  @ApiGoneResponse({ description: EXPIRED, type: ProblemDto })
  @ApiTooManyRequestsResponse({
    description: `Over the rate limit of the key, or the key already holds ${STREAMS_PER_KEY} open streams (across instances with REDIS_URL, else on this one) (rate_limited); see Retry-After`,
    type: ProblemDto,
  })
  async streamEvents(
    @CurrentCaller() caller: Caller,
    @Query() query: EventStreamQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.streams.open(caller, query, lastEventId, req, res);
  }
}

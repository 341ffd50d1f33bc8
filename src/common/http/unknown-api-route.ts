import { All, Body, Controller, HttpStatus, Module, Query } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Problem } from '../errors/problem';

/**
 * Answers every /api/v1 path and method that no controller serves with 404 not_found,
 * like any other /api/v1 answer: after the global guards, so it carries the RateLimit-*
 * headers (decisions.md section 10), counts against the key's limit, and is 401 without a
 * key. Express tries routes in the order they were registered, so UnknownApiRouteModule
 * must be the last module with /api/v1 routes that AppModule imports.
 */
@ApiExcludeController()
@Controller('api/v1')
class UnknownApiRouteController {
  // Query and body are taken (and ignored) only so that RequestShapeInterceptor does not
  // answer them as unknown_field: the route itself is what is unknown.
  // /api/v1 itself too ('').
  @All(['', '*path'])
  answer(@Query() _query: unknown, @Body() _body: unknown): never {
    throw new Problem(HttpStatus.NOT_FOUND, 'not_found', 'No endpoint serves this method and path');
  }
}

@Module({ controllers: [UnknownApiRouteController] })
export class UnknownApiRouteModule {}

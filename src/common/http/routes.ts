import { All, CanActivate, Controller, ExecutionContext, HttpStatus, Inject, Injectable, Module, Res, SetMetadata, UseGuards } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { adminInterfaceOff } from '../../admin/admin-interface';
import { AUTH_EXEMPT } from '../../auth/auth.decorators';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { Problem } from '../errors/problem';
import { CATCH_ALL_PATHS, isCatchAllRoute } from './catch-all';
import { surfaceOf } from './surface';

/** How Allow lists methods: the usual order, not the alphabet. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  matchers?: ((path: string) => unknown)[];
  match?(path: string): boolean;
}

/** A route of the router: its template and a test of a path against it, as the router itself matches. */
interface KnownRoute {
  template: string;
  methods: string[];
  matches(path: string): boolean;
}

/**
 * The routes the Express router holds, as Nest registered them (controllers, the OpenAPI document),
 * read from the router itself once every route is there: which methods serve a path. Not a list
 * kept by hand: a route added anywhere is known here, with the router's own matching (case
 * sensitive, a trailing slash allowed).
 */
@Injectable()
export class RouteTable {
  private routes: KnownRoute[] | undefined;

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  /**
   * The methods that serve `path` (HEAD wherever GET does; OPTIONS on every path the router
   * knows, since the CORS middleware or the catch-all answers it), in the usual order, and the
   * template of the route that serves it; none for a path no route serves.
   */
  allowed(path: string): { methods: string[]; template: string | null } {
    const matching = this.known().filter((route) => route.matches(path));
    // A path that names a route without a parameter means that route (ids are UUIDs, never `bulk`).
    const literal = matching.filter((route) => !route.template.includes('{'));
    const serving = literal.length > 0 ? literal : matching;
    if (serving.length === 0) return { methods: [], template: null };
    const methods = new Set(serving.flatMap((route) => route.methods));
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    return { methods: METHOD_ORDER.filter((method) => methods.has(method)), template: serving[0].template };
  }

  /**
   * A route with an id in its path took a request whose path names a route without one (`GET
   * /api/v1/tasks/bulk`, taken by `GET /api/v1/tasks/:taskId`): ids are UUIDs, so such a path
   * names the literal route, and its other methods are 405 like any method a path does not serve.
   */
  assertNamesItsRoute(request: Request): void {
    const template = (request.route as { path?: string } | undefined)?.path;
    if (!template?.includes(':')) return;
    const literal = this.literalPaths().get(request.path.replace(/(.)\/$/, '$1'));
    if (literal) throw methodNotAllowed(request.method, literal.template, this.allowed(request.path).methods);
  }

  /** The routes without a parameter, by path: what a path that names one of them means. */
  private literalPaths(): Map<string, KnownRoute> {
    return (this.literal ??= new Map(this.known().flatMap((route) => (route.template.includes('{') ? [] : [[route.template, route]]))));
  }

  private literal: Map<string, KnownRoute> | undefined;

  /** Read on first use: by the first request every route has been registered. */
  private known(): KnownRoute[] {
    if (this.routes) return this.routes;
    const router = (this.adapterHost.httpAdapter.getInstance() as { router: { stack: RouterLayer[] } }).router;
    this.routes = router.stack.flatMap((layer) => {
      const route = layer.route;
      // The catch-all is what answers the methods and paths no route serves.
      if (!route || isCatchAllRoute(route)) return [];
      const methods = Object.keys(route.methods).map((method) => method.toUpperCase());
      const matches = layer.matchers
        ? (path: string) => layer.matchers!.some((matcher) => Boolean(matcher(path)))
        : (path: string) => Boolean(layer.match?.(path));
      // `/api/v1/tasks/:taskId` as the OpenAPI document writes it: `/api/v1/tasks/{taskId}`.
      return [{ template: route.path.replace(/:(\w+)/g, '{$1}'), methods, matches }];
    });
    return this.routes;
  }
}

/**
 * Answers what the catch-all route receives: a method and path that no route serves. Runs after
 * the rate limit (the answer is counted and carries the RateLimit-* headers, as every /api/v1 and
 * /admin/v1 answer does) and before any key or token is checked: telling a typo for a typo needs
 * no key (decisions.md section 26).
 * - a path some route serves, with another method: 405 method_not_allowed with Allow (OPTIONS:
 *   204 with Allow, outside the paths whose OPTIONS the CORS middleware answers);
 * - /admin/v1 while the admin interface is off: 404 saying so and naming ADMIN_TOKEN;
 * - any other path: 404 not_found.
 */
@Injectable()
export class UnknownRouteGuard implements CanActivate {
  constructor(
    private readonly routes: RouteTable,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    const surface = surfaceOf(request);
    if (surface === 'admin' && this.config.adminToken === null) throw adminInterfaceOff();
    const { methods, template } = this.routes.allowed(request.path);
    if (template === null) throw noEndpoint(request.path);
    if (request.method === 'OPTIONS') return true;
    throw methodNotAllowed(request.method, template, methods);
  }
}

/** 404 not_found: no route serves `path`, whatever the method. */
export function noEndpoint(path: string): Problem {
  return new Problem(HttpStatus.NOT_FOUND, 'not_found', `No endpoint serves ${path}: GET /docs lists the endpoints`);
}

/** 405 method_not_allowed with Allow: `method` is not one of the `methods` that serve `template`. */
export function methodNotAllowed(method: string, template: string, methods: string[]): Problem {
  return new Problem(
    HttpStatus.METHOD_NOT_ALLOWED,
    'method_not_allowed',
    `${method} is not served at ${template}; it serves ${methods.join(', ')} (Allow)`,
    undefined,
    {},
    { Allow: methods.join(', ') },
  );
}

/**
 * The route of last resort, registered after every other (UnknownRouteModule comes last in
 * AppModule: Express tries routes in the order they were registered). UnknownRouteGuard answers
 * every request but an OPTIONS on a path some route serves, which is answered here.
 */
@ApiExcludeController()
@SetMetadata(AUTH_EXEMPT, 'unknown-route')
@UseGuards(UnknownRouteGuard)
@Controller()
class UnknownRouteController {
  constructor(private readonly routes: RouteTable) {}

  /** OPTIONS on a path some route serves (under /api/v1 and /docs the CORS middleware answers it first). */
  @All(CATCH_ALL_PATHS)
  answerOptions(@Res() res: Response): void {
    res.status(204).setHeader('Allow', this.routes.allowed(res.req.path).methods.join(', ')).end();
  }
}

@Module({ controllers: [UnknownRouteController], providers: [UnknownRouteGuard] })
export class UnknownRouteModule {}

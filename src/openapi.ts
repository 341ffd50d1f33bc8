import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

/** Swagger UI at /docs and the OpenAPI 3 document at /docs/openapi.json. */
export function setupOpenApi(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Task and sprint planning service')
    .setDescription(
      [
        "Manage a project's tasks and sprints. Every `/api/v1` request acts on the project of its key, sent as",
        '`Authorization: Bearer <key>`. Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`.',
        'Every `/api/v1` answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.',
      ].join(' '),
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A project key (tsk_...)' }, 'api-key')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN of the deployment' }, 'admin-token')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  addCommonErrors(document);
  useProblemJsonForErrors(document);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/openapi.json', yamlDocumentUrl: 'docs/openapi.yaml' });
  return document;
}

/**
 * Answers any operation can give, documented once here rather than on every route: 400 for
 * an unknown query parameter (and a bad body), 413 and 415 where a body is taken, 500.
 */
function addCommonErrors(document: OpenAPIObject): void {
  const problem = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ProblemDto' } } },
  });
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of [pathItem.get, pathItem.post, pathItem.patch, pathItem.put, pathItem.delete]) {
      if (!operation) continue;
      const responses = operation.responses;
      responses['400'] ??= problem('An unknown query parameter, or a body sent to a route that takes none (unknown_field)');
      if (operation.requestBody) {
        responses['413'] ??= problem('The body is larger than 1 MiB (payload_too_large)');
        responses['415'] ??= problem('The body is not application/json (unsupported_media_type)');
      }
      responses['500'] ??= problem('Unexpected error; the body says nothing about its cause (internal)');
    }
  }
}

/** Error answers are application/problem+json, not application/json. */
function useProblemJsonForErrors(document: OpenAPIObject): void {
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem)) {
      if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
      for (const [status, response] of Object.entries(operation.responses as Record<string, { content?: Record<string, unknown> }>)) {
        if (Number(status) >= 400 && response.content?.['application/json']) {
          response.content = { 'application/problem+json': response.content['application/json'] };
        }
      }
    }
  }
}

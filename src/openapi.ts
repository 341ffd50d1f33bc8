import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

/** Swagger UI at /docs and the OpenAPI 3 document at /docs/openapi.json. */
export function setupOpenApi(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Task and sprint planning service')
    .setDescription(
      [
        'Manage a project\'s tasks and sprints. Every `/api/v1` request acts on the project of its key, sent as',
        '`Authorization: Bearer <key>`. Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`.',
        'Every `/api/v1` answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.',
      ].join(' '),
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A project key (tsk_...)' }, 'api-key')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN of the deployment' }, 'admin-token')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  useProblemJsonForErrors(document);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/openapi.json', yamlDocumentUrl: 'docs/openapi.yaml' });
  return document;
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

import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * Describes what a webhook's URL receives, as an OpenAPI 3.0 callback of `POST /api/v1/webhooks`
 * (3.0 has no top-level `webhooks`): each event POSTed with its JSON (the EventDto of the change
 * feed) and the Standard Webhooks headers. For setupOpenApi, after the document is created.
 */
export function describeWebhookDeliveries(document: OpenAPIObject): void {
  const create = document.paths['/api/v1/webhooks']?.post;
  if (!create) return;
  const header = (name: string, description: string, example: string) => ({
    name,
    in: 'header' as const,
    required: true,
    description,
    schema: { type: 'string' as const },
    example,
  });
  create.callbacks = {
    event: {
      '{$request.body#/url}': {
        post: {
          summary: 'One event, delivered to the webhook URL',
          description: [
            'Each event the webhook subscribes to is POSTed to its url, with the same JSON as GET /api/v1/events shows it,',
            'signed as the Standard Webhooks specification describes (any Standard Webhooks library verifies it with the secret).',
            'Any 2xx within WEBHOOK_TIMEOUT_MS is success; anything else (another status, a redirect, a timeout, no connection)',
            'is a failed attempt, retried after each delay of WEBHOOK_RETRY_SCHEDULE. Delivery is at least once: dedupe on',
            'webhook-id. Events may arrive out of order: order them by sequence.',
          ].join(' '),
          parameters: [
            header('webhook-id', 'The event id: the same on every attempt of the event', '0b9f4c5e-2f0a-4c8e-9a57-1f3d2b6c7a10'),
            header('webhook-timestamp', "The attempt's time, in Unix seconds", '1795450000'),
            header(
              'webhook-signature',
              '`v1,` and the base64 HMAC-SHA256, keyed with the base64-decoded secret after `whsec_`, of `{webhook-id}.{webhook-timestamp}.{body}`',
              'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
            ),
          ],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/EventDto' } } } },
          // The receiver authenticates the sender by the signature, not by a key of ours.
          security: [],
          responses: {
            '2XX': { description: 'Received. Answer quickly; do the work afterwards.' },
            '4XX': { description: 'A failed attempt: retried per WEBHOOK_RETRY_SCHEDULE, then the delivery is failed.' },
            default: { description: 'A failed attempt: retried per WEBHOOK_RETRY_SCHEDULE, then the delivery is failed.' },
          },
        },
      },
    },
  };
}

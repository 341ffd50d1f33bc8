import { ApiProperty, PartialType } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsBoolean, IsOptional, IsString, ValidateBy } from 'class-validator';
import { EVENT_TYPES } from '../changes/change';
import { IsEachOneOf, IsText, OptionalButNotNull } from '../common/validation/validators';

/** What a webhook may subscribe to: event types, or `*` alone for all of them. */
export const WEBHOOK_EVENT_CHOICES = [...EVENT_TYPES, '*'] as const;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

/** `*` stands for every type and is sent alone: `["*"]`. */
function StarStandsAlone(): PropertyDecorator {
  return ValidateBy({
    name: 'starStandsAlone',
    validator: {
      validate: (value) => !Array.isArray(value) || !value.includes('*') || value.length === 1,
      defaultMessage: () => 'must be either event types or ["*"] alone',
    },
  });
}

export class CreateWebhookDto {
  /**
   * Where to POST each event. https:// only, and the host must resolve to public addresses only
   * (400 invalid_webhook_url otherwise), unless the deployment sets WEBHOOK_ALLOW_PRIVATE_URLS=true.
   */
  @IsString()
  @IsText(1, 2048)
  @ApiProperty({ example: 'https://example.com/webhooks/tasks', maxLength: 2048 })
  url: string;

  /** The event types to deliver (a set: duplicates collapse), or `["*"]` for every type, also types added later. */
  @IsArray()
  @ArrayNotEmpty({ message: 'must name at least one event type, or be ["*"]' })
  @ArrayMaxSize(100)
  @IsEachOneOf(WEBHOOK_EVENT_CHOICES, 'an event type (or *)')
  @StarStandsAlone()
  @ApiProperty({ type: [String], enum: WEBHOOK_EVENT_CHOICES, example: ['task.created', 'task.updated'] })
  events: string[];

  /** Up to 500 characters, for the people who manage webhooks. */
  @IsOptional()
  @IsString()
  @IsText(0, 500)
  description?: string | null;
}

/** Any of url, events, description (null clears it) and enabled; an empty body is 400 empty_body. */
export class UpdateWebhookDto extends PartialType(CreateWebhookDto, { skipNullProperties: false }) {
  /** false stops deliveries (pending ones are closed as failed); true resumes them for new events. */
  @OptionalButNotNull()
  @IsBoolean()
  enabled?: boolean;
}

export class WebhookDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  url: string;
  @ApiProperty({ type: [String], enum: WEBHOOK_EVENT_CHOICES })
  events: string[];
  @ApiProperty({ type: String, nullable: true })
  description: string | null;
  /** false: nothing is delivered; set by PATCH, or by the service after 5 days in which every attempt failed. */
  enabled: boolean;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;
}

export class WebhookResponseDto {
  webhook: WebhookDto;
}

export class CreatedWebhookDto {
  webhook: WebhookDto;
  /**
   * The signing secret: `whsec_` and base64 of 32 random bytes. Shown this once; verify each
   * delivery's `webhook-signature` with it (any Standard Webhooks library).
   */
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4GA8hZ9yq0o=' })
  secret: string;
}

export class WebhookListDto {
  /** Newest first. */
  webhooks: WebhookDto[];
}

export class WebhookDeliveryDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  /** The event delivered; also the `webhook-id` header of every attempt. */
  @ApiProperty({ format: 'uuid' })
  eventId: string;
  @ApiProperty({ enum: EVENT_TYPES })
  eventType: string;
  @ApiProperty({ enum: DELIVERY_STATUSES, description: 'pending: an attempt is due or running; succeeded: a 2xx came back; failed: no attempt left' })
  status: string;
  @ApiProperty({ type: 'integer', description: 'Attempts made so far' })
  attempts: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastAttemptAt: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'pending only: when the next attempt is due (while an attempt runs, when it is given up for lost)',
  })
  nextAttemptAt: string | null;
  @ApiProperty({ type: 'integer', nullable: true, description: "The last attempt's HTTP status, when the receiver answered" })
  responseStatus: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why the last attempt failed; null after a success' })
  error: string | null;
}

export class WebhookDeliveryPageDto {
  /** Newest first. */
  deliveries: WebhookDeliveryDto[];
  @ApiProperty({ type: String, nullable: true, description: 'null on the last page' })
  nextCursor: string | null;
}

export class WebhookDeliveryResponseDto {
  delivery: WebhookDeliveryDto;
}

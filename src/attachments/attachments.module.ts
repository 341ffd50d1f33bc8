import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { AttachmentBytes } from './attachment-bytes.service';
import { AttachmentDownloadsController, AttachmentsController } from './attachments.controller';
import { AttachmentsService } from './attachments.service';
import { DownloadLinks } from './download-links';
import { ATTACHMENT_STORE, type AttachmentStore } from './storage/attachment-store';
import { DirectoryAttachmentStore } from './storage/directory-store';
import { S3AttachmentStore } from './storage/s3-store';

/** The one store of the app: an S3 bucket when S3_BUCKET is set, else the directory ATTACHMENTS_DIR. */
function attachmentStore(config: AppConfig): AttachmentStore {
  if (config.s3Bucket !== null) {
    return new S3AttachmentStore({
      bucket: config.s3Bucket,
      endpoint: config.s3Endpoint,
      region: config.s3Region,
      forcePathStyle: config.s3ForcePathStyle,
    });
  }
  return new DirectoryAttachmentStore(config.attachmentsDir);
}

/** A task's attachments (decisions.md section 24). */
@Module({
  imports: [IdempotencyModule],
  controllers: [AttachmentsController, AttachmentDownloadsController],
  providers: [AttachmentsService, AttachmentBytes, DownloadLinks, { provide: ATTACHMENT_STORE, inject: [APP_CONFIG], useFactory: attachmentStore }],
  // The trash's purge releases bytes (src/trash); the demo seed uploads through the service.
  exports: [AttachmentsService, AttachmentBytes],
})
export class AttachmentsModule {}

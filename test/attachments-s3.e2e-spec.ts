import { existsSync } from 'node:fs';
import { S3AttachmentStore } from '../src/attachments/storage/s3-store';
import { attachmentRules, upload } from './support/attachment-rules';
import { createProject, createTask } from './support/fixtures';
import { useS3Server } from './support/s3-server';
import { engine, useTestApp } from './support/test-app';

// decisions.md section 24 with S3_BUCKET set, against s3rver (test/support/s3-server.ts), on
// PostgreSQL, as a deployment with several instances sharing a bucket is.
(engine === 'postgresql' ? describe : describe.skip)('attachments (decisions.md section 24), S3 store on s3rver', () => {
  jest.setTimeout(5 * 60_000);
  const s3 = useS3Server();

  describe('every rule of section 24', () => attachmentRules(s3.config));

  describe('the bytes are in the bucket', () => {
    const t = useTestApp(s3.config);

    it('an upload is an object <projectId>/<sha256> of the bucket, read back byte for byte, and nothing is written to ATTACHMENTS_DIR', async () => {
      const project = await createProject(t, 'Bucket');
      const task = await createTask(project);
      const bytes = Buffer.from('bytes that live in S3\n');
      const attachment = (await upload(project.api, task.id, bytes, 'in-s3.txt').expect(201)).body.attachment;
      // A store of its own on the same bucket: what another instance of the service would see.
      const bucket = new S3AttachmentStore({ bucket: s3.bucket, endpoint: s3.config.s3Endpoint, forcePathStyle: true });
      const chunks: Buffer[] = [];
      for await (const chunk of await bucket.read(`${project.id}/${attachment.sha256}`)) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks)).toEqual(bytes);
      expect(existsSync(t.config.attachmentsDir)).toBe(false);
      await project.api.delete(`/api/v1/tasks/${task.id}/attachments/${attachment.id}`).expect(204);
      const gone = async () =>
        bucket.read(`${project.id}/${attachment.sha256}`).then(
          () => false,
          () => true,
        );
      for (let i = 0; i < 100 && !(await gone()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await gone()).toBe(true);
    });
  });
});

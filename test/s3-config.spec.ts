import { ConfigError, loadConfig } from '../src/config/app-config';

describe('S3 configuration (S3_*)', () => {
  it('keeps attachments out of S3 when S3_BUCKET is unset, with us-east-1 and virtual-hosted style by default', () => {
    expect(loadConfig({})).toMatchObject({ s3Bucket: null, s3Endpoint: null, s3Region: 'us-east-1', s3ForcePathStyle: false });
  });

  it('reads the bucket, endpoint, region and path style', () => {
    const config = loadConfig({ S3_BUCKET: 'task-files', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_REGION: 'eu-west-1', S3_FORCE_PATH_STYLE: 'true' });
    expect(config).toMatchObject({ s3Bucket: 'task-files', s3Endpoint: 'http://127.0.0.1:9000', s3Region: 'eu-west-1', s3ForcePathStyle: true });
  });

  it('takes the region from AWS_REGION when S3_REGION is unset, and S3_REGION over it', () => {
    expect(loadConfig({ S3_BUCKET: 'task-files', AWS_REGION: 'ap-south-1' }).s3Region).toBe('ap-south-1');
    expect(loadConfig({ S3_BUCKET: 'task-files', AWS_REGION: 'ap-south-1', S3_REGION: 'eu-central-1' }).s3Region).toBe('eu-central-1');
  });

  it.each([
    ['S3_BUCKET', 'ab'],
    ['S3_BUCKET', 'Task_Files'],
    ['S3_BUCKET', 'x'.repeat(64)],
    ['S3_ENDPOINT', 'ftp://127.0.0.1:9000'],
    ['S3_ENDPOINT', 'http://127.0.0.1:9000/bucket'],
    ['S3_ENDPOINT', '127.0.0.1:9000'],
    ['S3_REGION', 'EU West'],
    ['S3_FORCE_PATH_STYLE', 'yes'],
  ])('refuses to start on %s=%j, naming it', (name, value) => {
    expect(() => loadConfig({ S3_BUCKET: 'task-files', [name]: value })).toThrow(new RegExp(`^${name} must`));
  });

  it.each(['S3_ENDPOINT', 'S3_REGION', 'S3_FORCE_PATH_STYLE'])('refuses %s without S3_BUCKET, which would be silently unused', (name) => {
    const value = { S3_ENDPOINT: 'http://127.0.0.1:9000', S3_REGION: 'eu-west-1', S3_FORCE_PATH_STYLE: 'true' }[name];
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(/S3_BUCKET is not/);
  });
});

import { createHash } from 'node:crypto';
import { createProject, TestProject, withKey } from './support/fixtures';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

describe('keys and authentication', () => {
  let t: TestApp;
  let project: TestProject;
  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t);
  });
  afterAll(() => t.close());

  function expectUnauthenticated(res: { status: number; headers: Record<string, string>; body: { code: string } }) {
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('unauthenticated');
  }

  it('answers 401 with WWW-Authenticate: Bearer when no Authorization header is sent', async () => {
    expectUnauthenticated(await t.http.get('/api/v1/members'));
  });

  it('answers 401 when the Authorization header is not a Bearer key', async () => {
    expectUnauthenticated(await t.http.get('/api/v1/members').set('Authorization', `Basic ${Buffer.from('a:b').toString('base64')}`));
    expectUnauthenticated(await t.http.get('/api/v1/members').set('Authorization', 'Bearer'));
  });

  it('answers 401 for an unknown key', async () => {
    expectUnauthenticated(await withKey(t, 'tsk_not-a-key-of-this-service').get('/api/v1/members'));
  });

  it('does not accept the admin token as a project key', async () => {
    expectUnauthenticated(await withKey(t, ADMIN_TOKEN).get('/api/v1/members'));
  });

  it('accepts a valid key and acts on its own project only', async () => {
    const other = await createProject(t, 'Other project');
    const mine = await project.api.get('/api/v1/members').expect(200);
    const theirs = await other.api.get('/api/v1/members').expect(200);
    expect(mine.body.members.map((m: { membershipId: string }) => m.membershipId).sort()).toEqual(
      project.members.map((m) => m.membershipId).sort(),
    );
    expect(theirs.body.members.map((m: { membershipId: string }) => m.membershipId)).not.toContain(project.members[0].membershipId);
  });

  it('accepts the Bearer scheme name in any case', async () => {
    await t.http.get('/api/v1/members').set('Authorization', `bearer ${project.key}`).expect(200);
  });

  it('stops accepting a key at once when it is revoked', async () => {
    const key = await project.issueKey([], 'Soon revoked');
    await key.api.get('/api/v1/members').expect(200);
    await withKey(t, ADMIN_TOKEN).delete(`/admin/v1/keys/${key.id}`).expect(204);
    expectUnauthenticated(await key.api.get('/api/v1/members'));
  });

  it('stores keys only as a sha256 hash, with a readable tsk_ prefix', async () => {
    const key = await project.issueKey(['tasks:create'], 'Hashed');
    expect(key.secret).toMatch(/^tsk_[A-Za-z0-9_-]{43}$/);
    const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(row.secretHash).toBe(createHash('sha256').update(key.secret).digest('hex'));
    expect(row.prefix).toBe(key.secret.slice(0, 12));
    expect(JSON.stringify(row)).not.toContain(key.secret);
  });

  it('records when a key was last used', async () => {
    const key = await project.issueKey([], 'Used');
    await key.api.get('/api/v1/labels').expect(200);
    let lastUsedAt: Date | null = null;
    for (let attempt = 0; attempt < 50 && !lastUsedAt; attempt++) {
      lastUsedAt = (await t.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt;
      if (!lastUsedAt) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(lastUsedAt).toBeInstanceOf(Date);
  });
});

import { randomInt } from 'node:crypto';
import { Agent } from 'node:http';
import type { Test } from 'supertest';
import { ALL_PERMISSIONS, Permission } from '../../src/auth/permissions';
import { ADMIN_TOKEN, startedLater, TestApp } from './test-app';

/** Requests with a key already set. */
export interface KeyClient {
  get(url: string): Test;
  post(url: string, body?: object | string): Test;
  patch(url: string, body?: object | string): Test;
  delete(url: string): Test;
}

export function withKey(t: TestApp, key: string): KeyClient {
  const auth = (test: Test) => test.set('Authorization', `Bearer ${key}`);
  const send = (test: Test, body?: object | string) => (body === undefined ? test : test.send(body));
  return {
    get: (url) => auth(t.http.get(url)),
    post: (url, body) => send(auth(t.http.post(url)), body),
    patch: (url, body) => send(auth(t.http.patch(url)), body),
    delete: (url) => auth(t.http.delete(url)),
  };
}

export function asAdmin(t: TestApp): KeyClient {
  return withKey(t, ADMIN_TOKEN);
}

export interface TestProject {
  id: string;
  /** A key with every permission, named "Test key". */
  key: string;
  api: KeyClient;
  members: { membershipId: string; name: string }[];
  labels: { id: string; name: string; color: string }[];
  /** Issues another key of this project. */
  issueKey(permissions: Permission[], name?: string): Promise<{ id: string; secret: string; api: KeyClient }>;
}

/**
 * A project of its own for a test, set up through the admin interface as a client
 * would: two members, three labels and a key with every permission. Giving each test
 * its own project isolates tests without truncating anything.
 */
export async function createProject(t: TestApp, name = 'Test project'): Promise<TestProject> {
  const admin = asAdmin(t);
  const project = (await admin.post('/admin/v1/projects', { name }).expect(201)).body.project;
  const members = [];
  for (const memberName of ['Ada', 'Grace']) {
    members.push((await admin.post(`/admin/v1/projects/${project.id}/members`, { name: memberName }).expect(201)).body.member);
  }
  const labels = [];
  for (const [labelName, color] of [
    ['bug', '#d73a4a'],
    ['feature', '#0e8a16'],
    ['docs', '#0075ca'],
  ]) {
    labels.push((await admin.post(`/admin/v1/projects/${project.id}/labels`, { name: labelName, color }).expect(201)).body.label);
  }
  const issueKey = async (permissions: Permission[], keyName = 'Test key') => {
    const issued = (await admin.post(`/admin/v1/projects/${project.id}/keys`, { name: keyName, permissions }).expect(201)).body;
    return { id: issued.key.id as string, secret: issued.secret as string, api: withKey(t, issued.secret) };
  };
  const key = await issueKey([...ALL_PERMISSIONS]);
  return { id: project.id, key: key.secret, api: key.api, members, labels, issueKey };
}

/** A project of its own (createProject) for a file or a describe block, made in a beforeAll: `const project = useProject(t)`. */
export function useProject(t: TestApp, name?: string): TestProject {
  let project: TestProject | undefined;
  beforeAll(async () => {
    project = await createProject(t, name);
  });
  return startedLater(() => project, 'useProject(): the project is made in beforeAll; use it inside a test or a hook');
}

/** Creates a task through the API and returns it (the answer's `task`). */
export async function createTask(project: TestProject, body: Record<string, unknown> = {}): Promise<TaskJson> {
  const res = await project.api.post('/api/v1/tasks', { title: 'A task', ...body });
  if (res.status !== 201) throw new Error(`creating a task answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.task;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TaskJson = Record<string, any> & { id: string };

export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

/**
 * An HTTP agent whose requests come from `address` (any of 127.0.0.0/8 reaches the test app), for
 * rules that count per client address: `t.http.get(url).agent(fromAddress('127.0.0.2'))`.
 */
export function fromAddress(address: string): Agent {
  return new Agent({ localAddress: address });
}

/**
 * An agent from a random address of 127.0.0.0/8: a run's own, so that counters shared with other
 * runs (a Redis server the other engine's run, or an earlier one, also counts in) count it apart.
 */
export function fromRandomAddress(): Agent {
  return fromAddress(`127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(1, 255)}`);
}

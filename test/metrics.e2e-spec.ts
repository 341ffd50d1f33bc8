import { createTask, NO_SUCH_ID, useProject } from './support/fixtures';
import { engine, useTestApp } from './support/test-app';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the Prometheus text exposition format (0.0.4): `# HELP` and `# TYPE` lines, and
 * samples `name{label="value",...} number`. Throws on any line it cannot read.
 */
function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ')) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1], type[2]);
      continue;
    }
    // Prometheus reads NaN and Inf in any case (prom-client writes an empty event-loop histogram's mean as "Nan").
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$/i.exec(line);
    if (!sample) throw new Error(`Not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    const labelText = sample[2] ?? '';
    const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/gy;
    let consumed = 0;
    for (let match = labelPattern.exec(labelText); match; match = labelPattern.exec(labelText)) {
      labels[match[1]] = match[2].replace(/\\(.)/g, (_escape, char: string) => (char === 'n' ? '\n' : char));
      consumed = labelPattern.lastIndex;
    }
    if (consumed !== labelText.length) throw new Error(`Unreadable labels: ${line}`);
    const value = /nan/i.test(sample[3]) ? NaN : /inf/i.test(sample[3]) ? (sample[3].startsWith('-') ? -Infinity : Infinity) : Number(sample[3]);
    samples.push({ name: sample[1], labels, value });
  }
  return { samples, types };
}

describe('GET /metrics', () => {
  const t = useTestApp();
  const project = useProject(t);

  const scrape = async () => {
    const res = await t.http.get('/metrics').expect(200);
    return { text: res.text, contentType: res.headers['content-type'], ...parsePrometheus(res.text) };
  };
  const valueOf = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
    samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))?.value ?? 0;

  it('answers the Prometheus text format without a key, every line readable', async () => {
    const { contentType, samples, types } = await scrape();
    // Parameters in any order (Express moves charset).
    expect(contentType.split(/;\s*/).sort()).toEqual(['charset=utf-8', 'text/plain', 'version=0.0.4']);
    expect(samples.length).toBeGreaterThan(50);
    expect(types.get('http_requests_total')).toBe('counter');
    expect(types.get('http_request_duration_seconds')).toBe('histogram');
  });

  it('counts requests and their durations by method, route template and status, never by raw path', async () => {
    const tasks = [await createTask(project), await createTask(project), await createTask(project)];
    const before = (await scrape()).samples;
    for (const task of tasks) await project.api.get(`/api/v1/tasks/${task.id}`).expect(200);
    await project.api.get(`/api/v1/tasks/${NO_SUCH_ID}`).expect(404);
    await t.http.get('/no/such/path').expect(404);
    const { text, samples } = await scrape();

    const ok = { method: 'GET', route: '/api/v1/tasks/:taskId', status: '200' };
    const missing = { method: 'GET', route: '/api/v1/tasks/:taskId', status: '404' };
    expect(valueOf(samples, 'http_requests_total', ok) - valueOf(before, 'http_requests_total', ok)).toBe(3);
    expect(valueOf(samples, 'http_requests_total', missing) - valueOf(before, 'http_requests_total', missing)).toBe(1);
    expect(valueOf(samples, 'http_request_duration_seconds_count', ok) - valueOf(before, 'http_request_duration_seconds_count', ok)).toBe(3);
    expect(valueOf(samples, 'http_request_duration_seconds_bucket', { ...ok, le: '+Inf' })).toBe(
      valueOf(samples, 'http_request_duration_seconds_count', ok),
    );
    expect(valueOf(samples, 'http_request_duration_seconds_sum', ok)).toBeGreaterThan(0);
    expect(valueOf(samples, 'http_requests_total', { method: 'POST', route: '/api/v1/tasks', status: '201' })).toBeGreaterThanOrEqual(3);
    // A path no route serves is one series, whatever the path.
    expect(valueOf(samples, 'http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    for (const task of tasks) expect(text).not.toContain(task.id);
    expect(text).not.toContain(NO_SUCH_ID);
    expect(text).not.toContain('/no/such/path');
  });

  it('shows the requests in flight, the process, the event loop and the heap', async () => {
    const { samples } = await scrape();
    // The scrape itself is in flight while the metrics are collected.
    expect(valueOf(samples, 'http_requests_in_flight')).toBe(1);
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_active_handles_total',
    ]) {
      expect(samples.some((sample) => sample.name === name)).toBe(true);
    }
    expect(valueOf(samples, 'process_start_time_seconds')).toBeGreaterThan(0);
  });

  if (engine === 'postgresql') {
    it('shows the database pool: connections by state, waiting requests and its size (PostgreSQL)', async () => {
      await Promise.all(Array.from({ length: 4 }, () => createTask(project)));
      const { samples } = await scrape();
      expect(valueOf(samples, 'db_pool_max_connections')).toBe(10);
      const idle = valueOf(samples, 'db_pool_connections', { state: 'idle' });
      const busy = valueOf(samples, 'db_pool_connections', { state: 'busy' });
      expect(idle).toBeGreaterThanOrEqual(1);
      expect(idle + busy).toBeLessThanOrEqual(10);
      expect(samples.some((sample) => sample.name === 'db_pool_waiting_requests')).toBe(true);
    });
  } else {
    it('has no pool metrics on the embedded database, which has no pool (one connection in the process)', async () => {
      const { samples } = await scrape();
      expect(samples.filter((sample) => sample.name.startsWith('db_pool_'))).toEqual([]);
    });
  }

  it('is documented in the OpenAPI document as a public text/plain operation', async () => {
    const document = (await t.http.get('/docs/openapi.json').expect(200)).body;
    const operation = document.paths['/metrics'].get;
    expect(operation.responses['200'].content['text/plain'].schema).toEqual({ type: 'string' });
    expect(operation.security ?? []).toEqual([]);
  });
});

'use strict';
// Summary of a V8 .cpuprofile (written by `node --cpu-prof`): where the service's CPU
// time went, by package and by function (self time, i.e. time in the function itself).

const fs = require('node:fs');

/** node_modules/<package>, the service's own code (dist/), Node's internals, or V8 itself. */
function owner(url) {
  if (!url) return '(V8: GC, native, idle)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.includes('/dist/')) return 'service code (dist/)';
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

function summarise(file, { top = 30 } = {}) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  // timeDeltas[i] is the time before sample i: charge it to the sampled node.
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  let total = 0;
  let idle = 0;
  const byOwner = new Map();
  const byFunction = new Map();
  for (const [id, micros] of self) {
    const { callFrame } = byId.get(id);
    total += micros;
    if (callFrame.functionName === '(idle)') {
      idle += micros;
      continue;
    }
    const who = owner(callFrame.url);
    byOwner.set(who, (byOwner.get(who) ?? 0) + micros);
    const name = `${callFrame.functionName || '(anonymous)'} ${callFrame.url ? `${callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${callFrame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  }
  const busy = total - idle;

  // Inclusive: a sample counts for every owner on its stack (once each), e.g. the time
  // spent in Prisma including the Node internals and the WebAssembly it calls.
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map();
  const stackOwners = new Map();
  const ownersOf = (id) => {
    if (!stackOwners.has(id)) {
      const owners = new Set();
      for (let at = id; at !== undefined; at = parent.get(at)) {
        const { url, functionName } = byId.get(at).callFrame;
        if (url || functionName === 'writev') owners.add(functionName === 'writev' ? 'writev (socket writes, in the kernel)' : owner(url));
      }
      stackOwners.set(id, owners);
    }
    return stackOwners.get(id);
  };
  for (const [id, micros] of self) {
    if (byId.get(id).callFrame.functionName === '(idle)') continue;
    for (const who of ownersOf(id)) inclusive.set(who, (inclusive.get(who) ?? 0) + micros);
  }
  const pct = (micros) => `${((100 * micros) / busy).toFixed(1)} %`;
  const sorted = (map) => [...map.entries()].sort((a, b) => b[1] - a[1]);
  const lines = [
    `Profile ${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (${((100 * busy) / total).toFixed(0)} %); shares below are of the busy time.`,
    '',
    'Self time (the function on top of the stack), by owner:',
    '',
    '| owner | self time | share |',
    '|---|---|---|',
    ...sorted(byOwner)
      .slice(0, 20)
      .map(([who, micros]) => `| ${who} | ${(micros / 1e6).toFixed(2)} s | ${pct(micros)} |`),
    '',
    'Inclusive (the owner is anywhere on the stack: its own time and what it calls):',
    '',
    '| owner | inclusive time | share |',
    '|---|---|---|',
    ...sorted(inclusive)
      .slice(0, 20)
      .map(([who, micros]) => `| ${who} | ${(micros / 1e6).toFixed(2)} s | ${pct(micros)} |`),
    '',
    '| function (self time) | self time | share |',
    '|---|---|---|',
    ...sorted(byFunction)
      .slice(0, top)
      .map(([name, micros]) => `| ${name.replace(/\|/g, '\\|')} | ${(micros / 1e6).toFixed(2)} s | ${pct(micros)} |`),
  ];
  return lines.join('\n') + '\n';
}

if (require.main === module) process.stdout.write(summarise(process.argv[2]));

module.exports = { summarise };

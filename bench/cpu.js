'use strict';
// CPU time spent per request, by the server process and (on PostgreSQL) by the database
// backends serving it. Unlike requests/s, CPU time hardly depends on what else the shared
// machine is doing, so it compares well across runs. Read from /proc (Linux; elsewhere
// the columns stay empty).

const fs = require('node:fs');
const { Client } = require('pg');

// Clock ticks per second of /proc/<pid>/stat: 100 on every Linux we run on.
const TICK_MS = 10;

/** utime + stime of a process in ms, or null when it cannot be read. */
function processCpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which is in parentheses and may hold spaces).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/**
 * Meters one server process, and the PostgreSQL backends connected to the bench database
 * when `databaseUrl` is given (found through pg_stat_activity; the database server must be
 * on this machine for /proc to show them).
 */
async function cpuMeter(pid, databaseUrl) {
  let client = null;
  if (databaseUrl) {
    client = new Client({ connectionString: databaseUrl });
    await client.connect();
  }
  const backends = async () => {
    if (!client) return new Map();
    const { rows } = await client.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return new Map(rows.map((row) => [row.pid, processCpuMs(row.pid)]).filter(([, ms]) => ms !== null));
  };
  return {
    async start() {
      return { server: processCpuMs(pid), db: await backends() };
    },
    /** CPU ms since `mark`: the server's, and the backends' (new backends count in full). */
    async since(mark) {
      const server = processCpuMs(pid);
      const now = await backends();
      let db = 0;
      for (const [backend, ms] of now) db += ms - (mark.db.get(backend) ?? 0);
      return { serverMs: server === null || mark.server === null ? null : server - mark.server, dbMs: client && now.size ? db : null };
    },
    close: () => client?.end(),
  };
}

module.exports = { cpuMeter, processCpuMs };

// Real access servers s1..s4 (or some of them) from the fat jar (target/shine-server.jar), as scripts/federation.sh
// runs them: each with its own database, server keys made by `keygen` and pinned by the others, a compressed
// schedule.
// Ports are free ones and database names random, so a run shares the machine with anything else.
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const ROOT = resolve(new URL('..', import.meta.url).pathname);
const JAR = join(ROOT, 'target', 'shine-server.jar');
const DB_HOST = process.env.SHINE_DB_HOST || '127.0.0.1';
const DB_PORT = Number(process.env.SHINE_DB_PORT || 5432);
const DB_USER = process.env.SHINE_DB_USER || 'postgres';

/** Attempts at 0, 2, 4, 6 s; the last at 20 s, then failed. */
export const SCHEDULE_MS = [0, 2000, 4000, 6000, 20000];

function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/**
 * Gives a file input of a page its file once the page shows the input. The page wires its controls first and shows
 * them after (app.js); Playwright sets files on a hidden input too, and a change event fired before the page listens
 * is lost: on a loaded machine the test then waited 30 s for a login that never started.
 */
export async function chooseFile(input, file, timeout = 30_000) {
  await input.waitFor({ timeout });
  await input.setInputFiles(file);
}

export function keygen(file, login) {
  const args = ['-jar', JAR, 'keygen', '--out', file];
  if (login) {
    args.push('--login', login);
  }
  execFileSync('java', args, { stdio: 'ignore' });
  return file;
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

export class Federation {
  constructor(dir, { maxClockSkewMs } = {}) {
    this.dir = dir;
    this.maxClockSkewMs = maxClockSkewMs;
    this.servers = new Map();
    this.run = Math.random().toString(36).slice(2, 8);
  }

  /**
   * Starts the servers `names` (by default the four), each a pinned peer of the others. `options.maxClockSkewMs`
   * widens the servers' clock window (delivery.maxClockSkewMs), so that a page whose clock is set back can write a
   * message dated yesterday.
   */
  static async start(dir, names = ['s1', 's2', 's3', 's4'], options = {}) {
    mkdirSync(dir, { recursive: true });
    const federation = new Federation(dir, options);
    for (const name of names) {
      const keyFile = keygen(join(dir, `${name}.key`));
      const publicKeyB64 = JSON.parse(readFileSync(keyFile, 'utf8')).publicKeyB64;
      federation.servers.set(name, { name, port: await freePort(), keyFile, publicKeyB64, process: null });
    }
    for (const server of federation.servers.values()) {
      federation.writeConfig(server);
    }
    const started = await Promise.allSettled(names.map((name) => federation.startOne(name)));
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) {
      // the test never gets this federation to stop: the servers that did start would outlive the run
      await federation.stop();
      throw failed.reason;
    }
    return federation;
  }

  url(name) {
    return `ws://127.0.0.1:${this.servers.get(name).port}/ws`;
  }

  http(name) {
    return `http://127.0.0.1:${this.servers.get(name).port}`;
  }

  database(name) {
    return `shine_web_${this.run}_${name}`;
  }

  /** Runs one SQL statement in the database of server `name` (psql); answers its output. */
  sql(name, statement) {
    return execFileSync('psql', ['-h', DB_HOST, '-p', String(DB_PORT), '-U', DB_USER, '-d', this.database(name),
      '-qAtc', statement], { encoding: 'utf8', env: { ...process.env, PGPASSWORD: process.env.SHINE_DB_PASSWORD || '' } });
  }

  writeConfig(server) {
    const peers = [...this.servers.values()].filter((s) => s !== server).map((s) => ({
      serverLogin: s.name, url: this.url(s.name), publicKeyB64: s.publicKeyB64,
    }));
    const config = {
      serverLogin: server.name,
      http: { host: '127.0.0.1', port: server.port },
      publicUrl: this.url(server.name),
      serverKeyFile: server.keyFile,
      db: { host: DB_HOST, port: DB_PORT, database: this.database(server.name), user: DB_USER,
        password: process.env.SHINE_DB_PASSWORD || '' },
      peers,
      egress: { allowCidrs: ['127.0.0.0/8'] },
      delivery: { scheduleMs: SCHEDULE_MS, workerPeriodMs: 500, callTimeoutMs: 2000,
        ...(this.maxClockSkewMs === undefined ? {} : { maxClockSkewMs: this.maxClockSkewMs }) },
      sync: { periodMs: 1000 },
      instances: { gateway: 1 },
    };
    server.config = join(this.dir, `${server.name}.json`);
    writeFileSync(server.config, JSON.stringify(config, null, 2));
  }

  async startOne(name) {
    const server = this.servers.get(name);
    const log = openSync(join(this.dir, `${name}.log`), 'a');
    server.process = spawn('java', ['-jar', JAR, 'server', '--config', server.config],
      { stdio: ['ignore', log, log], env: { ...process.env, SHINE_LOG_LEVEL: process.env.SHINE_LOG_LEVEL || 'INFO' } });
    const exited = new Promise((ok) => server.process.once('exit', ok));
    server.exited = exited;
    const deadline = Date.now() + 90000;
    while (Date.now() < deadline) {
      if (server.process.exitCode !== null) {
        throw new Error(`${name} exited with ${server.process.exitCode}; see ${join(this.dir, `${name}.log`)}`);
      }
      try {
        // a bounded wait: a connection made while the server starts may never be answered
        const response = await fetch(`${this.http(name)}/health`, { signal: AbortSignal.timeout(2000) });
        if (response.ok) {
          return;
        }
      } catch (e) {
        // not listening yet
      }
      await sleep(200);
    }
    throw new Error(`${name} did not become healthy`);
  }

  /** SIGTERM (the server drains and exits), then waits for the process to end. */
  async stopOne(name) {
    const server = this.servers.get(name);
    if (!server.process || server.process.exitCode !== null) {
      return;
    }
    server.process.kill('SIGTERM');
    const timer = setTimeout(() => server.process.kill('SIGKILL'), 20000);
    await server.exited;
    clearTimeout(timer);
    server.process = null;
  }

  async stop() {
    await Promise.all([...this.servers.keys()].map((name) => this.stopOne(name)));
    for (const name of this.servers.keys()) {
      try {
        execFileSync('psql', ['-h', DB_HOST, '-p', String(DB_PORT), '-U', DB_USER, '-d', 'postgres', '-qc',
          `DROP DATABASE IF EXISTS ${this.database(name)} WITH (FORCE)`], { stdio: 'ignore' });
      } catch (e) {
        // no psql here: the random names keep the next run apart anyway
      }
    }
  }
}

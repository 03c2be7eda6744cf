// The `bootlet pods` socket: root-only, and created so that nothing another user left at the path
// is followed, removed or served through.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { createHttpServer } from '../../../src/server/http-server.js';
import { bindPodsSocket } from '../../../src/server/pods-socket.js';
import type { BoundEndpoint } from '../../../src/server/supervised-listener.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('pods-socket');
const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
const router = (p: string) =>
  p === '/pods' ? { statusCode: 200, contentType: 'application/json', body: '{"kind":"PodList"}' } : undefined;
const open: Array<{ close(): Promise<void> | void }> = [];
let n = 0;

afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

function rootDir(): string {
  return path.join(tmp, `r${n++}`);
}

async function bind(dir: string): Promise<BoundEndpoint> {
  const b = await bindPodsSocket(createHttpServer(router, logger), dir);
  open.push(b);
  return b;
}

function get(socketPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ socketPath, path: '/pods' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** A socket file nobody serves, as an agent killed with SIGKILL leaves it. */
async function staleSocket(at: string): Promise<void> {
  const aside = `${at}.live`;
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(aside, r));
  fs.renameSync(aside, at); // close() then unlinks the old name only
  await new Promise<void>((r) => s.close(() => r()));
}

describe('the bootlet pods socket', () => {
  it('is <root-dir>/bootlet.sock, a socket of mode 0600 owned by the agent, in a root dir made 0750', async () => {
    const dir = rootDir();
    const b = await bind(dir);
    expect(b.where).toBe(path.join(dir, 'bootlet.sock'));
    const st = fs.lstatSync(b.where);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o7777).toBe(0o600);
    expect(st.uid).toBe(process.geteuid!());
    expect(fs.statSync(dir).mode & 0o7777).toBe(0o750);
    expect(fs.readdirSync(dir)).toEqual(['bootlet.sock']); // the temporary directory is gone
    expect(await get(b.where)).toEqual({ status: 200, body: '{"kind":"PodList"}' });
  });

  it('is 0600 even when the process umask would allow more', async () => {
    const old = process.umask(0);
    try {
      const b = await bind(rootDir());
      expect(fs.lstatSync(b.where).mode & 0o7777).toBe(0o600);
    } finally {
      process.umask(old);
    }
  });

  it('replaces a socket left by an agent that was killed', async () => {
    const dir = rootDir();
    fs.mkdirSync(dir, { mode: 0o750 });
    await staleSocket(path.join(dir, 'bootlet.sock'));
    const b = await bind(dir);
    expect(await get(b.where)).toMatchObject({ status: 200 });
  });

  it('removes its socket when closed, but not one that replaced it', async () => {
    const dir = rootDir();
    const b = await bind(dir);
    await b.close();
    expect(fs.existsSync(b.where)).toBe(false);
    const again = await bind(dir);
    fs.renameSync(again.where, `${again.where}.ours`);
    await staleSocket(again.where);
    const theirs = fs.lstatSync(again.where).ino;
    await again.close();
    expect(fs.lstatSync(again.where).ino).toBe(theirs);
  });

  it('does not take a socket another process serves', async () => {
    const dir = rootDir();
    fs.mkdirSync(dir, { mode: 0o750 });
    const sock = path.join(dir, 'bootlet.sock');
    const other = net.createServer((c) => c.end());
    await new Promise<void>((r) => other.listen(sock, r));
    open.push({ close: () => new Promise<void>((r) => other.close(() => r())) });
    await expect(bind(dir)).rejects.toThrow(
      `another process serves ${sock} (another bootlet with this --root-dir?); stop it or use another --root-dir`,
    );
    expect(other.listening).toBe(true);
    expect(fs.lstatSync(sock).isSocket()).toBe(true);
  });

  it('never follows or removes a symlink at the socket path', async () => {
    const dir = rootDir();
    fs.mkdirSync(dir, { mode: 0o750 });
    const target = path.join(tmp, `victim-${n}`);
    fs.writeFileSync(target, 'precious\n');
    const sock = path.join(dir, 'bootlet.sock');
    fs.symlinkSync(target, sock);
    await expect(bind(dir)).rejects.toThrow(
      `${sock} exists and is a symbolic link; bootlet does not remove it: remove it or use another --root-dir`,
    );
    expect(fs.readlinkSync(sock)).toBe(target);
    expect(fs.readFileSync(target, 'utf8')).toBe('precious\n');
  });

  it('leaves a regular file at the socket path alone', async () => {
    const dir = rootDir();
    fs.mkdirSync(dir, { mode: 0o750 });
    const sock = path.join(dir, 'bootlet.sock');
    fs.writeFileSync(sock, 'not mine\n');
    await expect(bind(dir)).rejects.toThrow(`${sock} exists and is a regular file`);
    expect(fs.readFileSync(sock, 'utf8')).toBe('not mine\n');
  });

  it('refuses a root dir that other users may write to', async () => {
    const dir = rootDir();
    fs.mkdirSync(dir);
    fs.chmodSync(dir, 0o777);
    await expect(bind(dir)).rejects.toThrow(
      `${dir} is writable by other users (mode 0777), who could replace the socket; chmod go-w it or use another --root-dir`,
    );
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('refuses a path too long for a unix socket', async () => {
    const dir = path.join(tmp, 'd'.repeat(120));
    await expect(bind(dir)).rejects.toThrow(
      'is longer than the 107 bytes a unix socket path may have; use a shorter --root-dir',
    );
  });
});

// Binds the unix socket that `bootlet pods` reads: mode 0600, so only root (the agent's user)
// sees the pod specs, which often carry inline credentials. Created so that no other user can
// race or redirect it: the root directory must not be writable by anyone else; the socket is
// bound in a fresh 0700 directory, made 0600 there, then renamed into place, so it is never
// reachable with a wider mode; an old entry is replaced only when it is a socket nobody serves
// (a symlink, file or directory there is left alone and reported).
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  type Stats,
} from 'node:fs';
import type * as http from 'node:http';
import * as net from 'node:net';
import { join } from 'node:path';
import { closeHttpServer, listenOnce } from './http-server.js';
import { MAX_SOCKET_PATH_BYTES, podsSocketPath } from './socket-path.js';
import { BindError, type BoundEndpoint } from './supervised-listener.js';
import { errorMessage } from '../util/error-message.js';

/** As the kubelet makes its root directory. */
const ROOT_DIR_MODE = 0o750;
const PROBE_TIMEOUT_MS = 1_000;
/** Short, so the temporary path is no longer than the final one. */
const TMP_PREFIX = '.bs-';

function kind(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFile()) return 'a regular file';
  return 'not a socket';
}

function checkRootDir(rootDir: string): void {
  try {
    mkdirSync(rootDir, { recursive: true, mode: ROOT_DIR_MODE });
  } catch (err) {
    throw new BindError(`cannot create the root directory ${rootDir}: ${errorMessage(err)}; check --root-dir`);
  }
  // The root directory itself may be a symlink (to a bigger disk): stat, not lstat.
  const st = statSync(rootDir);
  if (!st.isDirectory()) throw new BindError(`${rootDir} is not a directory; check --root-dir`);
  const self = process.geteuid?.() ?? 0;
  if (st.uid !== self && st.uid !== 0) {
    throw new BindError(
      `${rootDir} is owned by uid ${st.uid}, who could replace the socket; chown it to root or use another --root-dir`,
    );
  }
  if ((st.mode & 0o022) !== 0) {
    const mode = (st.mode & 0o7777).toString(8).padStart(4, '0');
    throw new BindError(
      `${rootDir} is writable by other users (mode ${mode}), who could replace the socket; chmod go-w it or use another --root-dir`,
    );
  }
}

/** Whether a process accepts connections on the socket at `path`. */
function isServed(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect({ path });
    const done = (served: boolean): void => {
      c.destroy();
      resolve(served);
    };
    c.setTimeout(PROBE_TIMEOUT_MS, () => done(true)); // alive but slow: still taken
    c.once('connect', () => done(true));
    c.once('error', (err: NodeJS.ErrnoException) => done(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT'));
  });
}

async function checkExisting(path: string): Promise<void> {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new BindError(`cannot check ${path}: ${errorMessage(err)}; check --root-dir`);
  }
  if (!st.isSocket())
    throw new BindError(
      `${path} exists and is ${kind(st)}; bootlet does not remove it: remove it or use another --root-dir`,
    );
  if (await isServed(path))
    throw new BindError(
      `another process serves ${path} (another bootlet with this --root-dir?); stop it or use another --root-dir`,
    );
  // Left by an agent that was killed: the rename below replaces it.
}

function removeIfOurs(path: string, ino: number, dev: number): void {
  try {
    const st = lstatSync(path);
    if (st.isSocket() && st.ino === ino && st.dev === dev) unlinkSync(path);
  } catch {
    /* already gone */
  }
}

export async function bindPodsSocket(server: http.Server, rootDir: string): Promise<BoundEndpoint> {
  const path = podsSocketPath(rootDir);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new BindError(
      `the socket path ${path} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes a unix socket path may have; use a shorter --root-dir`,
    );
  }
  checkRootDir(rootDir);
  await checkExisting(path);
  let tmpDir: string;
  try {
    tmpDir = mkdtempSync(join(rootDir, TMP_PREFIX));
  } catch (err) {
    throw new BindError(`cannot create a directory in ${rootDir}: ${errorMessage(err)}; check --root-dir`);
  }
  const tmpPath = join(tmpDir, 's');
  let st: Stats;
  try {
    await listenOnce(server, { path: tmpPath });
    chmodSync(tmpPath, 0o600);
    st = lstatSync(tmpPath);
    renameSync(tmpPath, path);
  } catch (err) {
    if (server.listening) await closeHttpServer(server);
    throw new BindError(`cannot create ${path}: ${errorMessage(err)}; check --root-dir`);
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
  return {
    where: path,
    close: async () => {
      await closeHttpServer(server);
      // Only our own socket: after a replacement by someone else the path is theirs.
      removeIfOurs(path, st.ino, st.dev);
    },
  };
}

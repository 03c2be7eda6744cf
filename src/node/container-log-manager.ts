// Rotates the logs of running containers as the kubelet's container log manager does: when the live
// file passes containerLogMaxSize it is renamed with a timestamp suffix (the names are
// pod-logs/layout.ts's), the runtime is told to reopen it (ReopenContainerLog), older rotated files
// are gzip-compressed (keeping the log's mode), and only containerLogMaxFiles files (live one included) are kept.
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { chmod, chown, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Logger } from '../log/logger.js';
import { ContainerState, type RuntimeService } from '../cri/cri-types.js';
import { isRotatedLogOf, rotatedLogPath } from './pod-logs/layout.js';
import { errorMessage } from '../util/error-message.js';

export interface ContainerLogManagerOptions {
  runtime: RuntimeService;
  logger: Logger;
  maxSizeBytes: number;
  maxFiles: number;
  intervalMs: number;
  now?: () => Date;
  /**
   * The running containers and their log paths as the agent's pod cache has them (the one owner
   * of runtime state; its statuses carry the log path). Without it each round lists the running
   * containers and asks a new one's status, as the kubelet's container log manager does.
   */
  runningContainers?: () => readonly { readonly id: string; readonly logPath?: string }[];
}

/**
 * Compresses a rotated log into `<file>.gz` with the file's own mode and owner (the runtime writes logs
 * 0640): the kubelet creates the compressed file 0644, which lets every local user read what a pod
 * logged. The temporary file is made with that mode from the start (exclusive, never wider), then
 * given it exactly (the umask may have narrowed it).
 */
async function gzipFile(file: string): Promise<void> {
  const st = await stat(file);
  const mode = st.mode & 0o777;
  const tmp = `${file}.gz.tmp`;
  await unlink(tmp).catch(() => undefined);
  const out = createWriteStream(tmp, { flags: 'wx', mode });
  await pipeline(createReadStream(file), createGzip(), out);
  await chmod(tmp, mode);
  await chown(tmp, st.uid, st.gid);
  await rename(tmp, `${file}.gz`);
  await unlink(file);
}

/**
 * The live log's size; 0 when it cannot be read. A stat of a local file, made synchronously: every
 * running container's log is looked at every containerLogMonitorInterval (10 s, as the kubelet),
 * and a stat through the thread pool cost ten times the CPU of the stat itself (a hand-off, a
 * wake-up and a promise per file), the larger part of the round on an idle node.
 */
function logSize(logPath: string): number {
  try {
    return statSync(logPath, { throwIfNoEntry: false })?.size ?? 0;
  } catch {
    return 0;
  }
}

export class ContainerLogManager {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly now: () => Date;
  private readonly logPaths = new Map<string, string>();

  constructor(private readonly o: ContainerLogManagerOptions) {
    this.now = o.now ?? (() => new Date());
  }

  start(): void {
    this.timer = setInterval(() => void this.rotateAll(), this.o.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async rotateAll(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const containers =
        this.o.runningContainers?.() ??
        (await this.o.runtime.listContainers({ state: { state: ContainerState.CONTAINER_RUNNING } }));
      const live = new Set(containers.map((c) => c.id));
      for (const id of this.logPaths.keys()) if (!live.has(id)) this.logPaths.delete(id);
      for (const c of containers) {
        try {
          // A container's log path never changes: ask the runtime once per container, not every round.
          let logPath = this.logPaths.get(c.id) ?? ('logPath' in c && c.logPath ? c.logPath : undefined);
          if (logPath === undefined) {
            logPath = (await this.o.runtime.containerStatus(c.id)).logPath;
            this.logPaths.set(c.id, logPath);
          }
          if (logPath) await this.rotateOne(c.id, logPath);
        } catch (err) {
          this.o.logger.v(2).info('Container log rotation skipped', { containerID: c.id, err: errorMessage(err) });
        }
      }
    } catch (err) {
      this.o.logger.warn('Container log rotation failed', { err: errorMessage(err) });
    } finally {
      this.running = false;
    }
  }

  /** Rotates one container's log if it grew past the limit, then compresses and prunes old files. */
  async rotateOne(containerId: string, logPath: string): Promise<boolean> {
    const size = logSize(logPath);
    if (size <= this.o.maxSizeBytes) return false;
    const rotatedPath = rotatedLogPath(logPath, this.now());
    await rename(logPath, rotatedPath);
    try {
      await this.o.runtime.reopenContainerLog(containerId);
    } catch (err) {
      // The runtime keeps writing to the renamed file until it reopens; put it back rather than lose lines.
      await rename(rotatedPath, logPath).catch(() => undefined);
      throw err;
    }
    this.o.logger.v(2).info('Rotated container log', { containerID: containerId, path: logPath, bytes: size });
    await this.prune(logPath);
    return true;
  }

  /** Keeps maxFiles-1 rotated files (the newest stays plain, older ones are gzipped), removes the rest. */
  private async prune(logPath: string): Promise<void> {
    const dir = path.dirname(logPath);
    const base = path.basename(logPath);
    const rotated = (await readdir(dir)).filter((f) => isRotatedLogOf(base, f)).sort();
    const keep = Math.max(0, this.o.maxFiles - 1);
    const excess = rotated.slice(0, Math.max(0, rotated.length - keep));
    for (const f of excess) await unlink(path.join(dir, f)).catch(() => undefined);
    const kept = rotated.slice(excess.length);
    for (const f of kept.slice(0, -1)) if (!f.endsWith('.gz')) await gzipFile(path.join(dir, f));
  }
}

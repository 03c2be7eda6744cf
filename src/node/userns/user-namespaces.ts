// The pods' user namespaces as the kubelet's userns manager keeps them: each pod with
// `hostUsers: false` gets one block of userNamespaces.idsPerPod IDs (65536 by default) of the node's range (a free one picked at random, as
// the kubelet's allocation map does), the same for UIDs and GIDs, container ID 0 mapped to the
// block's first. The mapping lives in the pod's directory (`<root>/pods/<uid>/userns`, the kubelet's
// file and format, written atomically and synced), so an agent restarted, or taking over from a
// kubelet, reads back every block in use before it gives one out, and a pod keeps its block for its
// whole life. No two pods ever hold one block: a block is taken in memory before anything awaits.
import { randomBytes, randomInt } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../log/logger.js';
import { errorMessage } from '../../util/error-message.js';
import { checkPodUID, podDir, podUserNamespaceFile } from '../pod-dirs.js';
import { USERNS_IDS_PER_POD, type NodeIdRange } from './node-id-range.js';

/** One mapping of the kubelet's file: `hostId` on the node is `containerId` in the pod, for `length` IDs. */
export interface IdMapping {
  readonly hostId: number;
  readonly containerId: number;
  readonly length: number;
}

/** The kubelet's userns file: one mapping each, identical, container ID 0. */
export interface PodUserNamespace {
  readonly uidMappings: readonly IdMapping[];
  readonly gidMappings: readonly IdMapping[];
}

export interface UserNamespaceManagerOptions {
  readonly rootDir: string;
  /** userNamespaces.idsPerPod, already validated (idsPerPodProblem); default 65536. */
  readonly idsPerPod?: number;
  /** Reads the node's range cut in blocks of `idsPerPod` (node-id-range.ts) when a pod first asks; its error fails every hostUsers: false pod. */
  readonly range: (idsPerPod: number) => Promise<NodeIdRange>;
  readonly logger: Logger;
}

function isMapping(x: unknown): x is IdMapping {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Record<string, unknown>;
  return ['hostId', 'containerId', 'length'].every(
    (k) => Number.isInteger(m[k]) && (m[k] as number) >= 0 && (m[k] as number) <= 0xffffffff,
  );
}

/** parseUserNsFileAndRecord's checks, in its words. */
export function parseUserNamespaceFile(content: string): PodUserNamespace {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch (err) {
    throw new Error(`invalid user namespace mappings file: ${errorMessage(err)}`);
  }
  const o = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const uids = Array.isArray(o.uidMappings) ? o.uidMappings : [];
  const gids = Array.isArray(o.gidMappings) ? o.gidMappings : [];
  if (uids.length !== 1 || !uids.every(isMapping))
    throw new Error('invalid user namespace configuration: no more than one mapping allowed.');
  if (gids.length !== uids.length || !gids.every(isMapping))
    throw new Error('invalid user namespace configuration: GID and UID mappings should be identical.');
  const [u, g] = [uids[0], gids[0]];
  if (u.hostId !== g.hostId || u.containerId !== g.containerId || u.length !== g.length)
    throw new Error('invalid user namespace configuration: GID and UID mapping should be identical');
  if (u.containerId !== 0) throw new Error('invalid user namespace configuration: UID 0 must be mapped');
  return { uidMappings: [u], gidMappings: [g] };
}

export class UserNamespaceManager {
  /** Block index (hostId / idsPerPod - first block) by pod UID. */
  private readonly usedBy = new Map<string, number>();
  private readonly used = new Set<number>();
  private loaded: Promise<{ range: NodeIdRange } | { error: string }> | undefined;
  /** One look-up at a time per pod: two at once would each find no file and take two blocks. */
  private readonly pending = new Map<string, Promise<PodUserNamespace>>();

  /** IDs of one pod's block: a file of another length is refused, as the kubelet's record does. */
  private readonly idsPerPod: number;

  constructor(private readonly o: UserNamespaceManagerOptions) {
    this.idsPerPod = o.idsPerPod ?? USERNS_IDS_PER_POD;
  }

  /** Reads the node's range and every pod's file once; a range that cannot be used is logged here, once. */
  private load(): Promise<{ range: NodeIdRange } | { error: string }> {
    this.loaded ??= (async () => {
      let range: NodeIdRange;
      try {
        range = await this.o.range(this.idsPerPod);
      } catch (err) {
        const error = errorMessage(err);
        this.o.logger.error('User namespaces cannot be given to pods: the node has no usable ID range', { err: error });
        return { error };
      }
      this.o.logger.v(5).info('User namespace manager mapping', {
        offset: range.firstId / this.idsPerPod,
        length: range.length / this.idsPerPod,
        idsPerPod: this.idsPerPod,
      });
      let uids: string[] = [];
      try {
        uids = (await readdir(path.join(this.o.rootDir, 'pods'), { withFileTypes: true }))
          .filter((d) => d.isDirectory())
          .map((d) => d.name);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      for (const uid of uids) {
        try {
          checkPodUID(uid);
          const content = await readFile(podUserNamespaceFile(this.o.rootDir, uid), 'utf8').catch(
            (err: NodeJS.ErrnoException) => {
              if (err.code === 'ENOENT') return undefined;
              throw err;
            },
          );
          if (content) this.record(range, uid, parseUserNamespaceFile(content));
        } catch (err) {
          // The kubelet would not start; here that pod alone fails when it asks (its file is read again).
          this.o.logger.error('Could not read back a pod user namespace', { podUID: uid, err: errorMessage(err) });
        }
      }
      return { range };
    })();
    return this.loaded;
  }

  private record(range: NodeIdRange, uid: string, userns: PodUserNamespace): void {
    const { hostId, length } = userns.uidMappings[0]!;
    if (length !== this.idsPerPod) throw new Error(`wrong user namespace length ${length}`);
    if (hostId % this.idsPerPod !== 0) throw new Error(`wrong user namespace offset specified ${hostId}`);
    const index = (hostId - range.firstId) / this.idsPerPod;
    const prev = this.usedBy.get(uid);
    if (prev !== undefined && prev !== index)
      throw new Error(`different user namespace range already used by pod ${JSON.stringify(uid)}`);
    if (index < 0 || index >= range.length / this.idsPerPod) throw new Error(`id ${hostId} is out of range`);
    if (prev === undefined && this.used.has(index))
      throw new Error(`range picked for pod ${JSON.stringify(uid)} already taken`);
    this.used.add(index);
    this.usedBy.set(uid, index);
  }

  /** A free block, from a random place on (the kubelet's random scan), taken at once. */
  private allocate(range: NodeIdRange, uid: string): number {
    const blocks = range.length / this.idsPerPod;
    if (this.used.size >= blocks) throw new Error('could not find an empty slot to allocate a user namespace');
    const start = randomInt(blocks);
    let index = start;
    while (this.used.has(index)) index = (index + 1) % blocks;
    this.used.add(index);
    this.usedBy.set(uid, index);
    return range.firstId + index * this.idsPerPod;
  }

  /** The pod's mappings: read back from its file, or a new block, written before it is returned. */
  getOrCreate(uid: string): Promise<PodUserNamespace> {
    const prev = this.pending.get(uid);
    const next = (prev ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => this.getOrCreateNow(uid))
      .finally(() => {
        if (this.pending.get(uid) === next) this.pending.delete(uid);
      });
    this.pending.set(uid, next);
    return next;
  }

  private async getOrCreateNow(uid: string): Promise<PodUserNamespace> {
    const loaded = await this.load();
    if ('error' in loaded) throw new Error(loaded.error);
    const { range } = loaded;
    const file = podUserNamespaceFile(this.o.rootDir, uid);
    const content = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw err;
    });
    if (content !== '') {
      try {
        const userns = parseUserNamespaceFile(content);
        this.record(range, uid, userns);
        return userns;
      } catch (err) {
        throw new Error(`user namespace: ${errorMessage(err)}`);
      }
    }
    // No file, yet a block in memory: the pod's directory went away under it; it gets a new one.
    this.forget(uid);
    let hostId: number;
    try {
      hostId = this.allocate(range, uid);
    } catch (err) {
      throw new Error(`create user namespace: ${errorMessage(err)}`);
    }
    const mapping: IdMapping = { hostId, containerId: 0, length: this.idsPerPod };
    const userns: PodUserNamespace = { uidMappings: [mapping], gidMappings: [mapping] };
    try {
      await this.write(uid, userns);
    } catch (err) {
      this.forget(uid);
      throw new Error(`create user namespace: ${errorMessage(err)}`);
    }
    this.o.logger.v(2).info('Pod user namespace allocated', { podUID: uid, hostId, length: this.idsPerPod });
    return userns;
  }

  /** The kubelet's FileStore write: a temporary file synced, renamed over, and the directory synced. */
  private async write(uid: string, userns: PodUserNamespace): Promise<void> {
    const dir = podDir(this.o.rootDir, uid);
    await mkdir(dir, { recursive: true, mode: 0o750 });
    const tmp = path.join(dir, `.userns.${randomBytes(4).toString('hex')}`);
    try {
      const f = await open(tmp, 'wx', 0o600);
      try {
        await f.writeFile(JSON.stringify(userns));
        await f.sync();
      } finally {
        await f.close();
      }
      await rename(tmp, podUserNamespaceFile(this.o.rootDir, uid));
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  }

  private forget(uid: string): void {
    const index = this.usedBy.get(uid);
    if (index === undefined) return;
    this.usedBy.delete(uid);
    this.used.delete(index);
  }

  /** The pod is gone (its directory removed): its block is free again. */
  async release(uid: string): Promise<void> {
    if (!this.usedBy.has(uid)) return;
    this.forget(uid);
    await rm(podUserNamespaceFile(this.o.rootDir, uid), { force: true }).catch(() => undefined);
    this.o.logger.v(2).info('Pod user namespace released', { podUID: uid });
  }

  /** Blocks held now (for tests and `bootlet pods`). */
  held(): ReadonlyMap<string, number> {
    return this.usedBy;
  }
}

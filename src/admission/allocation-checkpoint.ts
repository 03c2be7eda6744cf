// The resources allocated to resized pods, kept across a restart of the agent as the kubelet keeps
// them: `<root-dir>/allocated_pods_state`, its checkpoint manager's layout ({"data", "checksum"}),
// the data `{"entries": {<uid>: {"ContainerResources": {<container>: <ResourceRequirements>}}}}` and
// the checksum FNV-32a over `(string)` and the data (hashutil.DeepHashObject of a string), so that a
// kubelet taking over the node reads it, and bootlet reads the kubelet's. Written atomically (a
// temporary file renamed over it), one write at a time, the last state winning.
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ResourceRequirements } from 'kubernetes-types/core/v1';
import { fnv1a32 } from '../kuberuntime/container-hash.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/error-message.js';
import { stableJson } from '../util/stable-json.js';

export const ALLOCATION_CHECKPOINT = 'allocated_pods_state';

/** By pod UID, then container name. */
export type Allocations = ReadonlyMap<string, Readonly<Record<string, ResourceRequirements>>>;

export function checkpointChecksum(data: string): number {
  return fnv1a32(Buffer.from(`(string)${data}`, 'utf8'));
}

export function encodeCheckpoint(all: Allocations): string {
  const entries: Record<string, { ContainerResources: Record<string, ResourceRequirements> }> = {};
  for (const [uid, containers] of all) entries[uid] = { ContainerResources: { ...containers } };
  const data = stableJson({ entries });
  return JSON.stringify({ data, checksum: checkpointChecksum(data) });
}

/** The allocations a checkpoint holds; throws when it is not one, or its checksum does not match. */
export function decodeCheckpoint(text: string): Map<string, Record<string, ResourceRequirements>> {
  const cp = JSON.parse(text) as { data?: unknown; checksum?: unknown };
  if (typeof cp.data !== 'string' || typeof cp.checksum !== 'number') throw new Error('not a checkpoint');
  if (checkpointChecksum(cp.data) !== cp.checksum) throw new Error('checkpoint is corrupted');
  const parsed = JSON.parse(cp.data) as {
    entries?: Record<string, { ContainerResources?: Record<string, ResourceRequirements> } | null>;
  };
  const out = new Map<string, Record<string, ResourceRequirements>>();
  for (const [uid, info] of Object.entries(parsed.entries ?? {}))
    if (info?.ContainerResources) out.set(uid, info.ContainerResources);
  return out;
}

export class AllocationCheckpoint {
  readonly file: string;
  private writing: Promise<void> = Promise.resolve();
  private last: string | undefined;

  constructor(
    rootDir: string,
    private readonly logger: Logger,
  ) {
    this.file = path.join(rootDir, ALLOCATION_CHECKPOINT);
  }

  /** What the file holds; nothing when it is absent, and nothing (with an error line) when it cannot be read. */
  async load(): Promise<Map<string, Record<string, ResourceRequirements>>> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.logger.error('Failed to read the pod resource allocation checkpoint', {
          path: this.file,
          err: errorMessage(err),
        });
      return new Map();
    }
    try {
      const out = decodeCheckpoint(text);
      this.last = text;
      return out;
    } catch (err) {
      this.logger.error(
        'Ignoring the pod resource allocation checkpoint: resized pods take their resources from their spec',
        {
          path: this.file,
          err: errorMessage(err),
        },
      );
      return new Map();
    }
  }

  /** Writes the allocations (unless unchanged); resolves once they are on disk; never rejects. */
  save(all: Allocations): Promise<void> {
    const text = encodeCheckpoint(all);
    this.writing = this.writing.then(async () => {
      if (text === this.last) return;
      const tmp = `${this.file}.tmp`;
      try {
        await writeFile(tmp, text, { mode: 0o600 });
        await rename(tmp, this.file);
        this.last = text;
      } catch (err) {
        this.logger.error('Failed to save the pod resource allocation checkpoint', {
          path: this.file,
          err: errorMessage(err),
        });
      }
    });
    return this.writing;
  }
}

// Several static pod sources (the manifest path, staticPodURL) as one desired set. Each source
// keeps its own pods by key; when two declare one key (`<namespace>/<name>`), the manifest file
// wins, as a node's own files should over a remote answer, and the other is held back with one
// error line until the clash is gone. Downstream sees ADD, UPDATE and REMOVE of the winners only,
// so one name never runs twice.
import type { Logger } from '../log/logger';
import type { PodUpdate, StaticPod } from './types';

export type SourceName = 'file' | 'http';

/** Earlier wins a clash. */
const PRIORITY: readonly SourceName[] = ['file', 'http'];

export class SourceMerger {
  private readonly bySource = new Map<SourceName, Map<string, StaticPod>>(PRIORITY.map((s) => [s, new Map()]));
  private readonly effective = new Map<string, StaticPod>();
  private readonly shadowedReported = new Set<string>();

  constructor(
    private readonly downstream: (u: PodUpdate) => void,
    private readonly logger: Logger,
  ) {}

  update(source: SourceName, u: PodUpdate): void {
    const pods = this.bySource.get(source)!;
    if (u.op === 'REMOVE') pods.delete(u.pod.key);
    else pods.set(u.pod.key, u.pod);
    this.settle(u.pod.key);
  }

  private settle(key: string): void {
    const holders = PRIORITY.flatMap((s) => {
      const p = this.bySource.get(s)!.get(key);
      return p ? [{ s, p }] : [];
    });
    const winner = holders[0]?.p;
    for (const h of holders.slice(1)) {
      const id = `${h.s}:${key}:${h.p.uid}`;
      if (this.shadowedReported.has(id)) continue;
      this.shadowedReported.add(id);
      this.logger.error('Static pod ignored: another source declares the same pod', { pod: key, source: h.s, from: h.p.file, declaredBy: winner?.file });
    }
    if (holders.length <= 1) for (const id of [...this.shadowedReported]) if (id.includes(`:${key}:`)) this.shadowedReported.delete(id);
    const prev = this.effective.get(key);
    if (prev === winner) return;
    if (!winner) {
      this.effective.delete(key);
      this.downstream({ op: 'REMOVE', pod: prev! });
    } else if (!prev) {
      this.effective.set(key, winner);
      this.downstream({ op: 'ADD', pod: winner });
    } else {
      this.effective.set(key, winner);
      this.downstream({ op: 'UPDATE', pod: winner, previous: prev });
    }
  }
}

// The relisting PLEG: lists all sandboxes and containers every period and turns state changes into
// events for the affected pod only. It is the fallback that works with any CRI runtime.
import type { Logger } from '../log/logger.js';
import { ContainerState } from '../runtime/cri-types.js';
import type { RuntimeService } from '../runtime/cri-types.js';
import { listRuntimePods } from '../runtime/runtime-pods.js';
import type { Pleg, PodLifecycleEvent } from './types.js';

interface Seen {
  podUid: string;
  state: number;
  name: string;
  kind: 'container' | 'sandbox';
}

export interface RelistPlegOptions {
  runtime: RuntimeService;
  periodMs: number;
  logger: Logger;
  onEvent: (e: PodLifecycleEvent) => void;
  now?: () => number;
}

function containerEvent(prev: Seen | undefined, state: number): PodLifecycleEvent['type'] | undefined {
  if (prev?.state === state) return undefined;
  if (state === ContainerState.CONTAINER_RUNNING) return 'ContainerStarted';
  if (state === ContainerState.CONTAINER_EXITED) return 'ContainerDied';
  return 'ContainerChanged';
}

export class RelistPleg implements Pleg {
  private seen = new Map<string, Seen>();
  private timer: NodeJS.Timeout | undefined;
  private lastRelist: number;
  private relisting = false;
  private readonly now: () => number;

  constructor(private readonly opts: RelistPlegOptions) {
    this.now = opts.now ?? Date.now;
    this.lastRelist = this.now();
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.relist(), this.opts.periodMs);
    this.timer.unref?.();
    void this.relist();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  sinceLastRelistMs(): number {
    return this.now() - this.lastRelist;
  }

  /** One relist; exported for tests and for a faster PLEG that wants an immediate look. */
  async relist(): Promise<void> {
    if (this.relisting) return;
    this.relisting = true;
    try {
      const pods = await listRuntimePods(this.opts.runtime);
      const next = new Map<string, Seen>();
      for (const [uid, pod] of pods) {
        for (const s of pod.sandboxes) {
          next.set(s.id, { podUid: uid, state: s.state, name: pod.name, kind: 'sandbox' });
          const prev = this.seen.get(s.id);
          if (prev?.state !== s.state) this.emit({ podUid: uid, type: 'SandboxChanged', id: s.id });
        }
        for (const c of pod.containers) {
          next.set(c.id, { podUid: uid, state: c.state, name: c.name, kind: 'container' });
          const type = containerEvent(this.seen.get(c.id), c.state);
          if (type) this.emit({ podUid: uid, type, id: c.id, name: c.name });
        }
      }
      for (const [id, prev] of this.seen) {
        if (next.has(id)) continue;
        this.emit({ podUid: prev.podUid, type: prev.kind === 'sandbox' ? 'SandboxChanged' : 'ContainerRemoved', id, name: prev.name });
      }
      this.seen = next;
      this.lastRelist = this.now();
    } catch (err) {
      this.opts.logger.error('PLEG relist failed', { err: err instanceof Error ? err.message : String(err) });
    } finally {
      this.relisting = false;
    }
  }

  private emit(e: PodLifecycleEvent): void {
    this.opts.logger.v(4).info('PLEG event', { podUID: e.podUid, event: e.type, id: e.id, container: e.name });
    this.opts.onEvent(e);
  }
}

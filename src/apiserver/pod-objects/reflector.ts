// One LIST, then watches, of a collection path (one named object through
// fieldSelector=metadata.name=<name>, or every Service), as client-go's reflector: watches resume
// from the last resourceVersion seen (the LIST's, an event's, a BOOKMARK's); only a 410 (or an
// event that could not be read, or a refusal) lists again. A watch that lived 30 s and ended is
// opened again at once; one that ended sooner, or a failure, waits the reconnect back-off; while
// the server is away the loop waits for the gate (woken through `serverBack`), not the back-off.
import type { ObjectMeta } from 'kubernetes-types/meta/v1';
import type { Logger } from '../../log/logger.js';
import { Backoff, RECONNECT_BACKOFF, type BackoffPolicy } from '../../util/backoff.js';
import { WakeableSleep } from '../../util/wakeable-sleep.js';
import { ApiError, describeError, isRefused, isUnavailable, TransportError } from '../api-error.js';
import type { WatchHandle } from '../client.js';
import type { PodObjectsClient, PodObjectsGate } from './client.js';

export interface ApiObject {
  metadata?: ObjectMeta;
}

export interface ReflectorOptions {
  readonly client: Pick<PodObjectsClient, 'list' | 'watch'>;
  readonly gate: Pick<PodObjectsGate, 'usable'>;
  /** The collection: `/api/v1/namespaces/<ns>/configmaps`, `/api/v1/services`. */
  readonly path: string;
  readonly fieldSelector?: string;
  /** In log lines: `configmap kube-system/kube-proxy`. */
  readonly what: string;
  readonly logger: Logger;
  /** An item changed (added, modified, deleted) after the first LIST: its `<namespace>/<name>`. */
  readonly onChange?: (key: string) => void;
  /** The first LIST is in. */
  readonly onSynced?: () => void;
  readonly backoff?: BackoffPolicy;
  /** Watch length asked of the server, in seconds; 5–10 min as a reflector randomizes it. */
  readonly watchSeconds?: () => number;
}

export const objectKey = (namespace: string | undefined, name: string | undefined): string => `${namespace ?? ''}/${name ?? ''}`;

const isExpired = (e: unknown): boolean => e instanceof ApiError && (e.code === 410 || e.reason === 'Expired' || e.reason === 'Gone');
const isUnreadable = (e: unknown): boolean => e instanceof TransportError && e.kind === 'other' && e.message.startsWith('watch stream: bad JSON line');

export class Reflector<T extends ApiObject> {
  private readonly items = new Map<string, T>();
  private readonly backoff: Backoff;
  private readonly pause = new WakeableSleep();
  private resourceVersion: string | undefined;
  private watch: WatchHandle | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private syncedOnce = false;
  private syncWaiters: (() => void)[] = [];
  private lastWatchAt = 0;
  private restartRequested = false;
  /** The refusal last warned of: a server that keeps refusing is told once, not at every retry. */
  private warnedRefusal: string | undefined;
  /** The last failure, for the caller that timed out waiting for the first LIST. */
  lastError: unknown;

  constructor(private readonly opts: ReflectorOptions) {
    this.backoff = new Backoff(opts.backoff ?? RECONNECT_BACKOFF);
  }

  /** The first LIST is in: an absent item really is absent. */
  get synced(): boolean {
    return this.syncedOnce;
  }

  /** Whether the loop runs (false once stopped, or stopped watching an immutable object). */
  get running(): boolean {
    return this.loop !== undefined && !this.stopped;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  start(): void {
    this.loop ??= this.run().catch((e: unknown) => this.opts.logger.error('Watch loop stopped unexpectedly', { object: this.opts.what, err: describeError(e) }));
  }

  /** Stops the loop; what was listed stays readable (an immutable object needs no watch). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.watch?.stop();
    this.pause.wake();
    for (const w of this.syncWaiters.splice(0)) w();
    await this.loop;
  }

  /** Resolves true once the first LIST is in, false after `timeoutMs` or when stopped (never rejects). */
  waitSynced(timeoutMs: number): Promise<boolean> {
    if (this.syncedOnce) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.syncWaiters = this.syncWaiters.filter((w) => w !== done);
        resolve(this.syncedOnce);
      };
      this.syncWaiters.push(done);
    });
  }

  /**
   * The server is back after an outage: a loop waiting for it goes at once, and an open watch
   * (maybe hung on a dead connection) is opened again from its resourceVersion, no LIST.
   */
  serverBack(): void {
    if (this.watch) {
      this.restartRequested = true;
      this.watch.stop();
    } else this.pause.wake();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.opts.gate.usable) {
        await this.pause.sleep(undefined);
        continue;
      }
      const listing = this.resourceVersion === undefined;
      let failure: unknown;
      try {
        if (listing) await this.relist();
        if (!this.stopped) await this.watchFrom(this.resourceVersion ?? '');
      } catch (e) {
        failure = e;
      } finally {
        this.watch = undefined;
      }
      if (this.stopped) break;
      if (failure !== undefined) this.lastError = failure;
      const delay = this.nextDelay(failure, listing && this.resourceVersion === undefined);
      if (delay > 0) await this.pause.sleep(delay);
    }
  }

  private async relist(): Promise<void> {
    const list = await this.opts.client.list<{ items?: T[]; metadata?: { resourceVersion?: string } }>(this.opts.path, this.query());
    if (this.stopped) return;
    this.replace(list.items ?? []);
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.lastError = undefined;
    this.warnedRefusal = undefined;
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const w of this.syncWaiters.splice(0)) w();
      this.opts.onSynced?.();
    }
  }

  private query(): Record<string, string> {
    return this.opts.fieldSelector ? { fieldSelector: this.opts.fieldSelector } : {};
  }

  private async watchFrom(resourceVersion: string): Promise<void> {
    this.backoff.healthy();
    this.lastWatchAt = Date.now();
    const timeoutSeconds = Math.round(this.opts.watchSeconds?.() ?? 300 + Math.random() * 300);
    this.watch = this.opts.client.watch<T>(this.opts.path, { ...this.query(), resourceVersion, allowWatchBookmarks: true, timeoutSeconds }, (ev) => this.apply(ev.type, ev.object));
    await this.watch.done;
  }

  /** How long to wait before the next round; decides too whether that round LISTs. */
  private nextDelay(failure: unknown, listFailed: boolean): number {
    if (this.restartRequested && failure === undefined) {
      this.restartRequested = false;
      return Math.max(0, this.lastWatchAt + RECONNECT_BACKOFF.initialMs - Date.now());
    }
    this.restartRequested = false;
    // No server: the gate holds the loop until it is back; nothing ran too often.
    if (isUnavailable(failure) && !this.opts.gate.usable && !isUnreadable(failure)) return 0;
    const expired = isExpired(failure);
    if (failure !== undefined && !listFailed && (expired || !isUnavailable(failure) || isUnreadable(failure))) this.resourceVersion = undefined;
    if (expired) this.opts.logger.v(4).info('Watch expired (410); listing again', { object: this.opts.what });
    const livedLong = !listFailed && Date.now() - this.lastWatchAt >= RECONNECT_BACKOFF.resetAfterMs;
    if ((failure === undefined || expired) && livedLong) {
      this.backoff.reset();
      return 0;
    }
    const delay = this.backoff.next();
    if (isRefused(failure) && describeError(failure) !== this.warnedRefusal) {
      // The Node authorizer refuses objects of pods not bound to this node: worth an operator's eye, once.
      this.warnedRefusal = describeError(failure);
      this.opts.logger.warn('The API server refuses to list or watch an object pods refer to; retrying after back-off', { object: this.opts.what, err: this.warnedRefusal, retryIn: `${delay}ms` });
    } else if (failure !== undefined) this.opts.logger.v(2).info('Watch failed; retrying after back-off', { object: this.opts.what, err: describeError(failure), retryIn: `${delay}ms` });
    return delay;
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK', obj: T): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (type === 'BOOKMARK') return;
    const key = objectKey(obj.metadata?.namespace, obj.metadata?.name);
    if (type === 'DELETED') {
      if (!this.items.delete(key)) return;
    } else {
      const had = this.items.get(key);
      this.items.set(key, obj);
      if (had && sameVersion(had, obj)) return;
    }
    this.opts.onChange?.(key);
  }

  /** A full LIST: what it lacks is gone; what it changed is told (never on the first LIST). */
  private replace(items: readonly T[]): void {
    const before = new Map(this.items);
    this.items.clear();
    for (const obj of items) this.items.set(objectKey(obj.metadata?.namespace, obj.metadata?.name), obj);
    if (!this.syncedOnce) return;
    for (const key of new Set([...before.keys(), ...this.items.keys()])) {
      const was = before.get(key);
      const now = this.items.get(key);
      if (!was || !now || !sameVersion(was, now)) this.opts.onChange?.(key);
    }
  }
}

/** The same object at the same version: a relist or a repeated event that changed nothing. */
function sameVersion(a: ApiObject, b: ApiObject): boolean {
  return a.metadata?.uid === b.metadata?.uid && !!a.metadata?.resourceVersion && a.metadata.resourceVersion === b.metadata?.resourceVersion;
}

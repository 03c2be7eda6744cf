// One LIST, then watches, of a collection (client-go's reflector and shared informer): watches
// resume from the last resourceVersion seen (the LIST's, an event's, a BOOKMARK's), each asked to
// end after 5–10 min; only something missed (a 410, an event that could not be read, an answer
// over the client's cap, a refusal) lists again. A watch that lived its healthy period (30 s) and
// ended is opened again at once; one that ended sooner, or a failure, waits the reconnect back-off,
// so a proxy that ends every stream early costs a watch every few seconds at most, never a spin.
// While the server is away the loop waits for the gate (woken through `serverBack`), not the
// back-off, and sends nothing sooner than the floor after its last request. A loop waiting out a
// back-off keeps waiting when the server comes back: a server that flaps must not set its pace.
//
// The collection is kept (`get`, `list`) and handed to handlers (store.ts). It knows nothing of the
// API client beyond `list` and `watch`; what a failure means is the client's to say (list-watch.ts).
import type { Logger } from '../log/logger.js';
import { Backoff, RECONNECT_BACKOFF, type BackoffPolicy } from '../util/backoff.js';
import { WakeableSleep } from '../util/wakeable-sleep.js';
import type { ApiObject, ListWatchClient, ListWatchErrors, ListWatchGate, WatchEventType } from './list-watch.js';
import { ObjectStore, type Informer, type ReflectorHandler } from './store.js';

export interface ReflectorOptions {
  readonly client: ListWatchClient;
  readonly gate: ListWatchGate;
  readonly errors: ListWatchErrors;
  /** The collection: `/api/v1/namespaces/<ns>/configmaps`, `/api/v1/services`, `/api/v1/pods`. */
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

export class Reflector<T extends ApiObject> implements Informer<T> {
  private readonly store: ObjectStore<T>;
  private readonly policy: BackoffPolicy;
  private readonly backoff: Backoff;
  private readonly pause = new WakeableSleep();
  private resourceVersion: string | undefined;
  private watch: { stop(): void } | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private syncWaiters: (() => void)[] = [];
  private lastListAt = 0;
  private lastWatchAt = 0;
  /** The next LIST or watch is not sent before this (ms since the epoch). */
  private notBefore = 0;
  private waitingForServer = false;
  /** The watch was stopped on purpose (the server came back): watch again without the failure back-off. */
  private restartRequested = false;
  /** The refusal last warned of: a server that keeps refusing is told once, not at every retry. */
  private warnedRefusal: string | undefined;
  /** The last failure, for the caller that timed out waiting for the first LIST. */
  lastError: unknown;

  constructor(private readonly opts: ReflectorOptions) {
    this.policy = opts.backoff ?? RECONNECT_BACKOFF;
    this.backoff = new Backoff(this.policy);
    this.store = new ObjectStore<T>(opts.onChange);
  }

  /** The first LIST is in: an absent item really is absent. */
  get synced(): boolean {
    return this.store.synced;
  }

  /** Whether the loop runs (false once stopped, or stopped watching an immutable object). */
  get running(): boolean {
    return this.loop !== undefined && !this.stopped;
  }

  /** The resourceVersion the next watch starts from (undefined: the next round LISTs). */
  get lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return this.store.list();
  }

  /** A handler added after the first LIST hears the collection at once, as its first. */
  addHandler(handler: ReflectorHandler<T>): () => void {
    return this.store.addHandler(handler);
  }

  start(): void {
    this.loop ??= this.run().catch((e: unknown) =>
      this.opts.logger.error('Watch loop stopped unexpectedly', {
        object: this.opts.what,
        err: this.opts.errors.describe(e),
      }),
    );
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
    if (this.store.synced) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.syncWaiters = this.syncWaiters.filter((w) => w !== done);
        resolve(this.store.synced);
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
    } else if (this.waitingForServer) this.pause.wake();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.opts.gate.usable) {
        this.waitingForServer = true;
        await this.pause.sleep(undefined);
        this.waitingForServer = false;
        continue;
      }
      const wait = this.notBefore - Date.now();
      if (wait > 0) {
        await this.pause.sleep(wait);
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
      this.scheduleNext(failure, listing && this.resourceVersion === undefined);
    }
  }

  private async relist(): Promise<void> {
    this.lastListAt = Date.now();
    const list = await this.opts.client.list<{ items?: T[]; metadata?: { resourceVersion?: string } }>(
      this.opts.path,
      this.query(),
    );
    if (this.stopped) return;
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.lastError = undefined;
    this.warnedRefusal = undefined;
    if (this.store.replace(list.items ?? [])) {
      for (const w of this.syncWaiters.splice(0)) w();
      this.opts.onSynced?.();
    }
  }

  private query(): Record<string, string> {
    return this.opts.fieldSelector ? { fieldSelector: this.opts.fieldSelector } : {};
  }

  private async watchFrom(resourceVersion: string): Promise<void> {
    // The server answers: from here on the stream counts towards the healthy period.
    this.backoff.healthy();
    this.lastWatchAt = Date.now();
    const timeoutSeconds = Math.round(this.opts.watchSeconds?.() ?? 300 + Math.random() * 300);
    const handle = this.opts.client.watch<T>(
      this.opts.path,
      { ...this.query(), resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
      (ev) => this.apply(ev.type, ev.object),
    );
    this.watch = handle;
    await handle.done;
  }

  /** When to watch (or LIST) again after a watch, or the LIST before it, ended; decides too whether that round LISTs. */
  private scheduleNext(failure: unknown, listFailed: boolean): void {
    const floor = this.policy.initialMs;
    const now = Date.now();
    const log = this.opts.logger;
    const object = this.opts.what;
    if (this.restartRequested && failure === undefined) {
      this.restartRequested = false;
      this.notBefore = this.lastWatchAt + floor;
      log
        .v(2)
        .info('Watch restarted after the API server came back', { object, resourceVersion: this.resourceVersion });
      return;
    }
    this.restartRequested = false;
    const kind = failure === undefined ? undefined : this.opts.errors.kind(failure);
    if (kind === 'unavailable' && !this.opts.gate.usable) {
      // No server: the gate holds the loop until it is back; nothing ran too often, so the
      // back-off does not grow; the next request goes no sooner than the floor after this one.
      this.notBefore = (listFailed ? this.lastListAt : this.lastWatchAt) + floor;
      return;
    }
    // Something was missed: history the server no longer has, an event we could not read, a refusal.
    if (kind !== undefined && kind !== 'unavailable' && !listFailed) this.resourceVersion = undefined;
    // A watch that lived its healthy period and ended (its timeout, or a 410 after long quiet) is
    // routine: the next one at once. One that ended early waits the back-off, which then grows.
    const livedLong = !listFailed && now - this.lastWatchAt >= this.policy.resetAfterMs;
    if ((kind === undefined || kind === 'expired') && livedLong) {
      this.backoff.reset();
      this.notBefore = kind === 'expired' ? this.lastListAt + floor : 0;
      log.v(4).info(kind === 'expired' ? 'Watch expired (410); listing again' : 'Watch ended; watching again', {
        object,
        resourceVersion: this.resourceVersion,
      });
      return;
    }
    const delay = this.backoff.next();
    this.notBefore = now + delay;
    const retryIn = `${delay}ms`;
    const again = this.resourceVersion === undefined ? 'listing again' : 'watching again';
    if (failure === undefined) {
      log.v(this.backoff.failures > 1 ? 2 : 4).info(`Watch ended early; ${again} after back-off`, { object, retryIn });
      return;
    }
    const err = this.opts.errors.describe(failure);
    if (kind === 'refused') {
      // The Node authorizer refuses objects of pods not bound to this node: worth an operator's eye, once.
      if (err !== this.warnedRefusal)
        log.warn('The API server refuses to list or watch; retrying after back-off', { object, err, retryIn });
      this.warnedRefusal = err;
    } else if (kind === 'too-large')
      log.warn('Watch refused an oversized answer; listing again after back-off', { object, err, retryIn });
    else if (kind === 'expired')
      log.v(4).info('Watch expired (410); listing again after back-off', { object, retryIn });
    else log.v(2).info(`Watch failed; ${again} after back-off`, { object, err, retryIn });
  }

  private apply(type: WatchEventType, obj: T): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (type !== 'BOOKMARK') this.store.apply(type, obj);
  }
}

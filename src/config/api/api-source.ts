// The API server's pods bound to this node (the kubelet's config/apiserver.go), as the node's one
// pods watch (src/informer/reflector.ts, `fieldSelector=spec.nodeName=<node>`, started by the API
// side) tells them: every LIST and watch event of a pod that is not a mirror becomes an
// ADD/UPDATE/REMOVE of the one desired set, as source `api`. The mirror pods of the same watch are
// the API side's (its mirror pod cache).
//
// The source says it has been seen after its first LIST: until then the set holds back the API
// pods found running (pod-config/runtime-adoption.ts).
import type { Pod } from 'kubernetes-types/core/v1';
import type { Informer, ReflectorHandler } from '../../informer/store.js';
import type { Logger } from '../../log/logger';
import type { ConfigSourceEvents, StaticPod } from '../types';
import { CONFIG_SEEN, isMirrorPod } from '../../k8s/annotations.js';
import { sameApiPod, toDesiredPod } from './api-pods';

export interface ApiSourceOptions {
  readonly nodeName: string;
  readonly events: Pick<ConfigSourceEvents, 'update' | 'ready'>;
  readonly logger: Logger;
  readonly now?: () => Date;
  /** Told once per pod and reason when an API pod cannot run here (the API side records it as the pod's Warning event). */
  readonly refused?: (pod: { namespace: string; name: string; uid: string }, reason: string, message: string) => void;
}

export class ApiPodSource implements ReflectorHandler<Pod> {
  /** What the desired set has been told: key -> pod. */
  private readonly told = new Map<string, StaticPod>();
  /** Refusals already logged, as `uid:reason`. */
  private readonly refusedLogged = new Set<string>();
  /** Pods whose deletion the set has been told (their REMOVE), by UID, until the object is gone. */
  private readonly deletionTold = new Set<string>();
  private listedOnce = false;

  constructor(private readonly opts: ApiSourceOptions) {}

  /** Hears the node's pods watch until the returned function is called. */
  attach(pods: Informer<Pod>): () => void {
    return pods.addHandler(this);
  }

  replaced(items: readonly Pod[]): void {
    this.replace(items);
    if (this.listedOnce) return;
    this.listedOnce = true;
    this.opts.logger.info('API pods listed', { pods: this.told.size });
    this.opts.events.ready();
  }

  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', p: Pod): void {
    if (type === 'DELETED') {
      this.deletionTold.delete(p.metadata?.uid ?? '');
      const key = `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
      const had = this.told.get(key);
      if (had && had.uid === p.metadata?.uid) this.remove(key);
      return;
    }
    this.put(p);
  }

  /** A full LIST: what it lacks is gone. */
  private replace(items: readonly Pod[]): void {
    const listed = new Set(items.map((p) => p.metadata?.uid ?? ''));
    for (const uid of [...this.deletionTold]) if (!listed.has(uid)) this.deletionTold.delete(uid);
    const keys = new Set<string>();
    for (const p of items) {
      const key = this.put(p);
      if (key) keys.add(key);
    }
    for (const key of [...this.told.keys()]) if (!keys.has(key)) this.remove(key);
  }

  /** Returns the key the pod is desired under, if it is. */
  private put(p: Pod): string | undefined {
    if (isMirrorPod(p)) return undefined;
    const key = `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
    const had = this.told.get(key);
    const r = toDesiredPod(
      p,
      this.opts.nodeName,
      had?.uid === p.metadata?.uid
        ? new Date(had!.pod.metadata.annotations[CONFIG_SEEN] ?? Date.now())
        : (this.opts.now?.() ?? new Date()),
    );
    if ('refused' in r) {
      const id = `${p.metadata?.uid ?? ''}:${r.refused}`;
      if (!this.refusedLogged.has(id)) {
        this.refusedLogged.add(id);
        this.opts.logger.error('API pod refused: it cannot run on this node', {
          pod: key,
          podUID: p.metadata?.uid ?? '',
          err: r.refused,
        });
        this.opts.refused?.(
          { namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '', uid: p.metadata?.uid ?? '' },
          r.reason,
          r.refused,
        );
      }
      if (had) this.remove(key);
      return undefined;
    }
    if (p.metadata?.deletionTimestamp) {
      this.deletionStarted(key, had?.uid === r.pod.uid ? had : undefined, r.pod);
      return undefined;
    }
    if (had && sameApiPod(had, r.pod)) return key;
    this.told.set(key, r.pod);
    this.opts.events.update(had ? { op: 'UPDATE', pod: r.pod, previous: had } : { op: 'ADD', pod: r.pod });
    return key;
  }

  /**
   * Someone deletes the pod: its worker stops it with the shorter of its grace period and the
   * deletion's, and the API side sends the final DELETE once it is gone. The set is told the pod
   * with that grace (an UPDATE, or an ADD when it was not told yet: an agent restarted during the
   * deletion adopts the pod so that its stop ends in the DELETE), then its REMOVE.
   */
  private deletionStarted(key: string, had: StaticPod | undefined, now: StaticPod): void {
    // Told already; a shorter grace later is not followed (the worker is stopping it).
    if (this.deletionTold.has(now.uid)) return;
    this.deletionTold.add(now.uid);
    const spec = now.pod.spec!;
    const deletionGrace = now.pod.metadata.deletionGracePeriodSeconds;
    const grace = Math.min(spec.terminationGracePeriodSeconds ?? 30, deletionGrace ?? Number.POSITIVE_INFINITY);
    const last: StaticPod = { ...now, pod: { ...now.pod, spec: { ...spec, terminationGracePeriodSeconds: grace } } };
    const other = this.told.get(key);
    if (other && other.uid !== now.uid) this.remove(key);
    this.told.delete(key);
    this.opts.events.update(had ? { op: 'UPDATE', pod: last, previous: had } : { op: 'ADD', pod: last });
    this.opts.events.update({ op: 'REMOVE', pod: last });
  }

  private remove(key: string): void {
    const had = this.told.get(key);
    if (!had) return;
    this.told.delete(key);
    this.opts.events.update({ op: 'REMOVE', pod: had });
  }
}

// Restarts asked through the API: `kubectl annotate pod <mirror> kubectl.kubernetes.io/restartedAt=<v>`
// on a static pod's mirror. This side only reads the mirror and tells the wiring (which hands the
// request to the pod workers); it never touches a container. Whether the value was already acted on
// is the workers' to decide, from the value the running containers carry in the runtime.
import type { Pod } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../../config/types.js';
import { RESTARTED_AT } from '../../k8s/annotations.js';
import { isMirrorOf } from './mirror-pod.js';

/** Hands a restart request on: the static pod's UID and the annotation's value. */
export type RestartRequestListener = (uid: string, value: string) => void;

/**
 * The restart the mirror asks of the static pod, if the mirror is a current mirror of it on this
 * node (its config.mirror equals the static pod's hash, not being deleted): else nothing, so a stale
 * mirror of an earlier manifest, or another node's pod, can never restart anything.
 */
export function restartRequestOf(
  mirror: Pod | undefined,
  sp: StaticPod | undefined,
  nodeName: string,
): string | undefined {
  if (!mirror || !sp || !isMirrorOf(mirror, sp)) return undefined;
  if (mirror.spec?.nodeName !== nodeName || mirror.metadata?.deletionTimestamp) return undefined;
  const value = mirror.metadata?.annotations?.[RESTARTED_AT];
  return value === undefined || value === '' ? undefined : value;
}

/** Reads the requests off the mirror cache and hands each new (uid, value) on once. */
export class MirrorRestartRequests {
  /** The last value handed on per static pod UID: the cache re-reads mirrors often (status patches). */
  private readonly told = new Map<string, string>();

  constructor(
    private readonly mirror: (key: string) => Pod | undefined,
    private readonly staticPod: (key: string) => StaticPod | undefined,
    private readonly nodeName: string,
    private readonly listener: RestartRequestListener,
  ) {}

  /** Looks at one pod key (a mirror changed, or the static pod did). */
  check(key: string): void {
    const sp = this.staticPod(key);
    const value = restartRequestOf(this.mirror(key), sp, this.nodeName);
    if (!sp || value === undefined || this.told.get(sp.uid) === value) return;
    this.told.set(sp.uid, value);
    this.listener(sp.uid, value);
  }

  /** Looks at these keys, and forgets pods no longer desired. */
  checkAll(keys: Iterable<string>, desiredUids: ReadonlySet<string>): void {
    for (const uid of this.told.keys()) if (!desiredUids.has(uid)) this.told.delete(uid);
    for (const k of keys) this.check(k);
  }
}

// The start of the pod workers, once the manifests have all been read (the kubelet's
// sourcesReady): the runtime is read back (the pod cache's first full read), a kubelet's pods of
// the same manifests are adopted under their UIDs, pods whose source has not answered yet (an
// unreachable staticPodURL) are held, and every other runtime pod becomes a worker's to adopt or
// stop. Nothing starts before the read succeeds; a failed read is retried with back-off.
import type { Logger } from '../log/logger.js';
import type { RuntimePod } from '../kuberuntime/runtime-pods.js';
import type { StaticPod } from '../config/types.js';
import { Backoff } from '../util/backoff.js';
import { errorMessage } from '../util/error-message.js';
import { findKubeletAdoptions, type KubeletAdoption } from './kubelet-adoption.js';

export interface StartAdoptionDeps {
  /** The pod cache's first full read, and what it found. */
  readAll(): Promise<ReadonlyMap<string, RuntimePod>>;
  /** The desired static pods, all sources read. */
  desired(): readonly StaticPod[];
  /** Config re-identifies a desired pod under a kubelet's runtime UID. */
  adoptIdentity(a: KubeletAdoption): void;
  /** Runtime pods to keep out of adoption for now (a source that has not answered), with why. */
  holdBack?(found: ReadonlyMap<string, RuntimePod>): ReadonlySet<string>;
  /** Hands the runtime pods to the pod workers. */
  adoptRuntimePods(found: Map<string, RuntimePod>): void;
  /** Everything that waits for adoption (the PLEG, the API side's orphan cleanup, systemd's READY). */
  adopted(): void;
  logger: Logger;
}

/** Reads the runtime back and adopts; retries until it can. Returns a stop function. */
export function startAdoption(d: StartAdoptionDeps): () => void {
  const backoff = new Backoff({ initialMs: 500, maxMs: 10_000, jitter: 0.2, resetAfterMs: 0 });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = (): void => {
    d.readAll()
      .then((all) => {
        if (stopped) return;
        const found = new Map(all);
        for (const uid of d.holdBack?.(found) ?? []) found.delete(uid);
        d.logger.info('Manifests read, adopting running pods', { runtimePods: found.size });
        // A kubelet's pod of the same manifest keeps running under its UID.
        for (const a of findKubeletAdoptions(d.desired(), found)) d.adoptIdentity(a);
        d.adoptRuntimePods(found);
        d.adopted();
      })
      .catch((err: unknown) => {
        if (stopped) return;
        const delay = backoff.next();
        d.logger.error('Could not read pods back from the runtime, will retry', {
          err: errorMessage(err),
          retryInMs: delay,
        });
        timer = setTimeout(attempt, delay);
        timer.unref();
      });
  };
  attempt();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

// The one adoption policy: what becomes of each pod the runtime holds when the agent starts. Once the
// manifests have all been read (the kubelet's sourcesReady for the file source), the runtime is read
// back in full, and each runtime pod is
// - adopted: a desired pod has its UID (a kubelet's pod of the same manifest first takes its UID,
//   kubelet-adoption.ts); its worker keeps what runs, and admission admits it as it runs;
// - held: its source has not answered yet (an unreachable staticPodURL, the API server before its
//   first LIST), or a refused manifest may declare it: it keeps running, untouched, until that changes
//   (a source that has not answered never stops what runs);
// - stopped: a static source, bootlet, or a source this agent reads made it, and no source gives it;
// - left alone: anything else (another tool's pod, a source this agent does not read, labels that
//   are not a valid pod identity): never stop what bootlet did not start.
// A held pod is looked at again when its source answers, when the refused claims change, and when a
// desired pod takes its slot (before the workers hear of that pod, so it stops before its successor
// starts). The workers only carry out the stops. Nothing starts before the read succeeds; a failed read
// is retried with back-off.
import type { Logger } from '../../log/logger.js';
import type { RuntimePod } from '../../kuberuntime/runtime-pods.js';
import { identityProblem } from '../../kuberuntime/labels.js';
import { configSourceOf, isStaticRuntimePod } from '../../kuberuntime/static-source.js';
import { podSlot } from '../../k8s/pod-slot.js';
import { Backoff } from '../../util/backoff.js';
import { errorMessage } from '../../util/error-message.js';
import type { ManifestClaim, StaticPod } from '../types.js';
import { findKubeletAdoptions, type KubeletAdoption } from './kubelet-adoption.js';
import { isSourceName, SOURCE_LABEL, type SourceName } from './sources.js';

/** What the policy reads of the desired set (PodConfig). */
export interface DesiredSetState {
  /** The sources this node reads (the API server's with a kubeconfig): their pods are this agent's to stop. */
  readonly sources: ReadonlySet<SourceName>;
  hasSeen(source: SourceName): boolean;
  /** A desired pod sits in this slot (k8s/pod-slot.ts). */
  slotDesired(slot: string): boolean;
  uidDesired(uid: string): boolean;
  all(): readonly StaticPod[];
}

/** What the policy's decisions are carried out by, from the wiring. */
export interface AdoptionActions {
  /** The runtime read in full (the pod cache's first full read), and what it holds. */
  readAll(): Promise<ReadonlyMap<string, RuntimePod>>;
  /** A desired pod is re-identified under a kubelet's running pod's UID (FileSource.adoptIdentity). */
  adoptIdentity(a: KubeletAdoption): void;
  /** Admission may start (the pods found running are admitted as they run, foundAtStart). */
  admit(): void;
  /** A worker has the pod (it was admitted): it adopts what runs of it. */
  runs(uid: string): boolean;
  /** The pod workers stop and remove a runtime pod no source gives. */
  stop(uid: string, pod: { namespace: string; name: string; source: string | undefined }, message: string): void;
  /** Every runtime pod has been decided on: pods may start, and what waits for adoption goes on. */
  adopted(): void;
}

export type HeldPodView =
  | { readonly uid: string; readonly key: string; readonly file: string; readonly message: string }
  | { readonly uid: string; readonly key: string; readonly source: SourceName };

type HeldFor = { readonly source: SourceName } | { claim: ManifestClaim };

interface HeldPod {
  readonly rt: RuntimePod;
  readonly key: string;
  readonly slot: string;
  readonly why: HeldFor;
}

export class RuntimeAdoption {
  /** The UIDs the runtime held when it was read back; undefined until then. */
  private found: ReadonlySet<string> | undefined;
  private readonly held = new Map<string, HeldPod>();
  /** The refused manifest files and the pods they declare, from the file source. */
  private claims: readonly ManifestClaim[] = [];
  private actions: AdoptionActions | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly set: DesiredSetState,
    private readonly logger: Logger,
  ) {}

  /** Reads the runtime back (retrying until it can) and decides for each pod it holds. Returns a stop function. */
  start(actions: AdoptionActions): () => void {
    this.actions = actions;
    const backoff = new Backoff({ initialMs: 500, maxMs: 10_000, jitter: 0.2, resetAfterMs: 0 });
    const attempt = (): void => {
      actions
        .readAll()
        .then((all) => {
          if (!this.stopped) this.decide(all, actions);
        })
        .catch((err: unknown) => {
          if (this.stopped) return;
          const delay = backoff.next();
          this.logger.error('Could not read pods back from the runtime, will retry', {
            err: errorMessage(err),
            retryInMs: delay,
          });
          this.timer = setTimeout(attempt, delay);
          this.timer.unref();
        });
    };
    attempt();
    return () => {
      this.stopped = true;
      if (this.timer) clearTimeout(this.timer);
    };
  }

  /** Whether the runtime held the pod when it was read back at start. */
  foundAtStart(uid: string): boolean {
    return this.found?.has(uid) ?? false;
  }

  /** Runtime pods kept running: for a refused manifest that may declare them (its file and why), or until their source answers. */
  heldPods(): HeldPodView[] {
    return [...this.held].map(([uid, h]) =>
      'claim' in h.why
        ? { uid, key: h.key, file: h.why.claim.file, message: h.why.claim.message }
        : { uid, key: h.key, source: h.why.source },
    );
  }

  /**
   * The refused manifest files and the pods they declare changed: a pod held for one whose file is
   * gone (or no longer declares it) is stopped; a held pod stays while anything may still claim it.
   */
  refusedClaims(claims: readonly ManifestClaim[]): void {
    this.claims = claims;
    for (const [uid, h] of [...this.held]) {
      if (!('claim' in h.why)) continue;
      const claim = this.claimFor(h.key);
      if (!claim) {
        this.stop(
          uid,
          h,
          'The refused manifest that kept the pod running is gone or declares another pod, stopping it',
        );
      } else if (claim.file !== h.why.claim.file || claim.message !== h.why.claim.message) {
        h.why.claim = claim;
        this.logHeld(uid, h.key, claim);
      }
    }
  }

  /**
   * A pod of `slot` with `uid` is desired now (told before the workers hear of it): a held pod of that
   * UID is adopted, any other of that slot stopped, so that it stops before its successor starts.
   */
  desired(slot: string, uid: string): void {
    for (const [heldUid, h] of [...this.held]) {
      if (heldUid === uid) this.held.delete(heldUid);
      else if (h.slot !== slot) continue;
      else if ('claim' in h.why)
        this.stop(heldUid, h, 'Manifest accepted, replacing the pod kept running while it was refused');
      else {
        this.held.delete(heldUid);
        if (this.actions) this.decideOne(heldUid, h.rt, this.actions);
      }
    }
  }

  /** The source has answered in full: its held pods that it gives are adopted, the others decided on again. */
  answered(source: SourceName): void {
    const actions = this.actions;
    if (!actions) return;
    for (const [uid, h] of [...this.held]) {
      if (!('source' in h.why) || h.why.source !== source) continue;
      this.held.delete(uid);
      if (!this.set.uidDesired(uid)) this.decideOne(uid, h.rt, actions);
    }
  }

  private decide(all: ReadonlyMap<string, RuntimePod>, actions: AdoptionActions): void {
    this.found = new Set(all.keys());
    const rest = new Map<string, RuntimePod>();
    const heldBy = new Map<SourceName, number>();
    for (const [uid, rt] of all) {
      const key = `${rt.namespace}/${rt.name}`;
      const problem = identityProblem({ podNamespace: rt.namespace, podName: rt.name, podUid: uid });
      if (problem !== undefined) {
        this.logger.warn('Leaving runtime pod alone: its labels are not a valid pod identity', {
          podUID: uid,
          err: problem,
        });
        continue;
      }
      const source = this.unansweredSource(rt, key);
      if (source) {
        this.held.set(uid, { rt, key, slot: podSlot(key, source), why: { source } });
        heldBy.set(source, (heldBy.get(source) ?? 0) + 1);
      } else rest.set(uid, rt);
    }
    for (const [source, n] of heldBy)
      this.logger.info(`Pods from ${SOURCE_LABEL[source]} keep running until it answers`, { pods: n });
    this.logger.info('Manifests read, adopting running pods', { runtimePods: rest.size });
    // A kubelet's pod of the same manifest keeps running under its UID.
    for (const a of findKubeletAdoptions(this.set.all(), rest)) actions.adoptIdentity(a);
    actions.admit();
    for (const [uid, rt] of rest) this.decideOne(uid, rt, actions);
    actions.adopted();
  }

  /**
   * A source that this node reads and that has not been seen in full made the pod: it is held until
   * that source answers, unless its slot is desired already (then it is replaced as any stale pod).
   */
  private unansweredSource(rt: RuntimePod, key: string): SourceName | undefined {
    const source = configSourceOf(rt);
    if (!isSourceName(source) || !this.set.sources.has(source) || this.set.hasSeen(source)) return undefined;
    return this.set.slotDesired(podSlot(key, source)) ? undefined : source;
  }

  /** A runtime pod with no held source: adopted by its worker, left alone, held for a claim, or stopped. */
  private decideOne(uid: string, rt: RuntimePod, actions: AdoptionActions): void {
    if (actions.runs(uid)) return;
    const key = `${rt.namespace}/${rt.name}`;
    const source = configSourceOf(rt);
    if (!isStaticRuntimePod(rt, this.set.sources)) {
      this.logger.v(2).info('Leaving runtime pod alone: no static source made it', {
        pod: key,
        podUID: uid,
        source: source ?? '',
      });
      return;
    }
    const ref = { namespace: rt.namespace, name: rt.name, source };
    // A refused manifest never declares an API pod: the server's list is the whole answer for it.
    if (source === 'api')
      return actions.stop(uid, ref, 'Found pod the API server no longer binds to this node, stopping it');
    const claim = this.claimFor(key);
    if (!claim) return actions.stop(uid, ref, 'Found pod with no manifest, stopping it');
    this.held.set(uid, { rt, key, slot: podSlot(key, source), why: { claim } });
    this.logHeld(uid, key, claim);
  }

  /** The refused claim that keeps a pod of this key running, if no accepted manifest declares the key. */
  private claimFor(key: string): ManifestClaim | undefined {
    if (this.set.slotDesired(podSlot(key, 'file'))) return undefined;
    // A file that could not be read far enough may declare any pod.
    return this.claims.find((c) => c.podKey === key) ?? this.claims.find((c) => c.podKey === undefined);
  }

  private stop(uid: string, h: HeldPod, message: string): void {
    this.held.delete(uid);
    this.actions?.stop(uid, { namespace: h.rt.namespace, name: h.rt.name, source: configSourceOf(h.rt) }, message);
  }

  private logHeld(uid: string, key: string, claim: ManifestClaim): void {
    this.logger.warn('Keeping pod running: its manifest is refused', {
      pod: key,
      podUID: uid,
      file: claim.file,
      err: claim.message,
    });
  }
}

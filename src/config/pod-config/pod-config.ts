// The one desired pod set (the kubelet's PodConfig): every source (the manifest path, staticPodURL,
// next the API server) feeds it ADD/UPDATE/REMOVE and says when it has been seen in full. It
// merges them with the clash rules (merge.ts), tells its subscribers (the pod workers) each change
// in order, and answers lookups by UID and by key (workers, cgroups, the API side: none keeps a
// copy of its own). What becomes of the pods the runtime holds at start is decided beside it
// (runtime-adoption.ts), from each source's state, so that an absent source never stops what it made.
// A static pod and an API pod of
// one namespace/name are two desired pods (k8s/pod-slot.ts), as in the kubelet, which keys
// pods by UID: both run, the API pod keeps the name in the API (the static pod gets no mirror pod),
// and the log says so, naming both.
import { CONFIG_SOURCE } from '../../k8s/annotations';
import type { Logger } from '../../log/logger';
import type { ConfigSourceEvents, PodUpdate, StaticPod, StaticPodView } from '../types';
import { RuntimeAdoption, type AdoptionActions, type HeldPodView } from './runtime-adoption';
import { candidatesOf, chooseWinner, type DesiredEntry, type ShadowedPod } from './merge';
import { podSlot } from '../../k8s/pod-slot';
import { SLOT_SOURCES, STATIC_SOURCES, type SourceName } from './sources';

const API_SOURCES: ReadonlySet<string> = new Set(['api']);

export type { SourceName } from './sources';

export interface PodConfigOptions {
  /** The sources this node reads; the set is complete once each has been seen in full. */
  readonly sources: readonly SourceName[];
  readonly logger: Logger;
}

export class PodConfig implements StaticPodView {
  private readonly bySource = new Map<SourceName, Map<string, StaticPod>>();
  private readonly seen = new Set<SourceName>();
  /** The desired set: the winner of each slot (a pod key; an API pod's apart). */
  private readonly desired = new Map<string, DesiredEntry>();
  /** Index of `desired` by UID: the slot. */
  private readonly slotOfUid = new Map<string, string>();
  private readonly subscribers: ((u: PodUpdate) => void)[] = [];
  private readonly changeListeners: (() => void)[] = [];
  private readonly seenListeners: ((s: SourceName) => void)[] = [];
  /** The pods held back under each slot that has a clash. */
  private readonly shadowed = new Map<string, ShadowedPod[]>();
  /** Clashes already logged: per slot, `source|uid`. */
  private readonly shadowedReported = new Map<string, Set<string>>();
  /** Keys with both a static and an API pod desired, and the pair last logged (`staticUid|apiUid`). */
  private readonly sharedNames = new Map<string, string>();
  private readonly adoption: RuntimeAdoption;
  private adopted = false;

  constructor(private readonly opts: PodConfigOptions) {
    for (const s of opts.sources) this.bySource.set(s, new Map());
    const sources = new Set(opts.sources);
    this.adoption = new RuntimeAdoption(
      {
        sources,
        hasSeen: (s) => this.seen.has(s),
        slotDesired: (slot) => this.desired.has(slot),
        uidDesired: (uid) => this.slotOfUid.has(uid),
        all: () => this.all(),
      },
      opts.logger,
    );
  }

  /** What a source is handed: its updates and its first full answer go here (errors and warnings it logs itself). */
  feed(source: SourceName): ConfigSourceEvents {
    return {
      update: (u) => this.update(source, u),
      ready: () => this.markSeen(source),
      // The file source's refused manifests: the runtime pods they may declare keep running.
      refusedClaims: (claims) => this.adoption.refusedClaims(claims),
      error: () => {},
      warning: () => {},
    };
  }

  update(source: SourceName, u: PodUpdate): void {
    const pods = this.pods(source);
    if (u.op === 'REMOVE') pods.delete(u.pod.key);
    else pods.set(u.pod.key, u.pod);
    this.settle(u.pod.key);
  }

  /** The source has been seen in full once (the kubelet's SeenAllSources counts these). */
  markSeen(source: SourceName): void {
    this.pods(source);
    if (this.seen.has(source)) return;
    this.seen.add(source);
    this.adoption.answered(source);
    for (const l of [...this.seenListeners]) l(source);
    this.changed();
  }

  seenAllSources(): boolean {
    return [...this.bySource.keys()].every((s) => this.seen.has(s));
  }

  hasSeen(source: SourceName): boolean {
    return this.seen.has(source);
  }

  /** Called once for each source when it is first seen in full (after its pods have been told). */
  onSeen(listener: (source: SourceName) => void): void {
    this.seenListeners.push(listener);
  }

  /** Every change, in order, as it happens. */
  subscribe(subscriber: (u: PodUpdate) => void): void {
    this.subscribers.push(subscriber);
  }

  /** After every change, and when the set becomes ready. */
  onChange(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  /**
   * Once the manifest path has been seen in full, reads the runtime back and decides for each pod it
   * holds (runtime-adoption.ts); the set is ready once that is done. Returns the stop of an adoption
   * under way (retrying a runtime that cannot be read).
   */
  adoptRuntimePods(actions: AdoptionActions): () => void {
    let stop: (() => void) | undefined;
    const start = (): void => {
      stop = this.adoption.start({
        ...actions,
        adopted: () => {
          this.adopted = true;
          this.changed();
          actions.adopted();
        },
      });
    };
    if (this.seen.has('file')) start();
    else this.onSeen((seen) => seen === 'file' && start());
    return () => stop?.();
  }

  /** Whether the runtime held the pod when it was read back at start. */
  foundAtStart(uid: string): boolean {
    return this.adoption.foundAtStart(uid);
  }

  /** Runtime pods kept running: for a refused manifest that may declare them, or until their source answers. */
  heldPods(): HeldPodView[] {
    return this.adoption.heldPods();
  }

  ready(): boolean {
    return this.adopted && this.seenAllSources();
  }

  /** Every desired pod, of every source. */
  all(): StaticPod[] {
    return [...this.desired.values()].map((e) => e.pod);
  }

  /** The desired static pods (those that get a mirror pod). */
  list(): StaticPod[] {
    return [...this.desired.values()].filter((e) => STATIC_SOURCES.has(e.source)).map((e) => e.pod);
  }

  /** The desired pod of the key: the static one when a static pod and an API pod share it. */
  podByKey(key: string): StaticPod | undefined {
    return (this.desired.get(key) ?? this.desired.get(podSlot(key, 'api')))?.pod;
  }

  podByUid(uid: string): StaticPod | undefined {
    const slot = this.slotOfUid.get(uid);
    return slot === undefined ? undefined : this.desired.get(slot)?.pod;
  }

  sourceOfUid(uid: string): SourceName | undefined {
    const slot = this.slotOfUid.get(uid);
    return slot === undefined ? undefined : this.desired.get(slot)?.source;
  }

  /**
   * Each pod of `sources` the set lets go of, after the workers were told: a REMOVE, and with
   * `replaced` also the old pod of an UPDATE that gave its key a new UID.
   */
  private onGone(sources: ReadonlySet<string>, replaced: boolean, listener: (pod: StaticPod) => void): void {
    this.subscribe((u) => {
      const gone =
        u.op === 'REMOVE'
          ? u.pod
          : replaced && u.op === 'UPDATE' && u.previous.uid !== u.pod.uid
            ? u.previous
            : undefined;
      if (gone && sources.has(gone.pod.metadata.annotations[CONFIG_SOURCE] ?? '')) listener(gone);
    });
  }

  /** Each static pod whose key leaves the set (REMOVE), after the workers were told. */
  onRemoved(listener: (pod: StaticPod) => void): void {
    this.onGone(STATIC_SOURCES, false, listener);
  }

  /** A read-only view for the API side's API pods: their status goes to the pod itself, and a deleted one gets its final DELETE. */
  apiPodView(): {
    apiPods(): StaticPod[];
    apiPodByUid(uid: string): StaticPod | undefined;
    onRemoved(listener: (pod: StaticPod) => void): void;
    onDesired(listener: (pod: StaticPod) => void): void;
  } {
    return {
      apiPods: () => this.apiPods(),
      apiPodByUid: (uid) => this.apiPodByUid(uid),
      onRemoved: (l) => this.onGone(API_SOURCES, true, l),
      onDesired: (l) => this.onDesired(API_SOURCES, l),
    };
  }

  /** Each pod of `sources` the set takes on or changes (ADD, UPDATE), after the workers were told, in the same turn. */
  private onDesired(sources: ReadonlySet<string>, listener: (pod: StaticPod) => void): void {
    this.subscribe((u) => {
      if (u.op !== 'REMOVE' && sources.has(u.pod.pod.metadata.annotations[CONFIG_SOURCE] ?? '')) listener(u.pod);
    });
  }

  /** The desired pods of the API server's source (their status goes to the pod itself). */
  apiPods(): StaticPod[] {
    return [...this.desired.values()].filter((e) => e.source === 'api').map((e) => e.pod);
  }

  apiPodByUid(uid: string): StaticPod | undefined {
    return this.sourceOfUid(uid) === 'api' ? this.podByUid(uid) : undefined;
  }

  /** A read-only view for the API side: static pods only. */
  staticPods(): StaticPodView {
    const isStatic = (p: StaticPod | undefined): StaticPod | undefined =>
      p && STATIC_SOURCES.has(this.sourceOfUid(p.uid)!) ? p : undefined;
    return {
      list: () => this.list(),
      onChange: (l) => this.onChange(l),
      ready: () => this.ready(),
      onRemoved: (l) => this.onRemoved(l),
      podByKey: (k) => isStatic(this.podByKey(k)),
      podByUid: (u) => isStatic(this.podByUid(u)),
    };
  }

  private pods(source: SourceName): Map<string, StaticPod> {
    let pods = this.bySource.get(source);
    if (!pods) this.bySource.set(source, (pods = new Map()));
    return pods;
  }

  /**
   * Brings the key's desired pods (its static one and its API one) in line with the sources and
   * tells what changed. A UID that a change frees is looked at again for the slots whose pods were
   * held back for it.
   */
  private settle(key: string): void {
    const queue = [key];
    const requeued = new Set<string>();
    const updates: { u: PodUpdate; slot: string }[] = [];
    const touched = new Set<string>();
    for (let k = queue.shift(); k !== undefined; k = queue.shift()) {
      const here = k;
      touched.add(here);
      const candidates = candidatesOf(this.bySource, here);
      for (const group of SLOT_SOURCES) {
        const slot = podSlot(here, group[0]!);
        const { winner, shadowed } = chooseWinner(
          candidates.filter((c) => group.includes(c.source)),
          (uid) => {
            const owner = this.slotOfUid.get(uid);
            return owner === undefined || owner === slot ? undefined : this.desired.get(owner);
          },
        );
        this.reportShadowed(slot, here, shadowed);
        const prev = this.desired.get(slot);
        if (prev?.pod === winner?.pod) continue;
        if (prev) this.slotOfUid.delete(prev.pod.uid);
        if (winner) {
          this.desired.set(slot, winner);
          this.slotOfUid.set(winner.pod.uid, slot);
        } else this.desired.delete(slot);
        if (!winner) updates.push({ u: { op: 'REMOVE', pod: prev!.pod }, slot });
        else if (!prev) updates.push({ u: { op: 'ADD', pod: winner.pod }, slot });
        else updates.push({ u: { op: 'UPDATE', pod: winner.pod, previous: prev.pod }, slot });
        const freed = prev && prev.pod.uid !== winner?.pod.uid ? prev.pod.uid : undefined;
        if (freed === undefined) continue;
        for (const [other, held] of this.shadowed) {
          if (other === slot || requeued.has(other) || !held.some((h) => h.why === 'uid' && h.pod.uid === freed))
            continue;
          requeued.add(other);
          queue.push(held[0]!.pod.key);
        }
      }
    }
    for (const k of touched) this.reportSharedName(k);
    if (updates.length === 0) return;
    for (const { u, slot } of updates) {
      // A held runtime pod of this slot stops before its successor can start; the same UID is adopted.
      if (u.op !== 'REMOVE') this.adoption.desired(slot, u.pod.uid);
      for (const s of this.subscribers) s(u);
    }
    this.changed();
  }

  /**
   * A static pod and an API pod of one name both run (as in the kubelet); the name in the API is
   * the API pod's, so the static pod has no mirror pod there while it lasts. Said once per pair.
   */
  private reportSharedName(key: string): void {
    const st = this.desired.get(key);
    const api = this.desired.get(podSlot(key, 'api'));
    if (!st || !api) {
      this.sharedNames.delete(key);
      return;
    }
    const pair = `${st.pod.uid}|${api.pod.uid}`;
    if (this.sharedNames.get(key) === pair) return;
    this.sharedNames.set(key, pair);
    this.opts.logger.warn(
      'A static pod and an API pod have the same name: both run; the static pod gets no mirror pod while the API pod holds the name',
      {
        pod: key,
        staticPodUID: st.pod.uid,
        from: st.pod.file,
        apiPodUID: api.pod.uid,
      },
    );
  }

  /** Logs each clash once; one that is over is logged again if it comes back. */
  private reportShadowed(slot: string, key: string, shadowed: readonly ShadowedPod[]): void {
    if (shadowed.length === 0) {
      this.shadowed.delete(slot);
      this.shadowedReported.delete(slot);
      return;
    }
    this.shadowed.set(slot, [...shadowed]);
    let reported = this.shadowedReported.get(slot);
    if (!reported) this.shadowedReported.set(slot, (reported = new Set()));
    for (const s of shadowed) {
      const id = `${s.source}|${s.pod.uid}`;
      if (reported.has(id)) continue;
      reported.add(id);
      if (s.why === 'key')
        this.opts.logger.error('Static pod ignored: another source declares the same pod', {
          pod: key,
          source: s.source,
          from: s.pod.file,
          declaredBy: s.by.pod.file,
        });
      else
        this.opts.logger.error('Static pod ignored: another source has a pod with the same UID', {
          pod: key,
          uid: s.pod.uid,
          source: s.source,
          from: s.pod.file,
          declaredBy: s.by.pod.file,
        });
    }
  }

  private changed(): void {
    for (const l of [...this.changeListeners]) l();
  }
}

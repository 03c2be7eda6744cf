// What the config part hands downstream: desired static pods and the changes to them.
import type { DefaultedPod } from '../k8s/pod.js';

/** A Pod from a manifest, decoded, defaulted, validated and given its static-pod identity. */
export interface StaticPod {
  /** The pod as the kubelet works with it: name `<name>-<node>`, namespace, uid, annotations, spec defaulted. */
  readonly pod: DefaultedPod;
  /** 32 lowercase hex characters; equals the `kubernetes.io/config.hash` annotation. */
  readonly uid: string;
  /** `<namespace>/<name>` after suffixing: the key under which at most one desired pod exists. */
  readonly key: string;
  /** Absolute path of the file it came from. */
  readonly file: string;
  /**
   * Set when the pod carries the UID of a running pod a kubelet started from the same content
   * (FileSource.adoptIdentity): the UID bootlet computed for it, which it would have otherwise.
   */
  readonly computedUid?: string;
  /** The manifest sets `metadata.uid`: the UID is the operator's, never replaced by another. */
  readonly uidPinned?: true;
  /**
   * An API pod that cannot run here (its spec fails validation, or sets a field bootlet does not honour:
   * unhonoured-fields.ts): admission refuses it with this reason and message, so it is reported Failed
   * with a Warning event and never reaches a worker. Its identity is valid; nothing else in it is used.
   */
  readonly refusal?: { readonly reason: string; readonly message: string };
}

/**
 * A change to the desired set, keyed by pod key (namespace/name):
 * ADD: a key appears; UPDATE: the pod under a key changed (usually a new UID: the old pod must be
 * terminated and the new one started); REMOVE: the key is gone.
 */
export type PodUpdate =
  | { readonly op: 'ADD'; readonly pod: StaticPod }
  | { readonly op: 'UPDATE'; readonly pod: StaticPod; readonly previous: StaticPod }
  | { readonly op: 'REMOVE'; readonly pod: StaticPod };

/** A manifest that was refused. The pod from that file's last good version, if any, keeps running. */
export interface ManifestError {
  readonly file: string;
  /** One line: what is wrong, with line:column where the parser gives one. */
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
  /** Refused for crossing one of the parser's limits (depth, values, aliases, size, time, memory). */
  readonly limit?: true;
  /** The pod key (`<namespace>/<name>-<node>`) the file declares, when it could be read that far. */
  readonly podKey?: string;
}

/**
 * A manifest file that exists but is refused, and the pod it declares: a pod an earlier agent (or
 * an earlier bootlet) started from that file must be left running while the file is refused.
 */
export interface ManifestClaim {
  readonly file: string;
  /** `<namespace>/<name>-<node>`; undefined when the file could not be read that far (it could be any pod's). */
  readonly podKey?: string;
  /** Why the file is refused. */
  readonly message: string;
}

/** A manifest that was accepted with something worth telling the operator (unknown field, ...). */
export interface ManifestWarning {
  readonly file: string;
  readonly message: string;
}

export interface ConfigSourceEvents {
  update(u: PodUpdate): void;
  error(e: ManifestError): void;
  warning(w: ManifestWarning): void;
  /** The first full scan has been done: the desired set is complete (kubelet's sourcesReady). */
  ready(): void;
  /**
   * The refused files and the pods they declare, whenever that set changes (sorted by file). It
   * starts empty; what the first scan finds is told before ready().
   */
  refusedClaims?(claims: readonly ManifestClaim[]): void;
}

/** The one desired pod set, read-only, by UID and by key (`<namespace>/<name>`). */
export interface DesiredPodLookup {
  podByUid(uid: string): StaticPod | undefined;
  podByKey(key: string): StaticPod | undefined;
}

/** The desired static pods as the API side reads them (mirror pods are made for these only). */
export interface StaticPodView extends DesiredPodLookup {
  list(): readonly StaticPod[];
  /** Called after the set changed (add, update, remove) and when it becomes ready. */
  onChange(listener: () => void): void;
  /** Every source has been seen in full and the runtime's pods adopted: a pod missing now is gone. */
  ready(): boolean;
  /** Each static pod whose key leaves the set (REMOVE), after the workers were told. */
  onRemoved(listener: (pod: StaticPod) => void): void;
}

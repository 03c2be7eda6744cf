// Which running pods a kubelet started from the same manifests bootlet now reads, so that they are
// adopted as they run instead of being replaced. bootlet cannot compute the kubelet's UID for a
// manifest (FNV-128a over a Go spew dump of the decoded pod), so a kubelet's pod is recognised by
// every piece of evidence the kubelet leaves on it instead; config then re-identifies the desired
// pod under the running pod's UID (FileSource.adoptIdentity).
import type { Container, ContainerPort } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../types.js';
import { canonicalJson } from '../../kuberuntime/canonical-json.js';
import { containerMatchesSpec } from '../../kuberuntime/container-hash.js';
import { PodSandboxState, type KeyValueMap } from '../../cri/cri-types.js';
import type { RuntimeContainer, RuntimePod } from '../../kuberuntime/runtime-pods.js';
import { configSourceOf, madeByBootlet, podAnnotationsOf, podLabelsOf } from '../../kuberuntime/static-source.js';
import { SOURCE_ANNOTATIONS } from '../../k8s/annotations.js';

/** The desired pod of `file`, UID `computedUid`, is the running pod `runtimeUid`. */
export interface KubeletAdoption {
  readonly key: string;
  readonly file: string;
  readonly computedUid: string;
  readonly runtimeUid: string;
}

function withoutSourceAnnotations(a: KeyValueMap): KeyValueMap {
  return Object.fromEntries(Object.entries(a).filter(([k]) => !SOURCE_ANNOTATIONS.has(k)));
}

function sameMap(a: KeyValueMap, b: KeyValueMap): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The `io.kubernetes.container.ports` a kubelet writes: the defaulted ports, only when there are some. */
function portsMatch(written: ContainerPort[] | undefined, spec: Container): boolean {
  const want = spec.ports && spec.ports.length > 0 ? spec.ports : undefined;
  if (written === undefined || want === undefined) return written === want;
  return canonicalJson(written) === canonicalJson(want);
}

/**
 * A container made from `spec` by a kubelet: its name-and-image hash, and every annotation the
 * kubelet writes from the spec (ports, terminationMessagePath/Policy) and from the pod (grace period).
 */
function containerMatches(c: RuntimeContainer, spec: Container | undefined, graceSeconds: number | undefined): boolean {
  if (!spec || !containerMatchesSpec(c.meta, spec)) return false;
  if (!portsMatch(c.meta.ports, spec)) return false;
  if ((c.meta.terminationMessagePath ?? '') !== (spec.terminationMessagePath ?? '')) return false;
  if ((c.meta.terminationMessagePolicy ?? '') !== (spec.terminationMessagePolicy ?? '')) return false;
  return c.meta.terminationGracePeriodSeconds === graceSeconds;
}

/** Why `rt` is not the kubelet's pod of `d`, or undefined when every piece of evidence agrees. */
export function kubeletPodMismatch(d: StaticPod, rt: RuntimePod): string | undefined {
  if (`${rt.namespace}/${rt.name}` !== d.key) return 'another pod';
  if (configSourceOf(rt) !== 'file') return 'not from a manifest file';
  if (madeByBootlet(rt)) return 'made by bootlet'; // its UID is bootlet's: a different one means different content
  if (!sameMap(podLabelsOf(rt), d.pod.metadata.labels ?? {})) return 'labels differ';
  if (!sameMap(withoutSourceAnnotations(podAnnotationsOf(rt)), withoutSourceAnnotations(d.pod.metadata.annotations)))
    return 'annotations differ';
  const spec = d.pod.spec ?? { containers: [] };
  const specs = new Map([...(spec.initContainers ?? []), ...spec.containers].map((c) => [c.name, c]));
  const apps = new Set(spec.containers.map((c) => c.name));
  if (!rt.containers.some((c) => apps.has(c.name))) return 'no app container';
  const grace = spec.terminationGracePeriodSeconds ?? undefined;
  const other = rt.containers.find((c) => !containerMatches(c, specs.get(c.name), grace));
  return other ? `container ${other.name} differs` : undefined;
}

const hasReadySandbox = (rt: RuntimePod): boolean => rt.sandboxes[0]?.state === PodSandboxState.SANDBOX_READY;

/**
 * For each desired pod that has no runtime pod of its own UID, the one running pod a kubelet
 * started from the same manifest, if there is exactly one (preferring a ready sandbox when an old
 * exited version lingers beside it). A pinned UID is the operator's and is never replaced, and a pod
 * already re-identified is not looked at again.
 */
export function findKubeletAdoptions(
  desired: readonly StaticPod[],
  found: ReadonlyMap<string, RuntimePod>,
): KubeletAdoption[] {
  const out: KubeletAdoption[] = [];
  for (const d of desired) {
    if (found.has(d.uid) || d.uidPinned || d.computedUid !== undefined) continue;
    let matches = [...found.values()].filter((rt) => rt.uid !== d.uid && kubeletPodMismatch(d, rt) === undefined);
    if (matches.length > 1) matches = matches.filter(hasReadySandbox);
    if (matches.length === 1) out.push({ key: d.key, file: d.file, computedUid: d.uid, runtimeUid: matches[0]!.uid });
  }
  return out;
}

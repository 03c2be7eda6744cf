// The API server's pod-create rules that matter for a static pod, plus the static-pod restrictions.
// Every problem is collected (not just the first) so one edit can fix them all; each names its field,
// in the API server's words (validate/field-errors.ts, validate/api-formats.ts). An API pod is run
// through the same rules before anything in it names a path or an object on the node, without the
// static-pod restrictions: the API server took it, so only a server that lies (or a rule of ours
// stricter than its) makes one fail. The rules the API server relaxes for a pod that already exists
// (an API pod may predate them), and those it checks only when a pod is created (an API pod may have
// been updated since), are applied to static pods only.
import type { Container, Pod, PodSpec } from 'kubernetes-types/core/v1';
import type { ObjectMeta } from 'kubernetes-types/meta/v1';
import type { PathPart } from './field-path';
import { staticPodReferenceErrors } from './static-pod-references';
import { RESTART_POLICIES } from '../k8s/restart.js';
import { isDNS1123Label, isDNS1123Subdomain } from './validate/api-formats';
import { validateContainer, validateHostPorts, type ContainerRef } from './validate/container-rules';
import { validateEphemeralContainer } from './validate/ephemeral-container-rules';
import { duplicate, forbidden, invalid, required, unsupported } from './validate/field-errors';
import { validateAnnotations, validateLabels } from './validate/meta-rules';
import { validateOS } from './validate/os-rules';
import { validatePodAnnotations } from './validate/pod-annotation-rules';
import {
  validateProfileAnnotations,
  validateProfileAnnotationsMatchOnCreate,
} from './validate/profile-annotation-rules';
import { validateResources } from './validate/resource-rules';
import { validateScheduling } from './validate/scheduling-rules';
import { validatePodSecurityContext } from './validate/security-rules';
import { validatePodSpecFields } from './validate/spec-rules';
import { validateTopologySpreadConstraints } from './validate/topology-spread-rules';
import { validateVolumes, type PodKind } from './validate/volume-rules';
import { validateHostProcess } from './validate/windows-options-rules';

export type { PodKind };

const dnsLabel = (p: PathPart[], v: string, out: string[]): void => {
  for (const m of isDNS1123Label(v)) out.push(invalid(p, v, m));
};

/**
 * The pod's name, namespace and pinned UID: what names its directories, its runtime objects and
 * its API paths. `podName` as for validateSemantic.
 */
export function validatePodIdentity(meta: ObjectMeta, podName: string | undefined): string[] {
  const out: string[] = [];
  if (!meta.name) out.push(required(['metadata', 'name'], 'name is needed for the pod'));
  else if (podName !== undefined)
    for (const m of isDNS1123Subdomain(podName)) out.push(invalid(['metadata', 'name'], podName, m));
  // A pinned UID (an API pod's is the server's) names directories (pod dir, log dir) and runtime objects: it must be path-safe.
  if (meta.uid !== undefined && !/^[0-9A-Za-z-]{1,36}$/.test(meta.uid)) {
    out.push(
      invalid(
        ['metadata', 'uid'],
        meta.uid,
        'a pinned uid must be 1 to 36 characters of letters, digits and "-" (a UUID or 32 hex digits)',
      ),
    );
  }
  if (meta.namespace) dnsLabel(['metadata', 'namespace'], meta.namespace, out);
  return out;
}

/**
 * Container names are unique among regular containers, then init containers against both (and an
 * API pod's ephemeral ones against all): the API server names the later one.
 */
function duplicateContainerNames(groups: readonly (readonly ContainerRef[])[], out: string[]): void {
  const names = new Set<string>();
  for (const group of groups) {
    for (const { c, path } of group) {
      if (names.has(c.name)) out.push(duplicate([...path, 'name'], c.name));
      else if (c.name) names.add(c.name);
    }
  }
}

/** A projected token is for the pod's service account: the pod must name one (a static pod never does). */
function serviceAccountTokens(spec: PodSpec, out: string[]): void {
  if (spec.serviceAccountName || spec.serviceAccount) return;
  (spec.volumes ?? []).forEach((v, i) =>
    (v.projected?.sources ?? []).forEach((s, j) => {
      if (s.serviceAccountToken)
        out.push(
          forbidden(
            ['spec', 'volumes', i, 'projected', 'sources', j, 'serviceAccountToken'],
            'must not be specified when serviceAccountName is not set',
          ),
        );
    }),
  );
}

/**
 * All problems with a scheme-defaulted pod, as one-line messages with field paths.
 * `podName` is the name after the node suffix (a static pod's; an API pod's own): that is the name
 * that must be a valid subdomain.
 */
export function validateSemantic(pod: Pod, podName: string | undefined, kind: PodKind = 'static'): string[] {
  const meta = pod.metadata ?? {};
  const out = validatePodIdentity(meta, podName);
  out.push(
    ...validateLabels(meta.labels, ['metadata', 'labels']),
    ...validateAnnotations(meta.annotations, ['metadata', 'annotations']),
  );
  const spec = pod.spec;
  if (!spec) return [...out, required(['spec'])];
  if (spec.hostname) dnsLabel(['spec', 'hostname'], spec.hostname, out);
  if (spec.subdomain) dnsLabel(['spec', 'subdomain'], spec.subdomain, out);
  out.push(...validatePodSpecFields(spec, kind === 'static' || !!spec.nodeName));
  if (!(RESTART_POLICIES as readonly string[]).includes(spec.restartPolicy ?? '')) {
    out.push(unsupported(['spec', 'restartPolicy'], spec.restartPolicy, RESTART_POLICIES));
  }
  // Added only through the ephemeralcontainers subresource, which a static pod does not have.
  if (kind === 'static' && spec.ephemeralContainers && spec.ephemeralContainers.length > 0) {
    out.push(forbidden(['spec', 'ephemeralContainers'], 'cannot be set on create'));
  }
  out.push(...validateScheduling(spec, kind === 'static'), ...validatePodSecurityContext(spec, kind === 'static'));
  validateTopologySpreadConstraints(spec, out);
  validateHostProcess(spec, out);
  validateOS(spec, out);
  validatePodAnnotations(pod, out);
  const volumes = validateVolumes(spec, kind, podName, out);
  serviceAccountTokens(spec, out);
  if (!spec.containers || spec.containers.length === 0) out.push(required(['spec', 'containers']));
  const init: ContainerRef[] = (spec.initContainers ?? []).map((c, i) => ({
    c,
    path: ['spec', 'initContainers', i],
    init: true,
  }));
  const regular: ContainerRef[] = (spec.containers ?? []).map((c, i) => ({
    c,
    path: ['spec', 'containers', i],
    init: false,
  }));
  // An API pod's ephemeral containers name log directories and runtime containers too (and are unique among all).
  const ephemeral: ContainerRef[] =
    kind === 'api'
      ? (spec.ephemeralContainers ?? []).map((c, i) => ({
          c: c as Container,
          path: ['spec', 'ephemeralContainers', i],
          init: false,
          ephemeral: true,
        }))
      : [];
  const ctx = {
    volumes,
    grace: spec.terminationGracePeriodSeconds,
    restartPolicy: spec.restartPolicy,
    hostUsers: spec.hostUsers !== false,
  };
  for (const ref of [...init, ...regular, ...ephemeral]) validateContainer(ref, ctx, out);
  if (kind === 'api')
    (spec.ephemeralContainers ?? []).forEach((ec, i) =>
      validateEphemeralContainer(
        ec,
        ['spec', 'ephemeralContainers', i],
        [...(spec.containers ?? []), ...(spec.initContainers ?? [])],
        out,
      ),
    );
  duplicateContainerNames([regular, init, ephemeral], out);
  validateHostPorts([...init, ...regular], out);
  if (spec.overhead) validateResources({ limits: spec.overhead }, ['spec', 'overhead'], out);
  out.push(...validateProfileAnnotations(pod));
  if (kind === 'static') out.push(...validateProfileAnnotationsMatchOnCreate(pod), ...staticPodReferenceErrors(spec));
  return out;
}

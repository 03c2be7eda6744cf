// The volume sources that name or make API objects, as the API server checks them in a pod
// (validatePersistentClaimVolumeSource, validateEphemeralVolumeSource with the claim template's
// metadata and spec, validateCSIVolumeSource, validateImageVolumeSource). A static pod may not use
// the first three at all (static-pod-references.ts); an API pod's are judged here, then refused by
// the node as volumes it does not mount.
import type {
  CSIVolumeSource,
  EphemeralVolumeSource,
  PersistentVolumeClaimSpec,
  TypedObjectReference,
} from 'kubernetes-types/core/v1';
import { key, formatPath, type PathPart } from '../field-path';
import { parseQuantity } from '../../k8s/quantity.js';
import { isDNS1123Label, isDNS1123Subdomain } from './api-formats';
import { forbidden, invalid, required, stringer, tooLong, unsupported } from './field-errors';
import { validateLabelSelector } from './label-selector-rules';
import { validateAnnotations, validateLabels } from './meta-rules';

/** Sorted, as the API server lists them. */
const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] as const;
const VOLUME_MODES = ['Block', 'Filesystem'] as const;
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
const MAX_CSI_DRIVER_NAME = 63;

function dnsSubdomain(v: string, p: readonly PathPart[], out: string[]): void {
  for (const m of isDNS1123Subdomain(v)) out.push(invalid(p, v, m));
}

/** validateDataSource and validateDataSourceRef. */
function dataSource(ref: Partial<TypedObjectReference>, p: readonly PathPart[], withNamespace: boolean, out: string[]) {
  if (!ref.name) out.push(required([...p, 'name']));
  if (!ref.kind) out.push(required([...p, 'kind']));
  const apiGroup = ref.apiGroup ?? '';
  if (apiGroup === '' && ref.kind !== 'PersistentVolumeClaim')
    out.push(invalid(p, ref.kind ?? '', "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  if (apiGroup !== '') dnsSubdomain(apiGroup, [...p, 'apiGroup'], out);
  if (withNamespace && ref.namespace)
    for (const m of isDNS1123Label(ref.namespace)) out.push(invalid([...p, 'namespace'], ref.namespace, m));
}

/** ValidatePersistentVolumeClaimSpec, as for a new claim (VolumeAttributesClass is locked on in 1.36). */
function claimSpec(spec: PersistentVolumeClaimSpec, p: readonly PathPart[], out: string[]): void {
  const modes = spec.accessModes ?? [];
  if (modes.length === 0) out.push(required([...p, 'accessModes'], 'at least 1 access mode is required'));
  validateLabelSelector(spec.selector, [...p, 'selector'], out);
  let once = false;
  let other = false;
  for (const m of modes) {
    if (!(ACCESS_MODES as readonly string[]).includes(m)) out.push(unsupported([...p, 'accessModes'], m, ACCESS_MODES));
    else if (m === 'ReadWriteOncePod') once = true;
    else other = true;
  }
  if (once && other) out.push(forbidden([...p, 'accessModes'], 'may not use ReadWriteOncePod with other access modes'));
  const storagePath = [...p, 'resources', key('storage')];
  const storage = spec.resources?.requests?.storage;
  if (storage === undefined) out.push(required(storagePath));
  else if (parseQuantity(storage).cmp(parseQuantity(0)) <= 0)
    out.push(invalid(storagePath, parseQuantity(storage).canonical(), 'must be greater than zero'));
  if (spec.storageClassName) dnsSubdomain(spec.storageClassName, [...p, 'storageClassName'], out);
  if (spec.volumeMode !== undefined && !(VOLUME_MODES as readonly string[]).includes(spec.volumeMode))
    out.push(unsupported([...p, 'volumeMode'], spec.volumeMode, VOLUME_MODES));
  if (spec.dataSource) dataSource(spec.dataSource, [...p, 'dataSource'], false, out);
  if (spec.dataSourceRef) dataSource(spec.dataSourceRef, [...p, 'dataSourceRef'], true, out);
  const dsPath = stringer(formatPath([...p, 'dataSource']));
  if (spec.dataSourceRef?.namespace) {
    if (spec.dataSource) out.push(invalid(p, dsPath, 'may not be specified when dataSourceRef.namespace is specified'));
  } else if (spec.dataSource && spec.dataSourceRef) {
    const a = spec.dataSource;
    const b = spec.dataSourceRef;
    if ((a.apiGroup ?? null) !== (b.apiGroup ?? null) || a.kind !== b.kind || a.name !== b.name)
      out.push(invalid(p, dsPath, 'must match dataSourceRef'));
  }
  if (spec.volumeAttributesClassName)
    dnsSubdomain(spec.volumeAttributesClassName, [...p, 'volumeAttributesClassName'], out);
}

/**
 * validateEphemeralVolumeSource, and the name of the claim it makes: `<pod>-<volume>`, which must be
 * a resource name.
 */
export function ephemeral(
  s: EphemeralVolumeSource,
  podName: string | undefined,
  volumeName: string,
  vp: readonly PathPart[],
  out: string[],
): void {
  const p = [...vp, 'ephemeral', 'volumeClaimTemplate'];
  const t = s.volumeClaimTemplate;
  if (!t) return void out.push(required(p));
  const meta = (t.metadata ?? {}) as Record<string, unknown>;
  out.push(
    ...validateAnnotations(t.metadata?.annotations, [...p, 'metadata', 'annotations']),
    ...validateLabels(t.metadata?.labels, [...p, 'metadata', 'labels']),
  );
  for (const [k, v] of Object.entries(meta))
    if (k !== 'labels' && k !== 'annotations' && v !== undefined && v !== null)
      out.push(forbidden([...p, 'metadata', k], 'cannot be set'));
  claimSpec(t.spec ?? {}, [...p, 'spec'], out);
  if (podName && volumeName) {
    const claim = `${podName}-${volumeName}`;
    for (const m of isDNS1123Subdomain(claim))
      out.push(invalid([...vp, 'name'], volumeName, `PVC name ${JSON.stringify(claim)}: ${m}`));
  }
}

/** ValidateCSIDriverName, and a node publish secret that names a secret. */
export function csi(s: CSIVolumeSource, p: readonly PathPart[], out: string[]): void {
  const driver = s.driver ?? '';
  const dp = [...p, 'driver'];
  if (driver === '') out.push(required(dp));
  if (Buffer.byteLength(driver) > MAX_CSI_DRIVER_NAME) out.push(tooLong(dp, MAX_CSI_DRIVER_NAME));
  for (const m of isDNS1123Subdomain(driver.toLowerCase())) out.push(invalid(dp, driver, m));
  const secret = s.nodePublishSecretRef;
  if (!secret) return;
  if (!secret.name) out.push(required([...p, 'nodePublishSecretRef', 'name']));
  // The API server names the source's own `name` here.
  else dnsSubdomain(secret.name, [...p, 'name'], out);
}

/** An image volume (newer than kubernetes-types): a reference in a pod, and a pull policy it knows. */
export function image(s: { reference?: string; pullPolicy?: string }, p: readonly PathPart[], out: string[]): void {
  if (!s.reference) out.push(required([...p, 'reference']));
  const policy = s.pullPolicy ?? '';
  if (policy === '') out.push(required([...p, 'pullPolicy']));
  else if (!(PULL_POLICIES as readonly string[]).includes(policy))
    out.push(unsupported([...p, 'pullPolicy'], policy, PULL_POLICIES));
}

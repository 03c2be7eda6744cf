// One container as the API server checks it (validateContainerCommon and what follows it for
// each kind, validateContainerOnlyForPod): a DNS-label name, an image without surrounding
// whitespace, known policies, ports, env, mounts of defined volumes at unique paths (subPaths
// inside the volume, propagation Bidirectional only when privileged), no block devices but of
// claims, resources, a resize policy, a security context, probes and hooks as the container's kind
// allows.
import type { Container, Volume, VolumeDevice, VolumeMount } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { isDNS1123Label, isValidPortName, isValidPortNum } from './api-formats';
import { validateEnv, validateEnvFrom } from './env-rules';
import { duplicate, forbidden, invalid, notFound, required, unsupported } from './field-errors';
import { validateHandlers } from './handler-rules';
import { hasBackstep, localDescendingPath } from './path-rules';
import { validateResizePolicy } from './resize-policy-rules';
import { validateRestartPolicy } from './restart-policy-rules';
import { validateResources } from './resource-rules';
import { goTrimSpace, validateContainerSecurityContext } from './security-rules';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'] as const;
const MOUNT_PROPAGATIONS = ['Bidirectional', 'HostToContainer', 'None'] as const;
const RECURSIVE_READ_ONLY = ['Disabled', 'Enabled', 'IfPossible'] as const;

export interface ContainerRef {
  readonly c: Container;
  readonly path: PathPart[];
  readonly init: boolean;
  /** An API pod's ephemeral container: ephemeral-container-rules.ts says what it may not have. */
  readonly ephemeral?: boolean;
}

/** What a container is checked against: the pod's valid volumes by name, its grace period and restart policy, whether it shares the host's user namespace. */
export interface ContainerContext {
  readonly volumes: ReadonlyMap<string, Volume>;
  readonly grace: number | undefined;
  readonly restartPolicy: string | undefined;
  readonly hostUsers: boolean;
}

function ports(c: Container, path: readonly PathPart[], out: string[]): void {
  const names = new Set<string>();
  (c.ports ?? []).forEach((port, i) => {
    const pp = [...path, 'ports', i];
    if (!port.containerPort) out.push(required([...pp, 'containerPort']));
    else
      for (const m of isValidPortNum(port.containerPort))
        out.push(invalid([...pp, 'containerPort'], port.containerPort, m));
    if (port.hostPort)
      for (const m of isValidPortNum(port.hostPort)) out.push(invalid([...pp, 'hostPort'], port.hostPort, m));
    if (port.protocol !== undefined && !(PROTOCOLS as readonly string[]).includes(port.protocol))
      out.push(unsupported([...pp, 'protocol'], port.protocol, PROTOCOLS));
    if (port.name === undefined || port.name === '') return;
    const problems = isValidPortName(port.name);
    for (const m of problems) out.push(invalid([...pp, 'name'], port.name, m));
    if (problems.length > 0) return;
    if (names.has(port.name)) out.push(duplicate([...pp, 'name'], port.name));
    names.add(port.name);
  });
}

/** The API server names a few mount fields without the mount's index; so do we. */
function mount(m: VolumeMount, mp: readonly PathPart[], listPath: readonly PathPart[], c: Container, out: string[]) {
  if (m.subPath) localDescendingPath([...listPath, 'subPath'], m.subPath, out);
  if (m.subPathExpr) {
    if (m.subPath)
      out.push(invalid([...mp, 'subPathExpr'], m.subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
    localDescendingPath([...listPath, 'subPathExpr'], m.subPathExpr, out);
  }
  const propagation = m.mountPropagation;
  if (propagation !== undefined) {
    if (!(MOUNT_PROPAGATIONS as readonly string[]).includes(propagation))
      out.push(unsupported([...listPath, 'mountPropagation'], propagation, MOUNT_PROPAGATIONS));
    if (propagation === 'Bidirectional' && c.securityContext?.privileged !== true) {
      out.push(
        forbidden(
          [...listPath, 'mountPropagation'],
          'Bidirectional mount propagation is available only to privileged containers',
        ),
      );
    }
  }
  const rro = m.recursiveReadOnly;
  if (rro === 'Enabled' || rro === 'IfPossible') {
    if (!m.readOnly)
      out.push(forbidden([...listPath, 'recursiveReadOnly'], 'may only be specified when readOnly is true'));
    if (propagation !== undefined && propagation !== 'None')
      out.push(
        forbidden(
          [...listPath, 'recursiveReadOnly'],
          'may only be specified when mountPropagation is None or not specified',
        ),
      );
  } else if (rro !== undefined && rro !== 'Disabled')
    out.push(unsupported([...listPath, 'recursiveReadOnly'], rro, RECURSIVE_READ_ONLY));
}

function volumeMounts(c: Container, path: readonly PathPart[], ctx: ContainerContext, out: string[]): void {
  const listPath = [...path, 'volumeMounts'];
  const devices = c.volumeDevices ?? [];
  const mountPaths = new Set<string>();
  (c.volumeMounts ?? []).forEach((m, i) => {
    const mp = [...listPath, i];
    if (!m.name) out.push(required([...mp, 'name']));
    if (!ctx.volumes.has(m.name)) out.push(notFound([...mp, 'name'], m.name ?? ''));
    if (!m.mountPath) out.push(required([...mp, 'mountPath']));
    if (mountPaths.has(m.mountPath)) out.push(invalid([...mp, 'mountPath'], m.mountPath, 'must be unique'));
    mountPaths.add(m.mountPath);
    if (devices.some((d) => d.name === m.name))
      out.push(invalid([...mp, 'name'], m.name, 'must not already exist in volumeDevices'));
    if (devices.some((d) => d.devicePath === m.mountPath))
      out.push(invalid([...mp, 'mountPath'], m.mountPath, 'must not already exist as a path in volumeDevices'));
    mount(m, mp, listPath, c, out);
  });
}

/** A block device comes only from a claim, which neither a static pod nor bootlet has. */
function volumeDevices(c: Container, path: readonly PathPart[], ctx: ContainerContext, out: string[]): void {
  const mounts = c.volumeMounts ?? [];
  const names = new Set<string>();
  const paths = new Set<string>();
  (c.volumeDevices ?? []).forEach((d: VolumeDevice, i) => {
    const dp = [...path, 'volumeDevices', i];
    const volume = ctx.volumes.get(d.name);
    if (!d.name) out.push(required([...dp, 'name']));
    if (names.has(d.name)) out.push(invalid([...dp, 'name'], d.name, 'must be unique'));
    if (volume && !volume.persistentVolumeClaim && !volume.ephemeral) {
      out.push(
        invalid(
          [...dp, 'name'],
          d.name,
          'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode',
        ),
      );
    }
    if (!volume) out.push(notFound([...dp, 'name'], d.name ?? ''));
    if (!d.devicePath) out.push(required([...dp, 'devicePath']));
    if (paths.has(d.devicePath)) out.push(invalid([...dp, 'devicePath'], d.devicePath, 'must be unique'));
    if (d.devicePath && hasBackstep(d.devicePath))
      out.push(invalid([...dp, 'devicePath'], d.devicePath, "can not contain backsteps ('..')"));
    else paths.add(d.devicePath);
    if (mounts.some((m) => m.name === d.name))
      out.push(invalid([...dp, 'name'], d.name, 'must not already exist in volumeMounts'));
    if (mounts.some((m) => m.mountPath === d.devicePath))
      out.push(invalid([...dp, 'devicePath'], d.devicePath, 'must not already exist as a path in volumeMounts'));
    if (d.name) names.add(d.name);
  });
}

export function validateContainer(
  { c, path, init, ephemeral }: ContainerRef,
  ctx: ContainerContext,
  out: string[],
): void {
  if (!c.name) out.push(required([...path, 'name']));
  else for (const m of isDNS1123Label(c.name)) out.push(invalid([...path, 'name'], c.name, m));
  if (!c.image) out.push(required([...path, 'image']));
  else if (goTrimSpace(c.image) !== c.image)
    out.push(invalid([...path, 'image'], c.image, 'must not have leading or trailing whitespace'));
  if (c.imagePullPolicy && !(PULL_POLICIES as readonly string[]).includes(c.imagePullPolicy))
    out.push(unsupported([...path, 'imagePullPolicy'], c.imagePullPolicy, PULL_POLICIES));
  if (
    c.terminationMessagePolicy &&
    !(TERMINATION_MESSAGE_POLICIES as readonly string[]).includes(c.terminationMessagePolicy)
  ) {
    out.push(
      unsupported([...path, 'terminationMessagePolicy'], c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES),
    );
  }
  out.push(...validateEnv(c.env, [...path, 'env']), ...validateEnvFrom(c.envFrom, [...path, 'envFrom']));
  if (!ephemeral) out.push(...validateHandlers(c, path, init && c.restartPolicy !== 'Always', ctx.grace));
  if (!ephemeral) validateRestartPolicy(c, path, out);
  ports(c, path, out);
  volumeMounts(c, path, ctx, out);
  volumeDevices(c, path, ctx, out);
  validateResources(c.resources, [...path, 'resources'], out);
  validateResizePolicy(c, path, ctx.restartPolicy, out);
  validateContainerSecurityContext(c.securityContext, [...path, 'securityContext'], ctx.hostUsers, out);
}

/** AccumulateUniqueHostPorts: a protocol/hostIP/hostPort seen twice, named on `listPath`[index in `refs`]. */
function accumulateHostPorts(refs: readonly ContainerRef[], listPath: readonly PathPart[], out: string[]): void {
  const seen = new Set<string>();
  refs.forEach(({ c }, ci) => {
    (c.ports ?? []).forEach((port, i) => {
      if (!port.hostPort) return;
      const key = `${port.protocol ?? 'TCP'}/${port.hostIP ?? ''}/${port.hostPort}`;
      if (seen.has(key)) out.push(duplicate([...listPath, ci, 'ports', i, 'hostPort'], key));
      seen.add(key);
    });
  });
}

/**
 * Host ports as the API server checks them (checkHostPortConflicts): across all regular containers,
 * and within each init container alone, sidecars included (it does not check a sidecar against the
 * regular containers). It names a conflict inside an init container as the only entry of a list of one:
 * `spec.initContainers[0]`, whichever init container it is.
 */
export function validateHostPorts(refs: readonly ContainerRef[], out: string[]): void {
  accumulateHostPorts(
    refs.filter((r) => !r.init),
    ['spec', 'containers'],
    out,
  );
  for (const r of refs.filter((x) => x.init)) accumulateHostPorts([r], ['spec', 'initContainers'], out);
}

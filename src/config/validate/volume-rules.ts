// spec.volumes as the API server checks them on create (ValidateVolumes, validateVolumeSource): a
// DNS-label name, unique; one source, the first in the API server's order, checked for what it
// needs (this file: the ones bootlet mounts; network-, cloud- and claim-volume-rules.ts: the rest;
// projection-rules.ts: projected sources). A volume with a problem is not counted as defined, so
// its mounts are "Not found" too, as there.
import type { PodSpec, Volume } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { VOLUME_SOURCES } from '../../k8s/defaults.js';
import { parseQuantity } from '../../k8s/quantity.js';
import { isDNS1123Label } from './api-formats';
import { csi, ephemeral, image } from './claim-volume-rules';
import {
  awsElasticBlockStore,
  azureDisk,
  azureFile,
  cinder,
  flexVolume,
  gcePersistentDisk,
  requiredName,
  scaleIO,
  storageos,
} from './cloud-volume-rules';
import { duplicate, forbidden, invalid, required, unsupported } from './field-errors';
import { cephfs, fc, flocker, gitRepo, glusterfs, iscsi, iscsiNameLength, quobyte, rbd } from './network-volume-rules';
import { noBacksteps } from './path-rules';
import { projectionSources } from './projection-rules';
import { downwardAPIFile, fileMode, keyToPath } from './volume-file-rules';

/** Whose rules: a static pod's (the API server's plus the static-pod restrictions), or an API pod's (the API server's alone). */
export type PodKind = 'static' | 'api';

const HOST_PATH_TYPES = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
] as const;
/** Where the API server reports a second source: the field's own name, but for two it misspells. */
const SOURCE_PATH_NAME: Partial<Record<string, string>> = { downwardAPI: 'downwarAPI', cephfs: 'cephFS' };

function hostPath(v: Volume, vp: readonly PathPart[], kind: PodKind, out: string[]): void {
  const hp = [...vp, 'hostPath'];
  const p = v.hostPath!.path;
  if (!p) return void out.push(required([...hp, 'path']));
  // The API server accepts a relative path (resolved against the runtime's working directory on
  // the node); bootlet refuses it in a manifest, with the API server's words for nfs.path. An API
  // pod's fails to mount instead (volumes.ts): the server took it.
  if (kind === 'static' && !p.startsWith('/')) out.push(invalid([...hp, 'path'], p, 'must be an absolute path'));
  noBacksteps([...hp, 'path'], p, out);
  const t = v.hostPath!.type;
  if (t !== undefined && t !== null && !(HOST_PATH_TYPES as readonly string[]).includes(t))
    out.push(unsupported([...hp, 'type'], t, HOST_PATH_TYPES));
}

/** What a volume's checks know of the pod: its rules, its name (an ephemeral volume's claim is named after it). */
interface VolumeContext {
  readonly kind: PodKind;
  readonly podName: string | undefined;
}

/** The checks of the volume's one source (validateVolumeSource), by source. */
const SOURCE_RULES: Partial<
  Record<(typeof VOLUME_SOURCES)[number], (v: Volume, vp: PathPart[], ctx: VolumeContext, out: string[]) => void>
> = {
  hostPath: (v, vp, ctx, out) => hostPath(v, vp, ctx.kind, out),
  gitRepo: (v, vp, _ctx, out) => gitRepo(v.gitRepo!, [...vp, 'gitRepo'], out),
  gcePersistentDisk: (v, vp, _ctx, out) => gcePersistentDisk(v.gcePersistentDisk!, [...vp, 'persistentDisk'], out),
  awsElasticBlockStore: (v, vp, _ctx, out) =>
    awsElasticBlockStore(v.awsElasticBlockStore!, [...vp, 'awsElasticBlockStore'], out),
  secret: (v, vp, _ctx, out) => {
    const s = v.secret!;
    if (!s.secretName) out.push(required([...vp, 'secret', 'secretName']));
    fileMode(s.defaultMode, [...vp, 'secret', 'defaultMode'], out);
    (s.items ?? []).forEach((kp, i) => keyToPath(kp, [...vp, 'secret', 'items', i], out));
  },
  nfs: (v, vp, _ctx, out) => {
    const n = v.nfs!;
    if (!n.server) out.push(required([...vp, 'nfs', 'server']));
    if (!n.path) out.push(required([...vp, 'nfs', 'path']));
    if (!(n.path ?? '').startsWith('/'))
      out.push(invalid([...vp, 'nfs', 'path'], n.path ?? '', 'must be an absolute path'));
  },
  iscsi: (v, vp, _ctx, out) => iscsi(v.iscsi!, vp, out),
  glusterfs: (v, vp, _ctx, out) => glusterfs(v.glusterfs!, [...vp, 'glusterfs'], out),
  flocker: (v, vp, _ctx, out) => flocker(v.flocker!, [...vp, 'flocker'], out),
  persistentVolumeClaim: (v, vp, _ctx, out) => {
    if (!v.persistentVolumeClaim!.claimName) out.push(required([...vp, 'persistentVolumeClaim', 'claimName']));
  },
  rbd: (v, vp, _ctx, out) => rbd(v.rbd!, [...vp, 'rbd'], out),
  cinder: (v, vp, _ctx, out) => cinder(v.cinder!, [...vp, 'cinder'], out),
  cephfs: (v, vp, _ctx, out) => cephfs(v.cephfs!, [...vp, 'cephfs'], out),
  quobyte: (v, vp, _ctx, out) => quobyte(v.quobyte!, [...vp, 'quobyte'], out),
  downwardAPI: (v, vp, _ctx, out) => {
    const d = v.downwardAPI!;
    fileMode(d.defaultMode, [...vp, 'downwardAPI', 'defaultMode'], out);
    (d.items ?? []).forEach((file) => downwardAPIFile(file, [...vp, 'downwardAPI'], out));
  },
  fc: (v, vp, _ctx, out) => fc(v.fc!, [...vp, 'fc'], out),
  flexVolume: (v, vp, _ctx, out) => flexVolume(v.flexVolume!, [...vp, 'flexVolume'], out),
  configMap: (v, vp, _ctx, out) => {
    const c = v.configMap!;
    if (!c.name) out.push(required([...vp, 'configMap', 'name']));
    fileMode(c.defaultMode, [...vp, 'configMap', 'defaultMode'], out);
    (c.items ?? []).forEach((kp, i) => keyToPath(kp, [...vp, 'configMap', 'items', i], out));
  },
  azureFile: (v, vp, _ctx, out) => azureFile(v.azureFile!, [...vp, 'azureFile'], out),
  vsphereVolume: (v, vp, _ctx, out) => requiredName(v.vsphereVolume!, 'volumePath', [...vp, 'vsphereVolume'], out),
  photonPersistentDisk: (v, vp, _ctx, out) =>
    requiredName(v.photonPersistentDisk!, 'pdID', [...vp, 'photonPersistentDisk'], out),
  portworxVolume: (v, vp, _ctx, out) => requiredName(v.portworxVolume!, 'volumeID', [...vp, 'portworxVolume'], out),
  azureDisk: (v, vp, _ctx, out) => azureDisk(v.azureDisk!, [...vp, 'azureDisk'], out),
  storageos: (v, vp, _ctx, out) => storageos(v.storageos!, [...vp, 'storageos'], out),
  projected: (v, vp, _ctx, out) => {
    const pr = v.projected!;
    fileMode(pr.defaultMode, [...vp, 'projected', 'defaultMode'], out);
    projectionSources(pr.sources ?? [], [...vp, 'projected'], out);
  },
  scaleIO: (v, vp, _ctx, out) => scaleIO(v.scaleIO!, [...vp, 'scaleIO'], out),
  csi: (v, vp, _ctx, out) => csi(v.csi!, [...vp, 'csi'], out),
  ephemeral: (v, vp, ctx, out) => ephemeral(v.ephemeral!, ctx.podName, v.name ?? '', vp, out),
  image: (v, vp, _ctx, out) => image((v as { image?: object }).image!, [...vp, 'image'], out),
};

function volumeSource(v: Volume, vp: PathPart[], ctx: VolumeContext, out: string[]): void {
  const rec = v as unknown as Record<string, unknown>;
  const set = VOLUME_SOURCES.filter((k) => rec[k] !== undefined && rec[k] !== null);
  const limit = v.emptyDir?.sizeLimit;
  if (limit !== undefined && parseQuantity(limit).cmp(parseQuantity(0)) < 0) {
    out.push(forbidden([...vp, 'emptyDir', 'sizeLimit'], 'SizeLimit field must be a valid resource quantity'));
  }
  for (const extra of set.slice(1))
    out.push(forbidden([...vp, SOURCE_PATH_NAME[extra] ?? extra], 'may not specify more than 1 volume type'));
  const first = set[0];
  if (first === undefined) return void out.push(required(vp, 'must specify a volume type'));
  SOURCE_RULES[first]?.(v, vp, ctx, out);
  if (v.iscsi) iscsiNameLength(v.iscsi, v.name ?? '', vp, out);
}

/**
 * The volumes without a problem, by name: what a volumeMount may name. `podName` is the pod's name
 * as created (a static pod's with the node suffix).
 */
export function validateVolumes(
  spec: PodSpec,
  kind: PodKind,
  podName: string | undefined,
  out: string[],
): Map<string, Volume> {
  const names = new Map<string, Volume>();
  const volumes = spec.volumes ?? [];
  const ephemeralClaims = new Set(podName ? volumes.filter((v) => v.ephemeral).map((v) => `${podName}-${v.name}`) : []);
  volumes.forEach((v, i) => {
    const vp: PathPart[] = ['spec', 'volumes', i];
    const problems: string[] = [];
    volumeSource(v, vp, { kind, podName }, problems);
    if (!v.name) problems.push(required([...vp, 'name']));
    else for (const m of isDNS1123Label(v.name)) problems.push(invalid([...vp, 'name'], v.name, m));
    if (v.name && names.has(v.name)) problems.push(duplicate([...vp, 'name'], v.name));
    if (problems.length === 0) names.set(v.name, v);
    out.push(...problems);
    const claim = v.persistentVolumeClaim?.claimName;
    if (claim !== undefined && ephemeralClaims.has(claim))
      out.push(
        invalid(
          [...vp, 'persistentVolumeClaim', 'claimName'],
          claim,
          'must not reference a PVC that gets created for an ephemeral volume',
        ),
      );
  });
  return names;
}

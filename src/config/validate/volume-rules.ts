// spec.volumes as the API server checks them on create (ValidateVolumes, validateVolumeSource): a
// DNS-label name, unique; one source, the first in the API server's order, checked for what it
// needs. Paths of files a volume writes (configMap, secret, downwardAPI, projected items) stay
// inside the volume, file modes are 0 to 0777, an emptyDir's sizeLimit is not negative. A volume
// with a problem is not counted as defined, so its mounts are "Not found" too, as there.
import type {
  ConfigMapProjection,
  DownwardAPIVolumeFile,
  KeyToPath,
  PodSpec,
  Volume,
  VolumeProjection,
} from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { VOLUME_SOURCES } from '../../k8s/defaults.js';
import { parseQuantity } from '../../k8s/quantity.js';
import { isDNS1123Label } from './api-formats';
import { VOLUME_FIELD_PATHS, validateFieldRef, validateResourceFieldRef } from './downward-api-rules';
import { duplicate, forbidden, invalid, required, unsupported } from './field-errors';
import { localNonReservedPath, noBacksteps } from './path-rules';

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
const FILE_MODE_MESSAGE = 'must be a number between 0 and 0777 (octal), both inclusive';
/** Where the API server reports a second source: the field's own name, but for two it misspells. */
const SOURCE_PATH_NAME: Partial<Record<string, string>> = { downwardAPI: 'downwarAPI', cephfs: 'cephFS' };

function fileMode(mode: number | undefined, p: readonly PathPart[], out: string[]): void {
  if (mode !== undefined && (mode < 0 || mode > 0o777)) out.push(invalid(p, mode, FILE_MODE_MESSAGE));
}

/** validateKeyToPath: a configMap's or secret's item. */
function keyToPath(kp: KeyToPath, p: readonly PathPart[], out: string[]): void {
  if (!kp.key) out.push(required([...p, 'key']));
  if (!kp.path) out.push(required([...p, 'path']));
  localNonReservedPath([...p, 'path'], kp.path ?? '', out);
  fileMode(kp.mode, [...p, 'mode'], out);
}

/** validateDownwardAPIVolumeFile; `p` is the source's path (the API server does not name the item). */
function downwardAPIFile(file: DownwardAPIVolumeFile, p: readonly PathPart[], out: string[]): void {
  if (!file.path) out.push(required([...p, 'path']));
  localNonReservedPath([...p, 'path'], file.path ?? '', out);
  if (file.fieldRef) {
    validateFieldRef(file.fieldRef, VOLUME_FIELD_PATHS, [...p, 'fieldRef'], out);
    if (file.resourceFieldRef)
      out.push(invalid(p, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
  } else if (file.resourceFieldRef)
    validateResourceFieldRef(file.resourceFieldRef, [...p, 'resourceFieldRef'], true, out);
  else out.push(required(p, 'one of fieldRef and resourceFieldRef is required'));
  fileMode(file.mode, [...p, 'mode'], out);
}

/** validateProjectionSources: one kind per source, and no two files at one path. */
function projectionSources(sources: readonly VolumeProjection[], p: readonly PathPart[], out: string[]): void {
  const paths = new Set<string>();
  const claim = (path: string, shown: string): void => {
    if (paths.has(path)) out.push(invalid(p, shown, 'conflicting duplicate paths'));
    paths.add(path);
  };
  sources.forEach((s, i) => {
    const sp = [...p, 'sources', i];
    const rec = s as Record<string, unknown>;
    const kinds = [
      'secret',
      'configMap',
      'downwardAPI',
      'serviceAccountToken',
      'clusterTrustBundle',
      'podCertificate',
    ].filter((k) => rec[k] !== undefined && rec[k] !== null);
    for (const k of ['secret', 'configMap'] as const) {
      const src: ConfigMapProjection | undefined = s[k];
      if (!src) continue;
      if (!src.name) out.push(required([...sp, k, 'name']));
      (src.items ?? []).forEach((kp, j) => {
        keyToPath(kp, [...sp, k, 'items', j], out);
        if (kp.path) claim(kp.path, src.name ?? '');
      });
    }
    for (const file of s.downwardAPI?.items ?? []) {
      downwardAPIFile(file, [...sp, 'downwardAPI'], out);
      if (file.path) claim(file.path, file.path);
    }
    if (kinds.length > 1) out.push(forbidden(sp, 'may not specify more than 1 volume type per source'));
  });
}

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

/** The checks of the volume's one source (validateVolumeSource). */
function volumeSource(v: Volume, vp: readonly PathPart[], kind: PodKind, out: string[]): void {
  const rec = v as unknown as Record<string, unknown>;
  const set = VOLUME_SOURCES.filter((k) => rec[k] !== undefined && rec[k] !== null);
  const limit = v.emptyDir?.sizeLimit;
  if (limit !== undefined && parseQuantity(limit).cmp(parseQuantity(0)) < 0) {
    out.push(forbidden([...vp, 'emptyDir', 'sizeLimit'], 'SizeLimit field must be a valid resource quantity'));
  }
  for (const extra of set.slice(1))
    out.push(forbidden([...vp, SOURCE_PATH_NAME[extra] ?? extra], 'may not specify more than 1 volume type'));
  switch (set[0]) {
    case 'hostPath':
      return hostPath(v, vp, kind, out);
    case 'secret': {
      const s = v.secret!;
      if (!s.secretName) out.push(required([...vp, 'secret', 'secretName']));
      fileMode(s.defaultMode, [...vp, 'secret', 'defaultMode'], out);
      return (s.items ?? []).forEach((kp, i) => keyToPath(kp, [...vp, 'secret', 'items', i], out));
    }
    case 'configMap': {
      const c = v.configMap!;
      if (!c.name) out.push(required([...vp, 'configMap', 'name']));
      fileMode(c.defaultMode, [...vp, 'configMap', 'defaultMode'], out);
      return (c.items ?? []).forEach((kp, i) => keyToPath(kp, [...vp, 'configMap', 'items', i], out));
    }
    case 'downwardAPI': {
      const d = v.downwardAPI!;
      fileMode(d.defaultMode, [...vp, 'downwardAPI', 'defaultMode'], out);
      return (d.items ?? []).forEach((file) => downwardAPIFile(file, [...vp, 'downwardAPI'], out));
    }
    case 'projected': {
      const pr = v.projected!;
      fileMode(pr.defaultMode, [...vp, 'projected', 'defaultMode'], out);
      return projectionSources(pr.sources ?? [], [...vp, 'projected'], out);
    }
    case 'nfs': {
      const n = v.nfs!;
      if (!n.server) out.push(required([...vp, 'nfs', 'server']));
      if (!n.path) out.push(required([...vp, 'nfs', 'path']));
      if (!(n.path ?? '').startsWith('/'))
        out.push(invalid([...vp, 'nfs', 'path'], n.path ?? '', 'must be an absolute path'));
      return;
    }
    default:
      return;
  }
}

/** The volumes without a problem, by name: what a volumeMount may name. */
export function validateVolumes(spec: PodSpec, kind: PodKind, out: string[]): Map<string, Volume> {
  const names = new Map<string, Volume>();
  (spec.volumes ?? []).forEach((v, i) => {
    const vp: PathPart[] = ['spec', 'volumes', i];
    const problems: string[] = [];
    volumeSource(v, vp, kind, problems);
    if (!v.name) problems.push(required([...vp, 'name']));
    else for (const m of isDNS1123Label(v.name)) problems.push(invalid([...vp, 'name'], v.name, m));
    if (v.name && names.has(v.name)) problems.push(duplicate([...vp, 'name'], v.name));
    if (problems.length === 0) names.set(v.name, v);
    out.push(...problems);
  });
  return names;
}

// The network and block volume sources as the API server checks them (validateISCSIVolumeSource,
// validateFCVolumeSource, validateRBDVolumeSource, validateCephFSVolumeSource,
// validateGlusterfsVolumeSource, validateQuobyteVolumeSource, validateFlockerVolumeSource,
// validateGitRepoVolumeSource): bootlet mounts none of them, but a pod naming one must still be
// refused or accepted as the API server would.
import type {
  CephFSVolumeSource,
  FCVolumeSource,
  FlockerVolumeSource,
  GitRepoVolumeSource,
  GlusterfsVolumeSource,
  ISCSIVolumeSource,
  QuobyteVolumeSource,
  RBDVolumeSource,
} from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { inclusiveRangeError } from './api-formats';
import { goStrings, invalid, required } from './field-errors';
import { localDescendingPath } from './path-rules';

const IQN = /iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\t\n\f\r ]+)$/;
const EUI = /^eui.[A-Za-z0-9]{16}$/;
const NAA = /^naa.[A-Za-z0-9]{32}$/;
/** The iSCSI volume name and portal, joined, as the initiator's name must hold them. */
const MAX_ISCSI_NAME_AND_PORTAL = 64;

/** The iqn/eui/naa forms an IQN or initiator name takes; `startMessage` for a name of none. */
function iscsiName(v: string, p: readonly PathPart[], startMessage: string, out: string[]): void {
  const kinds: [string, RegExp][] = [
    ['iqn', IQN],
    ['eui', EUI],
    ['naa', NAA],
  ];
  const kind = kinds.find(([prefix]) => v.startsWith(prefix));
  if (!kind) return void out.push(invalid(p, v, startMessage));
  if (!kind[1].test(v)) out.push(invalid(p, v, 'must be valid format'));
}

export function iscsi(s: ISCSIVolumeSource, vp: readonly PathPart[], out: string[]): void {
  const p = [...vp, 'iscsi'];
  if (!s.targetPortal) out.push(required([...p, 'targetPortal']));
  if (!s.iqn) out.push(required([...p, 'iqn']));
  else iscsiName(s.iqn, [...p, 'iqn'], 'must be valid format starting with iqn, eui, or naa', out);
  const lun = s.lun ?? 0;
  if (lun < 0 || lun > 255) out.push(invalid([...p, 'lun'], lun, inclusiveRangeError(0, 255)));
  if ((s.chapAuthDiscovery || s.chapAuthSession) && !s.secretRef) out.push(required([...p, 'secretRef']));
  if (s.initiatorName !== undefined && s.initiatorName !== null)
    // The API server spells this one in lower case.
    iscsiName(s.initiatorName, [...p, 'initiatorname'], 'must be valid format starting with iqn, eui, or naa', out);
}

/** Checked beside the source whichever source is first (the API server does it outside the one-of). */
export function iscsiNameLength(s: ISCSIVolumeSource, volumeName: string, vp: readonly PathPart[], out: string[]) {
  if (
    s.initiatorName !== undefined &&
    s.initiatorName !== null &&
    Buffer.byteLength(`${volumeName}:${s.targetPortal ?? ''}`) > MAX_ISCSI_NAME_AND_PORTAL
  )
    out.push(
      invalid(
        [...vp, 'name'],
        volumeName,
        'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.',
      ),
    );
}

export function fc(s: FCVolumeSource, p: readonly PathPart[], out: string[]): void {
  const wwns = s.targetWWNs ?? [];
  const wwids = s.wwids ?? [];
  if (wwns.length === 0 && wwids.length === 0)
    out.push(required([...p, 'targetWWNs'], 'must specify either targetWWNs or wwids, but not both'));
  if (wwns.length > 0 && wwids.length > 0)
    out.push(
      invalid([...p, 'targetWWNs'], goStrings(wwns), 'targetWWNs and wwids can not be specified simultaneously'),
    );
  if (wwns.length === 0) return;
  if (s.lun === undefined || s.lun === null)
    out.push(required([...p, 'lun'], 'lun is required if targetWWNs is specified'));
  else if (s.lun < 0 || s.lun > 255) out.push(invalid([...p, 'lun'], s.lun, inclusiveRangeError(0, 255)));
}

export function rbd(s: RBDVolumeSource, p: readonly PathPart[], out: string[]): void {
  if ((s.monitors ?? []).length === 0) out.push(required([...p, 'monitors']));
  if (!s.image) out.push(required([...p, 'image']));
}

export function cephfs(s: CephFSVolumeSource, p: readonly PathPart[], out: string[]): void {
  if ((s.monitors ?? []).length === 0) out.push(required([...p, 'monitors']));
}

export function glusterfs(s: GlusterfsVolumeSource, p: readonly PathPart[], out: string[]): void {
  if (!s.endpoints) out.push(required([...p, 'endpoints']));
  if (!s.path) out.push(required([...p, 'path']));
}

/** net.SplitHostPort's verdict: `host:port` or `[host]:port`, one colon outside brackets. */
function isHostPort(v: string): boolean {
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    return end > 0 && v[end + 1] === ':' && !v.slice(end + 2).includes(':') && !/[[\]]/.test(v.slice(end + 2));
  }
  const colon = v.lastIndexOf(':');
  if (colon < 0) return false;
  const host = v.slice(0, colon);
  return !host.includes(':') && !/[[\]]/.test(v);
}

export function quobyte(s: QuobyteVolumeSource, p: readonly PathPart[], out: string[]): void {
  const registry = s.registry ?? '';
  const pairs = 'must be a host:port pair or multiple pairs separated by commas';
  if (registry === '') out.push(required([...p, 'registry'], pairs));
  else if (Buffer.byteLength(s.tenant ?? '') >= 65)
    out.push(required([...p, 'tenant'], 'must be a UUID and may not exceed a length of 64 characters'));
  else
    for (const pair of registry.split(','))
      if (!isHostPort(pair)) out.push(invalid([...p, 'registry'], registry, pairs));
  if (!s.volume) out.push(required([...p, 'volume']));
}

export function flocker(s: FlockerVolumeSource, p: readonly PathPart[], out: string[]): void {
  const name = s.datasetName ?? '';
  const uuid = s.datasetUUID ?? '';
  if (name === '' && uuid === '') out.push(required(p, 'one of datasetName and datasetUUID is required'));
  if (name !== '' && uuid !== '')
    out.push(invalid(p, 'resource', 'datasetName and datasetUUID can not be specified simultaneously'));
  if (name.includes('/')) out.push(invalid([...p, 'datasetName'], name, "must not contain '/'"));
}

export function gitRepo(s: GitRepoVolumeSource, p: readonly PathPart[], out: string[]): void {
  if (!s.repository) out.push(required([...p, 'repository']));
  localDescendingPath([...p, 'directory'], s.directory ?? '', out);
}

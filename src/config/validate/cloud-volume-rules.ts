// The cloud and vendor volume sources as the API server checks them (validateGCEPersistentDisk...,
// validateAWSElasticBlockStore..., validateAzureDisk, validateAzureFile, validateCinder...,
// validateVsphere..., validatePhotonPersistentDisk..., validatePortworx..., validateScaleIO...,
// validateStorageOS..., validateFlexVolumeSource): the names each needs, a partition in range, an
// Azure disk's caching mode, kind and URI, flex options outside the reserved namespaces. bootlet
// mounts none of them.
import type {
  AWSElasticBlockStoreVolumeSource,
  AzureDiskVolumeSource,
  AzureFileVolumeSource,
  CinderVolumeSource,
  FlexVolumeSource,
  GCEPersistentDiskVolumeSource,
  PhotonPersistentDiskVolumeSource,
  PortworxVolumeSource,
  ScaleIOVolumeSource,
  StorageOSVolumeSource,
  VsphereVirtualDiskVolumeSource,
} from 'kubernetes-types/core/v1';
import { key, type PathPart } from '../field-path';
import { inclusiveRangeError, isDNS1123Label } from './api-formats';
import { invalid, required, unsupported } from './field-errors';

/** Sorted, as the API server lists them. */
const AZURE_CACHING_MODES = ['None', 'ReadOnly', 'ReadWrite'] as const;
const AZURE_DISK_KINDS = ['Dedicated', 'Managed', 'Shared'] as const;
const AZURE_MANAGED_URI =
  '/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}';
const AZURE_BLOB_URI = 'https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd';
const PARTITION_MESSAGE = inclusiveRangeError(1, 255);

function partition(n: number | undefined, p: readonly PathPart[], out: string[]): void {
  if (n !== undefined && (n < 0 || n > 255)) out.push(invalid(p, n, PARTITION_MESSAGE));
}

/** `p` is `persistentDisk`: the API server names the source so, not gcePersistentDisk. */
export function gcePersistentDisk(s: GCEPersistentDiskVolumeSource, p: readonly PathPart[], out: string[]): void {
  if (!s.pdName) out.push(required([...p, 'pdName']));
  partition(s.partition, [...p, 'partition'], out);
}

export function awsElasticBlockStore(s: AWSElasticBlockStoreVolumeSource, p: readonly PathPart[], out: string[]) {
  if (!s.volumeID) out.push(required([...p, 'volumeID']));
  partition(s.partition, [...p, 'partition'], out);
}

export function azureDisk(s: AzureDiskVolumeSource, p: readonly PathPart[], out: string[]): void {
  if (!s.diskName) out.push(required([...p, 'diskName']));
  const uri = s.diskURI ?? '';
  if (!uri) out.push(required([...p, 'diskURI']));
  if (s.cachingMode !== undefined && !(AZURE_CACHING_MODES as readonly string[]).includes(s.cachingMode))
    out.push(unsupported([...p, 'cachingMode'], s.cachingMode, AZURE_CACHING_MODES));
  if (s.kind === undefined) return;
  if (!(AZURE_DISK_KINDS as readonly string[]).includes(s.kind))
    out.push(unsupported([...p, 'kind'], s.kind, AZURE_DISK_KINDS));
  if (s.kind === 'Managed' && !uri.startsWith('/subscriptions/'))
    out.push(unsupported([...p, 'diskURI'], uri, [AZURE_MANAGED_URI]));
  if (s.kind !== 'Managed' && !uri.startsWith('https://'))
    out.push(unsupported([...p, 'diskURI'], uri, [AZURE_BLOB_URI]));
}

export function azureFile(s: AzureFileVolumeSource, p: readonly PathPart[], out: string[]): void {
  if (!s.secretName) out.push(required([...p, 'secretName']));
  if (!s.shareName) out.push(required([...p, 'shareName']));
}

export function cinder(s: CinderVolumeSource, p: readonly PathPart[], out: string[]): void {
  if (!s.volumeID) out.push(required([...p, 'volumeID']));
  if (s.secretRef && !s.secretRef.name) out.push(required([...p, 'secretRef', 'name']));
}

/** One required name: vsphereVolume's volumePath, photonPersistentDisk's pdID, portworxVolume's volumeID. */
export function requiredName(
  s: VsphereVirtualDiskVolumeSource | PhotonPersistentDiskVolumeSource | PortworxVolumeSource,
  field: 'volumePath' | 'pdID' | 'volumeID',
  p: readonly PathPart[],
  out: string[],
): void {
  if (!(s as unknown as Record<string, unknown>)[field]) out.push(required([...p, field]));
}

/** No secretRef needed: the API server leaves it optional (a valid pod it must not refuse). */
export function scaleIO(s: ScaleIOVolumeSource, p: readonly PathPart[], out: string[]): void {
  if (!s.gateway) out.push(required([...p, 'gateway']));
  if (!s.system) out.push(required([...p, 'system']));
  if (!s.volumeName) out.push(required([...p, 'volumeName']));
}

export function storageos(s: StorageOSVolumeSource, p: readonly PathPart[], out: string[]): void {
  if (!s.volumeName) out.push(required([...p, 'volumeName']));
  else for (const m of isDNS1123Label(s.volumeName)) out.push(invalid([...p, 'volumeName'], s.volumeName, m));
  if (s.volumeNamespace)
    for (const m of isDNS1123Label(s.volumeNamespace))
      out.push(invalid([...p, 'volumeNamespace'], s.volumeNamespace, m));
  if (s.secretRef && !s.secretRef.name) out.push(required([...p, 'secretRef', 'name']));
}

export function flexVolume(s: FlexVolumeSource, p: readonly PathPart[], out: string[]): void {
  if (!s.driver) out.push(required([...p, 'driver']));
  for (const k of Object.keys(s.options ?? {})) {
    const namespace = `.${(k.includes('/') ? k.slice(0, k.indexOf('/')) : k).toLowerCase()}`;
    if (namespace.endsWith('.kubernetes.io') || namespace.endsWith('.k8s.io'))
      out.push(invalid([...p, 'options', key(k)], k, 'kubernetes.io and k8s.io namespaces are reserved'));
  }
}

// What a configMap, secret, downwardAPI or projected volume holds, as the kubelet's MakePayload /
// CollectData compute it: file path → content and mode. The objects come from PodObjects; a
// missing required object or key is the kubelet's error text, which becomes the FailedMount message.
import type {
  ConfigMap,
  DownwardAPIVolumeFile,
  KeyToPath,
  Pod,
  ProjectedVolumeSource,
  Secret,
} from 'kubernetes-types/core/v1';
import { DEFAULT_TOKEN_EXPIRATION_SECONDS } from '../k8s/defaults.js';
import { DownwardApiError, resourceFieldValue, volumeFieldValue } from '../k8s/downward-api.js';
import type { NodeAllocatable } from '../k8s/node-allocatable.js';
import type { FileProjection } from './atomic-writer.js';
import { PodObjectUnavailableError, type PodObjects } from './pod-objects.js';
import { VolumeError } from './volume-errors.js';

/** The API's default for defaultMode of configMap, secret, downwardAPI and projected volumes. */
export const DEFAULT_VOLUME_MODE = 0o644;

export type MutablePayload = Map<string, FileProjection>;

/** A referenced object cannot be read now (no server yet): worth retrying, not the pod's fault. */
export class VolumeSourceUnavailableError extends VolumeError {
  override name = 'VolumeSourceUnavailableError';
}

async function fetchObject<T>(what: string, get: () => Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await get();
  } catch (err) {
    if (err instanceof PodObjectUnavailableError) throw new VolumeSourceUnavailableError(`${what}: ${err.message}`);
    throw err;
  }
}

/** The entries of a ConfigMap or Secret, decoded, and the error text of a missing key. */
interface KeyedData {
  readonly entries: ReadonlyMap<string, Buffer>;
  readonly missingKey: (key: string) => string;
}

function configMapData(cm: ConfigMap | undefined): KeyedData {
  const entries = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm?.data ?? {})) entries.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(cm?.binaryData ?? {}))
    if (!entries.has(k)) entries.set(k, Buffer.from(v, 'base64'));
  return { entries, missingKey: (k) => `configmap references non-existent config key: ${k}` };
}

function secretData(s: Secret | undefined): KeyedData {
  const entries = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(s?.data ?? {})) entries.set(k, Buffer.from(v, 'base64'));
  // stringData is write-only on the server; a stand-in may still hand it over.
  for (const [k, v] of Object.entries(s?.stringData ?? {})) entries.set(k, Buffer.from(v, 'utf8'));
  return { entries, missingKey: (k) => `references non-existent secret key: ${k}` };
}

function keyedPayload(
  out: MutablePayload,
  data: KeyedData,
  items: readonly KeyToPath[] | undefined,
  defaultMode: number,
  optional: boolean,
): void {
  if (!items || items.length === 0) {
    for (const [k, v] of data.entries) out.set(k, { data: v, mode: defaultMode });
    return;
  }
  for (const item of items) {
    const v = data.entries.get(item.key);
    if (v === undefined) {
      if (optional) continue;
      throw new VolumeError(data.missingKey(item.key));
    }
    out.set(item.path, { data: v, mode: item.mode ?? defaultMode });
  }
}

export interface PayloadContext {
  readonly pod: Pod & { metadata: { uid: string; name: string; namespace: string } };
  readonly objects: PodObjects | undefined;
  readonly node: NodeAllocatable;
  /** The pod's fsGroup: a token file is then 0600 and ownership makes it group-readable. */
  readonly fsGroup: number | undefined;
}

function objectsOf(ctx: PayloadContext, what: string): PodObjects {
  if (!ctx.objects) throw new VolumeSourceUnavailableError(`${what}: no API server to read it from`);
  return ctx.objects;
}

async function configMapOf(ctx: PayloadContext, name: string, optional: boolean): Promise<ConfigMap | undefined> {
  const ns = ctx.pod.metadata.namespace;
  const cm = await fetchObject(`configmap "${name}"`, () =>
    objectsOf(ctx, `configmap "${name}"`).getConfigMap(ns, name),
  );
  if (cm === undefined && !optional) throw new VolumeError(`configmap "${name}" not found`);
  return cm;
}

async function secretOf(ctx: PayloadContext, name: string, optional: boolean): Promise<Secret | undefined> {
  const ns = ctx.pod.metadata.namespace;
  const s = await fetchObject(`secret "${name}"`, () => objectsOf(ctx, `secret "${name}"`).getSecret(ns, name));
  if (s === undefined && !optional) throw new VolumeError(`secret "${name}" not found`);
  return s;
}

export async function configMapPayload(
  ctx: PayloadContext,
  source: { name?: string; items?: KeyToPath[]; optional?: boolean; defaultMode?: number },
  defaultMode = source.defaultMode ?? DEFAULT_VOLUME_MODE,
): Promise<MutablePayload> {
  const optional = source.optional === true;
  const out: MutablePayload = new Map();
  keyedPayload(
    out,
    configMapData(await configMapOf(ctx, source.name ?? '', optional)),
    source.items,
    defaultMode,
    optional,
  );
  return out;
}

export async function secretPayload(
  ctx: PayloadContext,
  name: string,
  source: { items?: KeyToPath[]; optional?: boolean },
  defaultMode: number,
): Promise<MutablePayload> {
  const optional = source.optional === true;
  const out: MutablePayload = new Map();
  keyedPayload(out, secretData(await secretOf(ctx, name, optional)), source.items, defaultMode, optional);
  return out;
}

export function downwardApiPayload(
  ctx: PayloadContext,
  items: readonly DownwardAPIVolumeFile[] | undefined,
  defaultMode: number,
): MutablePayload {
  const out: MutablePayload = new Map();
  for (const item of items ?? []) {
    let value: string;
    try {
      if (item.fieldRef) {
        value = volumeFieldValue(ctx.pod, item.fieldRef.fieldPath);
      } else if (item.resourceFieldRef) {
        const name = item.resourceFieldRef.containerName;
        const c = [...(ctx.pod.spec?.containers ?? []), ...(ctx.pod.spec?.initContainers ?? [])].find(
          (x) => x.name === name,
        );
        if (!c) throw new DownwardApiError(`resourceFieldRef: no container named ${JSON.stringify(name ?? '')}`);
        value = resourceFieldValue(c, item.resourceFieldRef, ctx.node);
      } else {
        throw new DownwardApiError('neither fieldRef nor resourceFieldRef is set');
      }
    } catch (err) {
      if (err instanceof DownwardApiError)
        throw new VolumeError(`downwardAPI item ${JSON.stringify(item.path)}: ${err.message}`);
      throw err;
    }
    out.set(item.path, { data: Buffer.from(value, 'utf8'), mode: item.mode ?? defaultMode });
  }
  return out;
}

function merge(into: MutablePayload, from: MutablePayload): void {
  for (const [k, v] of from) into.set(k, v);
}

/** Projected sources in order (a later one wins a path); every failing source is named, as the kubelet aggregates them. */
export async function projectedPayload(ctx: PayloadContext, source: ProjectedVolumeSource): Promise<MutablePayload> {
  const defaultMode = source.defaultMode ?? DEFAULT_VOLUME_MODE;
  const out: MutablePayload = new Map();
  const errors: VolumeError[] = [];
  for (const s of source.sources ?? []) {
    try {
      if (s.configMap) merge(out, await configMapPayload(ctx, s.configMap, defaultMode));
      else if (s.secret) merge(out, await secretPayload(ctx, s.secret.name ?? '', s.secret, defaultMode));
      else if (s.downwardAPI) merge(out, downwardApiPayload(ctx, s.downwardAPI.items, defaultMode));
      else if (s.serviceAccountToken) {
        const tp = s.serviceAccountToken;
        const sa = ctx.pod.spec?.serviceAccountName || ctx.pod.spec?.serviceAccount || 'default';
        const req = {
          pod: ctx.pod,
          serviceAccountName: sa,
          audience: tp.audience || undefined,
          expirationSeconds: tp.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS,
        };
        const token = await fetchObject(`token for service account "${sa}"`, () =>
          objectsOf(ctx, `token for service account "${sa}"`).getServiceAccountToken(req),
        );
        // With an fsGroup the token is 0600 and SetVolumeOwnership makes it 0640, as the kubelet does.
        out.set(tp.path, {
          data: Buffer.from(token?.token ?? '', 'utf8'),
          mode: ctx.fsGroup !== undefined ? 0o600 : defaultMode,
        });
      } else {
        const kind = Object.keys(s)[0] ?? 'unknown';
        throw new VolumeError(`projected source ${kind} is not supported by bootlet`);
      }
    } catch (err) {
      if (!(err instanceof VolumeError)) throw err;
      errors.push(err);
    }
  }
  if (errors.length === 1) throw errors[0]!;
  if (errors.length > 1) {
    const Kind = errors.every((e) => e instanceof VolumeSourceUnavailableError)
      ? VolumeSourceUnavailableError
      : VolumeError;
    throw new Kind(`[${errors.map((e) => e.message).join(', ')}]`);
  }
  return out;
}

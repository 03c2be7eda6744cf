// The ServiceAccount admission plugin on a pod's create: the `default` service account when none is
// named (which must exist), its imagePullSecrets when the pod has none, and, unless automounting is
// off, the `kube-api-access-<5>` projected volume (a 3607 s token, kube-root-ca.crt's ca.crt, the
// namespace) mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount in every init and
// regular container that has nothing there. Mirror pods are left alone. Exported on its own so a test
// can write a pod as the admission would without a server.
import { randomInt } from 'node:crypto';
import { forbidden, type ApiError } from '../status.js';
import type { ObjectStore } from '../store.js';
import { byKey } from '../resources.js';
import { arr, isObject, meta, obj, str, type JsonObject, type KObject } from '../types.js';
import { ROOT_CA_CONFIGMAP } from './cluster-objects.js';

export const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** The projected volume the plugin adds (name given, or kube-api-access-<random>). */
export function kubeApiAccessVolume(
  name = `kube-api-access-${Array.from({ length: 5 }, () => NAME_CHARS[randomInt(NAME_CHARS.length)]).join('')}`,
): JsonObject {
  return {
    name,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }],
          },
        },
      ],
    },
  };
}

/** Mutates the pod as the plugin would given its service account (undefined: the account does not exist). */
export function applyServiceAccount(pod: KObject, sa: KObject | undefined): ApiError | undefined {
  if ('kubernetes.io/config.mirror' in meta(pod).annotations) return undefined;
  const spec = obj(pod.spec);
  pod.spec = spec;
  const name = str(spec.serviceAccountName) || 'default';
  if (!sa)
    return forbidden(
      byKey('pods'),
      str(pod.metadata.name),
      `error looking up service account ${meta(pod).namespace}/${name}: serviceaccount "${name}" not found`,
    );
  spec.serviceAccountName = name;
  if (arr(spec.imagePullSecrets).length === 0 && arr(sa.imagePullSecrets).length > 0)
    spec.imagePullSecrets = arr(sa.imagePullSecrets).map((s) => ({ name: str(obj(s).name) }));
  const automount =
    typeof spec.automountServiceAccountToken === 'boolean'
      ? spec.automountServiceAccountToken
      : sa.automountServiceAccountToken !== false;
  if (!automount) return undefined;
  const containers = [...arr(spec.initContainers), ...arr(spec.containers)].filter(isObject);
  const needs = containers.filter(
    (c) => !arr(c.volumeMounts).some((m) => str(obj(m).mountPath) === SERVICE_ACCOUNT_MOUNT),
  );
  if (needs.length === 0) return undefined;
  const volume = kubeApiAccessVolume();
  spec.volumes = [...arr(spec.volumes), volume];
  for (const c of needs)
    c.volumeMounts = [
      ...arr(c.volumeMounts),
      { name: str(volume.name), readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT },
    ];
  return undefined;
}

/** The plugin as the fake's create path calls it. */
export function admitServiceAccount(pod: KObject, store: ObjectStore): ApiError | undefined {
  const name = str(obj(pod.spec).serviceAccountName) || 'default';
  return applyServiceAccount(pod, store.get('serviceaccounts', meta(pod).namespace, name));
}

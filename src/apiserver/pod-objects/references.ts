// The Secrets and ConfigMaps a pod refers to, as the kubelet's managers read them
// (pkg/api/v1/pod/util.go VisitPodSecretNames / VisitPodConfigmapNames): every container kind's env
// and envFrom, the volumes (projected sources included), and for Secrets the image pull secrets and
// the volume plugins that take a secret reference. An empty name refers to nothing. Those of the
// volumes apart too: their watches are kept (object-manager.ts).
import type { Container, EphemeralContainer, PodSpec } from 'kubernetes-types/core/v1';

type AnyContainer = Container | EphemeralContainer;

function containersOf(spec: PodSpec | undefined): AnyContainer[] {
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])];
}

function collect(names: Iterable<string | undefined>): Set<string> {
  const out = new Set<string>();
  for (const n of names) if (n) out.add(n);
  return out;
}

export function podSecretNames(spec: PodSpec | undefined): Set<string> {
  const names: (string | undefined)[] = [];
  for (const r of spec?.imagePullSecrets ?? []) names.push(r.name);
  for (const c of containersOf(spec)) {
    for (const f of c.envFrom ?? []) names.push(f.secretRef?.name);
    for (const e of c.env ?? []) names.push(e.valueFrom?.secretKeyRef?.name);
  }
  return collect([...names, ...podSecretVolumeNames(spec)]);
}

/** The Secrets the pod's volumes take (their content, or a plugin's credentials). */
export function podSecretVolumeNames(spec: PodSpec | undefined): Set<string> {
  const names: (string | undefined)[] = [];
  for (const v of spec?.volumes ?? []) {
    names.push(
      v.secret?.secretName,
      v.azureFile?.secretName,
      v.cephfs?.secretRef?.name,
      v.cinder?.secretRef?.name,
      v.flexVolume?.secretRef?.name,
      v.rbd?.secretRef?.name,
      v.scaleIO?.secretRef?.name,
      v.iscsi?.secretRef?.name,
      v.storageos?.secretRef?.name,
      v.csi?.nodePublishSecretRef?.name,
    );
    for (const s of v.projected?.sources ?? []) names.push(s.secret?.name);
  }
  return collect(names);
}

export function podConfigMapNames(spec: PodSpec | undefined): Set<string> {
  const names: (string | undefined)[] = [];
  for (const c of containersOf(spec)) {
    for (const f of c.envFrom ?? []) names.push(f.configMapRef?.name);
    for (const e of c.env ?? []) names.push(e.valueFrom?.configMapKeyRef?.name);
  }
  return collect([...names, ...podConfigMapVolumeNames(spec)]);
}

/** The ConfigMaps the pod's volumes project. */
export function podConfigMapVolumeNames(spec: PodSpec | undefined): Set<string> {
  const names: (string | undefined)[] = [];
  for (const v of spec?.volumes ?? []) {
    names.push(v.configMap?.name);
    for (const s of v.projected?.sources ?? []) names.push(s.configMap?.name);
  }
  return collect(names);
}

// Kubelet flags without a KubeletConfiguration field that bootlet recognises but does not act on:
// kubeadm's drop-in, kubeadm-flags.env and /etc/default/kubelet may carry any of them (1.28-1.34).
// The deprecation texts are the kubelet's, printed as pflag prints them.
import type { AnySetting, SettingSpec, SettingStatus } from './setting.js';
import { bool, duration, int32, path, str, type ValueType } from './value-types.js';

function flag<T>(
  name: string,
  type: ValueType<T>,
  dflt: T | undefined,
  help: string,
  extra: { deprecated?: string; status?: SettingStatus } = {},
): AnySetting {
  const spec: SettingSpec<T> = { flag: name, type, help, status: extra.status ?? 'not-implemented', ...extra };
  return (dflt !== undefined ? { ...spec, default: dflt } : spec) as AnySetting;
}

const EVICTION_INSTEAD = 'Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.';
const FUTURE = 'will be removed in a future version';
const CADVISOR =
  'This is a cadvisor flag that was mistakenly registered with the Kubelet. Due to legacy concerns, it will follow the standard CLI deprecation timeline before being removed.';

export const FLAG_RECOGNISED: AnySetting[] = [
  flag('config-dir', path, '', 'Directory of KubeletConfiguration drop-ins merged over --config'),
  flag('runtime-cgroups', str, '', 'cgroup the container runtime is expected in'),
  // The kubelet of 1.31-1.34 takes it and does nothing with it.
  flag('pod-infra-container-image', str, '', 'Sandbox image (the runtime chooses it)', {
    status: 'no-effect',
    deprecated: 'will be removed in 1.35. Image garbage collector will get sandbox image information from CRI.',
  }),
  flag('image-credential-provider-config', path, '', 'Credential provider plugin configuration'),
  flag('image-credential-provider-bin-dir', path, '', 'Credential provider plugin binaries'),
  flag('lock-file', path, '', 'Lock file shared with another kubelet'),
  flag('exit-on-lock-contention', bool, false, 'Exit when another process wants --lock-file'),
  flag('minimum-container-ttl-duration', duration, 0, 'Youngest dead container garbage collection removes', {
    deprecated: EVICTION_INSTEAD,
  }),
  flag('maximum-dead-containers-per-container', int32, 1, 'Dead containers kept per container', {
    deprecated: EVICTION_INSTEAD,
  }),
  flag('maximum-dead-containers', int32, -1, 'Dead containers kept on the node', { deprecated: EVICTION_INSTEAD }),
  flag('register-schedulable', bool, true, 'Register the Node as schedulable', { deprecated: FUTURE }),
  flag('keep-terminated-pod-volumes', bool, false, 'Keep volumes of terminated pods mounted', { deprecated: FUTURE }),
  flag('experimental-mounter-path', path, '', 'Mount helper binary', {
    deprecated: 'will be removed in 1.25 or later. in favor of using CSI.',
  }),
  flag('cloud-config', path, '', 'Cloud provider configuration', {
    deprecated: 'will be removed in 1.25 or later, in favor of removing cloud provider code from Kubelet.',
  }),
  flag('experimental-allocatable-ignore-eviction', bool, false, 'Leave eviction thresholds out of allocatable', {
    deprecated: 'will be removed in 1.25 or later.',
  }),
  flag('housekeeping-interval', duration, 10_000, 'cAdvisor housekeeping interval'),
  flag('docker-root', str, '', 'cAdvisor: Docker root directory'),
  ...(
    [
      ['application-metrics-count-limit', int32, 100],
      ['boot-id-file', str, ''],
      ['container-hints', str, ''],
      ['containerd', str, ''],
      ['containerd-namespace', str, ''],
      ['docker', str, ''],
      ['docker-env-metadata-whitelist', str, ''],
      ['docker-only', bool, false],
      ['docker-tls', bool, false],
      ['docker-tls-ca', str, ''],
      ['docker-tls-cert', str, ''],
      ['docker-tls-key', str, ''],
      ['enable-load-reader', bool, false],
      ['event-storage-age-limit', str, ''],
      ['event-storage-event-limit', str, ''],
      ['global-housekeeping-interval', duration, 60_000],
      ['log-cadvisor-usage', bool, false],
      ['machine-id-file', str, ''],
      ['storage-driver-buffer-duration', duration, 60_000],
      ['storage-driver-db', str, ''],
      ['storage-driver-host', str, ''],
      ['storage-driver-password', str, ''],
      ['storage-driver-secure', bool, false],
      ['storage-driver-table', str, ''],
      ['storage-driver-user', str, ''],
    ] as [string, ValueType<unknown>, unknown][]
  ).map(([name, type, dflt]) => flag(name, type, dflt, 'cAdvisor setting', { deprecated: CADVISOR })),
];

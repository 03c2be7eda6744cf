// The KubeletConfiguration fields bootlet recognises but does not act on, with their kubelet flags
// and the kubelet's defaults (SetDefaults_KubeletConfiguration, v1.36). A file or flag that sets
// one to anything but its default is named in the one start-up warning; one that spells out the
// default (as kubeadm's files do) is not.
import * as check from './checks.js';
import type { AnySetting, SettingSpec, SettingStatus } from './setting.js';
import {
  bool,
  duration,
  float64,
  int32,
  int32List,
  int64,
  opaque,
  path,
  quantityValue,
  str,
  stringList,
  stringMap,
  timeOrMetaDuration,
  type ValueType,
} from './value-types.js';

interface Extra<T> {
  pointer?: boolean;
  status?: SettingStatus;
  deprecated?: string;
  configRelative?: boolean;
  validate?: (v: T) => string | undefined;
}

function field<T>(
  name: string,
  flag: string | undefined,
  type: ValueType<T>,
  dflt: T | undefined,
  help: string,
  extra: Extra<T> = {},
): AnySetting {
  const spec: SettingSpec<T> = { field: name, type, help, status: extra.status ?? 'not-implemented', ...extra };
  return { ...spec, ...(flag ? { flag } : {}), ...(dflt !== undefined ? { default: dflt } : {}) } as AnySetting;
}

const P = { pointer: true };
const NO_EFFECT_FLAG = 'This flag has no effect and will be removed in a future version.';

export const CONFIG_RECOGNISED: AnySetting[] = [
  field('registryPullQPS', 'registry-qps', int32, 5, 'Image pulls per second', P),
  field('registryBurst', 'registry-burst', int32, 10, 'Image pull burst'),
  field(
    'imagePullCredentialsVerificationPolicy',
    undefined,
    str,
    '',
    'Whether pods must prove pull credentials for images already on the node',
  ),
  field(
    'preloadedImagesVerificationAllowlist',
    undefined,
    stringList,
    [],
    'Images exempt from pull credential verification',
  ),
  field('eventRecordQPS', 'event-qps', int32, 50, 'Events per second', P),
  field('eventBurst', 'event-burst', int32, 100, 'Event burst'),
  field('enableContentionProfiling', 'contention-profiling', bool, false, 'Block profiling'),
  field('oomScoreAdj', 'oom-score-adj', int32, -999, "The agent's own oom_score_adj", {
    ...P,
    validate: check.between(-1000, 1000),
  }),
  field(
    'streamingConnectionIdleTimeout',
    'streaming-connection-idle-timeout',
    duration,
    4 * 3_600_000,
    'Idle timeout of exec/attach streams (no effect in the kubelet either)',
    { status: 'no-effect' },
  ),
  field(
    'imageMinimumGCAge',
    'minimum-image-ttl-duration',
    duration,
    120_000,
    'Youngest unused image garbage collection removes',
  ),
  field('imageMaximumGCAge', undefined, duration, 0, 'Unused images older than this are removed'),
  field(
    'imageGCHighThresholdPercent',
    'image-gc-high-threshold',
    int32,
    85,
    'Disk use that starts image garbage collection',
    P,
  ),
  field(
    'imageGCLowThresholdPercent',
    'image-gc-low-threshold',
    int32,
    80,
    'Disk use image garbage collection brings it down to',
    P,
  ),
  field('volumeStatsAggPeriod', 'volume-stats-agg-period', duration, 60_000, 'Volume disk usage period'),
  field('kubeletCgroups', 'kubelet-cgroups', str, '', "The agent's own cgroup"),
  field('systemCgroups', 'system-cgroups', str, '', 'cgroup for non-kernel processes outside containers'),
  field('cpuManagerPolicy', 'cpu-manager-policy', str, 'none', 'CPU manager policy'),
  field(
    'singleProcessOOMKill',
    undefined,
    bool,
    undefined,
    'OOM-kill single processes instead of the whole container',
    P,
  ),
  field('cpuManagerPolicyOptions', 'cpu-manager-policy-options', stringMap('='), {}, 'CPU manager policy options'),
  field('cpuManagerReconcilePeriod', 'cpu-manager-reconcile-period', duration, 10_000, 'CPU manager reconcile period'),
  field('memoryManagerPolicy', 'memory-manager-policy', str, 'None', 'Memory manager policy'),
  field('topologyManagerPolicy', 'topology-manager-policy', str, 'none', 'Topology manager policy'),
  field('topologyManagerScope', 'topology-manager-scope', str, 'container', 'Topology manager scope'),
  field(
    'topologyManagerPolicyOptions',
    'topology-manager-policy-options',
    stringMap('='),
    {},
    'Topology manager policy options',
  ),
  field('qosReserved', 'qos-reserved', stringMap('='), {}, 'Resources reserved per QoS class'),
  field('hairpinMode', 'hairpin-mode', str, 'promiscuous-bridge', 'Hairpin NAT setup'),
  field('runOnce', 'runonce', bool, false, 'Run the pods once and exit (the kubelet refuses it)', {
    validate: (v) => (v ? 'runOnce mode has been deprecated and should not be set' : undefined),
  }),
  field('cpuCFSQuota', 'cpu-cfs-quota', bool, true, 'Enforce CPU limits with CFS quota', P),
  field('cpuCFSQuotaPeriod', 'cpu-cfs-quota-period', duration, 100, 'CFS quota period', P),
  field('nodeStatusMaxImages', 'node-status-max-images', int32, 50, 'Images listed in the Node status', P),
  field('maxOpenFiles', 'max-open-files', int64, 1_000_000, "The agent's open file limit"),
  field(
    'contentType',
    'kube-api-content-type',
    str,
    'application/vnd.kubernetes.protobuf',
    'Content type of API requests',
  ),
  field('kubeAPIQPS', 'kube-api-qps', int32, 50, 'API requests per second', P),
  field('kubeAPIBurst', 'kube-api-burst', int32, 100, 'API request burst'),
  field('serializeImagePulls', 'serialize-image-pulls', bool, true, 'Pull one image at a time', P),
  field('maxParallelImagePulls', undefined, int32, undefined, 'Most image pulls at once', P),
  field('evictionSoft', 'eviction-soft', stringMap('<'), {}, 'Soft eviction thresholds'),
  field('evictionSoftGracePeriod', 'eviction-soft-grace-period', stringMap('='), {}, 'Soft eviction grace periods'),
  field(
    'evictionPressureTransitionPeriod',
    'eviction-pressure-transition-period',
    duration,
    300_000,
    'Time before leaving a pressure condition',
  ),
  field('evictionMaxPodGracePeriod', 'eviction-max-pod-grace-period', int32, 0, 'Grace period cap for soft evictions'),
  field(
    'evictionMinimumReclaim',
    'eviction-minimum-reclaim',
    stringMap('='),
    {},
    'Minimum reclaim per eviction signal',
  ),
  field(
    'mergeDefaultEvictionSettings',
    undefined,
    bool,
    false,
    'Merge the default eviction thresholds into the given ones',
    P,
  ),
  field('podsPerCore', 'pods-per-core', int32, 0, 'Pods per CPU core'),
  field(
    'enableControllerAttachDetach',
    'enable-controller-attach-detach',
    bool,
    true,
    'Leave volume attach/detach to the controller',
    P,
  ),
  field(
    'protectKernelDefaults',
    'protect-kernel-defaults',
    bool,
    false,
    'Fail when kernel tunables differ from the kubelet defaults',
  ),
  field('makeIPTablesUtilChains', 'make-iptables-util-chains', bool, true, 'Create the KUBE-IPTABLES-HINT chain', P),
  field('iptablesMasqueradeBit', 'iptables-masquerade-bit', int32, 14, 'No effect in the kubelet either', {
    ...P,
    status: 'no-effect',
    deprecated: NO_EFFECT_FLAG,
  }),
  field('iptablesDropBit', 'iptables-drop-bit', int32, 15, 'No effect in the kubelet either', {
    ...P,
    status: 'no-effect',
    deprecated: NO_EFFECT_FLAG,
  }),
  field('memorySwap.swapBehavior', undefined, str, '', 'Swap for container workloads (NoSwap, LimitedSwap)'),
  field('containerLogMaxWorkers', 'container-log-max-workers', int32, 1, 'Concurrent log rotations', {
    ...P,
    validate: check.atLeast(1),
  }),
  field(
    'configMapAndSecretChangeDetectionStrategy',
    undefined,
    str,
    'Watch',
    'How ConfigMap and Secret changes are noticed',
  ),
  field('systemReserved', 'system-reserved', stringMap('='), {}, 'Resources reserved for the system'),
  field('kubeReserved', 'kube-reserved', stringMap('='), {}, 'Resources reserved for Kubernetes daemons'),
  field('reservedSystemCPUs', 'reserved-cpus', str, '', 'CPUs reserved for the system'),
  field('showHiddenMetricsForVersion', undefined, str, '', 'Show metrics hidden since this version'),
  field('systemReservedCgroup', 'system-reserved-cgroup', str, '', 'cgroup that enforces systemReserved'),
  field('kubeReservedCgroup', 'kube-reserved-cgroup', str, '', 'cgroup that enforces kubeReserved'),
  field(
    'enforceNodeAllocatable',
    'enforce-node-allocatable',
    stringList,
    ['pods'],
    'Node allocatable enforcement levels',
  ),
  field(
    'volumePluginDir',
    'volume-plugin-dir',
    path,
    '/usr/libexec/kubernetes/kubelet-plugins/volume/exec/',
    'FlexVolume plugin directory',
    { configRelative: true },
  ),
  field('providerID', 'provider-id', str, '', "The Node's spec.providerID"),
  field('kernelMemcgNotification', 'kernel-memcg-notification', bool, false, 'Memory eviction by memcg notification'),
  field(
    'logging.flushFrequency',
    'log-flush-frequency',
    timeOrMetaDuration,
    5000,
    'Longest time between log flushes (bootlet writes each line at once)',
  ),
  field('logging.vmodule', 'vmodule', opaque, undefined, 'Per-file verbosity (pattern=N,...)'),
  field(
    'logging.options.text.splitStream',
    'log-text-split-stream',
    bool,
    false,
    'Text logs: errors to stderr, info to stdout',
  ),
  field(
    'logging.options.text.infoBufferSize',
    'log-text-info-buffer-size',
    quantityValue,
    '0',
    'Text logs: info buffer size',
  ),
  field(
    'logging.options.json.splitStream',
    'log-json-split-stream',
    bool,
    false,
    'JSON logs: errors to stderr, info to stdout',
  ),
  field(
    'logging.options.json.infoBufferSize',
    'log-json-info-buffer-size',
    quantityValue,
    '0',
    'JSON logs: info buffer size',
  ),
  field('crashLoopBackOff.maxContainerRestartPeriod', undefined, duration, undefined, 'Longest crash loop back-off', P),
  field('reservedMemory', 'reserved-memory', opaque, undefined, 'Memory reserved per NUMA node'),
  field('enableProfilingHandler', undefined, bool, true, '/debug/pprof on the kubelet API', P),
  field('enableDebugFlagsHandler', undefined, bool, true, '/debug/flags/v on the kubelet API', P),
  field(
    'seccompDefault',
    'seccomp-default',
    bool,
    false,
    'RuntimeDefault seccomp for containers that name no profile',
    P,
  ),
  field('memoryThrottlingFactor', undefined, float64, 0.9, 'memory.high factor of MemoryQoS', P),
  field('tracing.endpoint', undefined, str, undefined, 'OpenTelemetry collector endpoint', P),
  field('tracing.samplingRatePerMillion', undefined, int32, undefined, 'Traces sampled per million', P),
  field(
    'localStorageCapacityIsolation',
    'local-storage-capacity-isolation',
    bool,
    true,
    'Ephemeral storage requests and limits',
    P,
  ),
  // 1.36: Go's crypto/tls CurveID numbers; nil keeps the defaults (bootlet's: OpenSSL's groups).
  field('tlsCurvePreferences', undefined, int32List, [], 'Key exchange groups of the kubelet API, as Go CurveIDs'),
  // 1.36, with MemoryQoS (off): None sets no memory.min; TieredReservation sets memory.min and memory.low by QoS.
  field('memoryReservationPolicy', undefined, str, 'None', 'cgroup v2 memory protection of pods (MemoryQoS)', {
    validate: check.oneOf('', 'None', 'TieredReservation'),
  }),
];

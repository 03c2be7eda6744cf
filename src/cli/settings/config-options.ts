// The KubeletConfiguration fields that reach the agent's options, each with its kubelet flag. The
// key is the name the resolved options use. Fields bootlet only recognises are in
// config-recognised.ts; flags without a field are in flag-options.ts.
import { DEFAULT_EVICTION_HARD } from '../../k8s/node-allocatable.js';
import * as check from './checks.js';
import { optionalSetting, setting } from './setting.js';
import { checkShutdownPriorities, shutdownPriorities } from './shutdown-priorities.js';
import { bool, boolMap, duration, headerMap, int32, int64, ip, path, quantityBytes, str, stringList, stringMap, taints, uint32 } from './value-types.js';

export const CONFIG_OPTIONS = {
  // Static pods and the runtime
  podManifestPath: setting({
    flag: 'pod-manifest-path',
    field: 'staticPodPath',
    type: path,
    default: '/etc/kubernetes/manifests',
    kubeletDefault: '',
    configRelative: true,
    validate: check.nonEmpty,
    status: 'applied',
    help: 'Directory of static pod manifests, or a single manifest file',
    note: 'The kubelet runs no static pods unless told where they are; running them is what bootlet is for.',
  }),
  staticPodURL: setting({
    flag: 'manifest-url',
    field: 'staticPodURL',
    type: str,
    default: '',
    validate: check.httpUrlOrEmpty,
    status: 'applied',
    help: 'URL of a Pod or PodList to run as static pods, read every httpCheckFrequency (as the kubelet)',
  }),
  staticPodURLHeader: setting({ flag: 'manifest-url-header', field: 'staticPodURLHeader', type: headerMap, default: {}, status: 'applied', help: 'HTTP headers sent with --manifest-url (Name:value,...; repeatable)' }),
  httpCheckFrequencyMs: setting({ flag: 'http-check-frequency', field: 'httpCheckFrequency', type: duration, default: 20_000, validate: check.positiveDuration, status: 'applied', help: 'How often --manifest-url is read' }),
  fileCheckFrequencyMs: setting({ flag: 'file-check-frequency', field: 'fileCheckFrequency', type: duration, default: 20_000, validate: check.positiveDuration, status: 'applied', help: 'Full rescan of the manifest path, a safety net under the file watcher' }),
  syncFrequencyMs: setting({ flag: 'sync-frequency', field: 'syncFrequency', type: duration, default: 60_000, validate: check.positiveDuration, status: 'applied', help: 'Longest time between two syncs of a running pod' }),
  containerRuntimeEndpoint: setting({
    flag: 'container-runtime-endpoint',
    field: 'containerRuntimeEndpoint',
    type: str,
    default: 'unix:///run/containerd/containerd.sock',
    validate: check.nonEmpty,
    status: 'applied',
    help: 'CRI runtime socket (unix:// URL or path)',
  }),
  imageServiceEndpoint: optionalSetting({ flag: 'image-service-endpoint', field: 'imageServiceEndpoint', type: str, status: 'applied', help: 'CRI image service socket, when it is not the runtime endpoint' }),
  runtimeRequestTimeoutMs: setting({ flag: 'runtime-request-timeout', field: 'runtimeRequestTimeout', type: duration, default: 120_000, validate: check.positiveDuration, status: 'applied', help: 'Timeout of CRI calls other than image pulls' }),
  podLogsDir: setting({ field: 'podLogsDir', type: path, default: '/var/log/pods', configRelative: true, validate: check.cleanAbsoluteAsciiPath, status: 'applied', help: "Root of the containers' log files" }),
  containerLogMaxSizeBytes: setting({ flag: 'container-log-max-size', field: 'containerLogMaxSize', type: quantityBytes, default: 10 * 1024 * 1024, validate: (b) => (b > 0 ? undefined : 'must be greater than 0'), status: 'applied', help: 'Size at which a container log file is rotated' }),
  containerLogMaxFiles: setting({ flag: 'container-log-max-files', field: 'containerLogMaxFiles', type: int32, pointer: true, default: 5, validate: (n) => (n > 1 ? undefined : 'must be greater than 1'), status: 'applied', help: 'Log files kept per container, the live one included' }),
  containerLogMonitorIntervalMs: setting({ flag: 'container-log-monitor-interval', field: 'containerLogMonitorInterval', type: duration, pointer: true, default: 10_000, validate: check.atLeastDuration(3000), status: 'applied', help: 'How often container logs are checked for rotation' }),

  // DNS for pods that are not hostNetwork
  resolvConf: setting({
    flag: 'resolv-conf',
    field: 'resolvConf',
    type: path,
    pointer: true,
    default: '/etc/resolv.conf',
    configRelative: true,
    status: 'applied',
    help: 'Resolver file that pods with host DNS inherit; "" gives them none',
  }),
  clusterDNS: setting({ flag: 'cluster-dns', field: 'clusterDNS', type: stringList, default: [], status: 'applied', help: 'Cluster DNS server IPs for ClusterFirst pods' }),
  clusterDomain: setting({ flag: 'cluster-domain', field: 'clusterDomain', type: str, default: '', status: 'applied', help: 'Cluster DNS domain added to the search path of ClusterFirst pods' }),

  // Local endpoints
  healthzPort: setting({ flag: 'healthz-port', field: 'healthzPort', type: int32, pointer: true, default: 10248, validate: check.portOrZero, status: 'applied', help: 'Port of /healthz (0 turns it off)' }),
  healthzBindAddress: setting({ flag: 'healthz-bind-address', field: 'healthzBindAddress', type: ip, default: '127.0.0.1', status: 'applied', help: 'Address of /healthz' }),
  readOnlyPort: setting({ flag: 'read-only-port', field: 'readOnlyPort', type: int32, default: 0, validate: check.portOrZero, status: 'applied', help: 'Unauthenticated port with /pods, /metrics and /healthz (0 turns it off)' }),
  address: setting({ flag: 'address', field: 'address', type: ip, default: '0.0.0.0', status: 'applied', help: 'Address the kubelet API and the read-only port listen on' }),
  enableServer: setting({ flag: 'enable-server', field: 'enableServer', type: bool, pointer: true, default: true, status: 'applied', help: 'Serve the kubelet API (logs, exec, port-forward, stats) on port' }),
  port: setting({ flag: 'port', field: 'port', type: int32, default: 10250, validate: check.port, status: 'applied', help: 'Port of the authenticated kubelet API (logs, exec, stats)' }),
  enableDebuggingHandlers: setting({
    flag: 'enable-debugging-handlers',
    field: 'enableDebuggingHandlers',
    type: bool,
    pointer: true,
    default: true,
    status: 'applied',
    help: 'Logs, exec, attach and port-forward on the kubelet API',
  }),
  tlsCertFile: optionalSetting({ flag: 'tls-cert-file', field: 'tlsCertFile', type: path, configRelative: true, status: 'applied', help: 'Serving certificate of the kubelet API (default: a self-signed <cert-dir>/kubelet.crt)' }),
  tlsPrivateKeyFile: optionalSetting({ flag: 'tls-private-key-file', field: 'tlsPrivateKeyFile', type: path, configRelative: true, status: 'applied', help: 'Key of the serving certificate' }),
  tlsMinVersion: setting({
    flag: 'tls-min-version',
    field: 'tlsMinVersion',
    type: str,
    default: '',
    validate: check.oneOf('', 'VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13'),
    status: 'applied',
    help: 'Lowest TLS version of the kubelet API (VersionTLS12, VersionTLS13; default TLS 1.2)',
  }),
  serverTLSBootstrap: setting({ flag: 'rotate-server-certificates', field: 'serverTLSBootstrap', type: bool, default: false, status: 'applied', help: 'Request the serving certificate from the API server (kubernetes.io/kubelet-serving) and rotate it' }),
  clientCAFile: optionalSetting({ flag: 'client-ca-file', field: 'authentication.x509.clientCAFile', type: path, configRelative: true, status: 'applied', help: 'CA bundle that authenticates client certificates on the kubelet API' }),
  anonymousAuth: setting({ flag: 'anonymous-auth', field: 'authentication.anonymous.enabled', type: bool, pointer: true, default: false, status: 'applied', help: 'Let unauthenticated requests through to the kubelet API as system:anonymous' }),
  authenticationTokenWebhook: setting({ flag: 'authentication-token-webhook', field: 'authentication.webhook.enabled', type: bool, pointer: true, default: true, status: 'applied', help: 'Authenticate bearer tokens with TokenReview' }),
  authenticationTokenWebhookCacheTTLMs: setting({ flag: 'authentication-token-webhook-cache-ttl', field: 'authentication.webhook.cacheTTL', type: duration, default: 120_000, status: 'applied', help: 'How long TokenReview answers are cached' }),
  authorizationMode: setting({ flag: 'authorization-mode', field: 'authorization.mode', type: str, default: 'Webhook', validate: check.oneOf('AlwaysAllow', 'Webhook'), status: 'applied', help: 'AlwaysAllow, or Webhook (SubjectAccessReview)' }),
  authorizationWebhookCacheAuthorizedTTLMs: setting({ flag: 'authorization-webhook-cache-authorized-ttl', field: 'authorization.webhook.cacheAuthorizedTTL', type: duration, default: 300_000, status: 'applied', help: 'How long an "allowed" answer is cached' }),
  authorizationWebhookCacheUnauthorizedTTLMs: setting({ flag: 'authorization-webhook-cache-unauthorized-ttl', field: 'authorization.webhook.cacheUnauthorizedTTL', type: duration, default: 30_000, status: 'applied', help: 'How long a "denied" answer is cached' }),

  // The Node and the API server
  registerNode: setting({ flag: 'register-node', field: 'registerNode', type: bool, pointer: true, default: true, status: 'applied', help: 'Create the Node object; false: only use one that exists' }),
  registerWithTaints: setting({ flag: 'register-with-taints', field: 'registerWithTaints', type: taints, default: [], status: 'applied', help: 'Taints the Node is registered with' }),
  nodeStatusUpdateFrequencyMs: setting({ flag: 'node-status-update-frequency', field: 'nodeStatusUpdateFrequency', type: duration, default: 10_000, validate: check.positiveDuration, status: 'applied', help: 'How often the Node status is computed (and sent when it changed)' }),
  nodeStatusReportFrequencyMs: setting({ field: 'nodeStatusReportFrequency', type: duration, default: 300_000, validate: check.positiveDuration, status: 'applied', help: 'Longest time between two Node status reports; defaults to nodeStatusUpdateFrequency when that is set' }),
  nodeLeaseDurationSeconds: setting({ field: 'nodeLeaseDurationSeconds', type: int32, default: 40, validate: (n) => (n > 0 ? undefined : 'must be greater than 0'), status: 'applied', help: "Duration of the node's Lease" }),
  podCIDR: setting({ flag: 'pod-cidr', field: 'podCIDR', type: str, default: '', status: 'applied', help: "Pod CIDR handed to the runtime at start (standalone mode); the Node's spec.podCIDRs take over once known" }),
  maxPods: setting({ flag: 'max-pods', field: 'maxPods', type: int32, default: 110, validate: check.atLeast(0), status: 'applied', help: 'Most pods admitted to the node (and the pods capacity it reports)' }),
  allowedUnsafeSysctls: setting({ flag: 'allowed-unsafe-sysctls', field: 'allowedUnsafeSysctls', type: stringList, default: [], validate: check.sysctlPatterns, status: 'applied', help: 'Unsafe sysctls (names, or prefixes ending in *) a pod may set besides the safe ones; others refuse it at admission' }),
  rotateCertificates: setting({ flag: 'rotate-certificates', field: 'rotateCertificates', type: bool, default: false, status: 'applied', help: 'Renew the client certificate from the API server before it expires' }),

  // Graceful node shutdown (src/nodeshutdown): off while both are 0, as in the kubelet
  shutdownGracePeriodMs: setting({ field: 'shutdownGracePeriod', type: duration, default: 0, validate: check.atLeastDuration(0), status: 'applied', help: 'Delay of node shutdown for pod termination (logind delay lock); 0 turns graceful shutdown off' }),
  shutdownGracePeriodCriticalPodsMs: setting({ field: 'shutdownGracePeriodCriticalPods', type: duration, default: 0, validate: check.atLeastDuration(0), status: 'applied', help: 'Part of shutdownGracePeriod kept for critical pods, stopped last' }),
  shutdownGracePeriodByPodPriority: setting({ field: 'shutdownGracePeriodByPodPriority', type: shutdownPriorities, default: [], validate: checkShutdownPriorities, status: 'applied', help: 'Shutdown grace periods by pod priority (replaces the two above)' }),

  // cgroups and limits
  cgroupDriver: setting({ flag: 'cgroup-driver', field: 'cgroupDriver', type: str, default: 'cgroupfs', validate: check.oneOf('cgroupfs', 'systemd'), status: 'applied', help: 'cgroupfs or systemd, as the runtime is configured' }),
  cgroupsPerQOS: setting({ flag: 'cgroups-per-qos', field: 'cgroupsPerQOS', type: bool, pointer: true, default: true, status: 'applied', help: 'Put pods under per-QoS cgroups (kubepods/burstable, kubepods/besteffort)' }),
  cgroupRoot: setting({ flag: 'cgroup-root', field: 'cgroupRoot', type: str, default: '', status: 'applied', help: 'Root cgroup of the pods' }),
  podPidsLimit: setting({ flag: 'pod-max-pids', field: 'podPidsLimit', type: int64, pointer: true, default: -1, normalize: (n) => (n < 0 ? -1 : n), status: 'applied', help: 'Most processes one pod may have (-1: no own limit)' }),
  evictionHard: setting({ flag: 'eviction-hard', field: 'evictionHard', type: stringMap('<'), default: DEFAULT_EVICTION_HARD, status: 'not-implemented', help: 'Thresholds at which the kubelet evicts pods' }),
  failSwapOn: setting({ flag: 'fail-swap-on', field: 'failSwapOn', type: bool, pointer: true, default: true, status: 'applied', help: 'Refuse to start while swap is on' }),
  featureGates: setting({ flag: 'feature-gates', field: 'featureGates', type: boolMap, default: {}, status: 'not-implemented', help: 'Kubernetes feature gates (Name=true|false,...)' }),

  // Logging
  verbosity: setting({ flag: 'v', shorthand: 'v', field: 'logging.verbosity', type: uint32, default: 0, status: 'applied', help: 'Log verbosity (0-10)' }),
  loggingFormat: setting({ flag: 'logging-format', field: 'logging.format', type: str, default: 'text', validate: check.oneOf('text', 'json'), status: 'applied', help: 'text (klog) or json' }),
};

// TypeScript shapes of the CRI runtime.v1 messages bootlet uses (field names in camelCase as
// @grpc/proto-loader gives them; int64 as number: nanosecond timestamps lose sub-microsecond
// precision, which nothing here needs). Only what bootlet sends or reads is declared.

export type KeyValueMap = Record<string, string>;

export enum NamespaceMode {
  POD = 0,
  CONTAINER = 1,
  NODE = 2,
  TARGET = 3,
}

export enum PodSandboxState {
  SANDBOX_READY = 0,
  SANDBOX_NOTREADY = 1,
}

export enum ContainerState {
  CONTAINER_CREATED = 0,
  CONTAINER_RUNNING = 1,
  CONTAINER_EXITED = 2,
  CONTAINER_UNKNOWN = 3,
}

export enum MountPropagation {
  PROPAGATION_PRIVATE = 0,
  PROPAGATION_HOST_TO_CONTAINER = 1,
  PROPAGATION_BIDIRECTIONAL = 2,
}

export enum Protocol {
  TCP = 0,
  UDP = 1,
  SCTP = 2,
}

export enum ContainerEventType {
  CONTAINER_CREATED_EVENT = 0,
  CONTAINER_STARTED_EVENT = 1,
  CONTAINER_STOPPED_EVENT = 2,
  CONTAINER_DELETED_EVENT = 3,
}

export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export interface RuntimeStatus {
  conditions: RuntimeCondition[];
}

export enum CgroupDriver {
  SYSTEMD = 0,
  CGROUPFS = 1,
}

export interface RuntimeConfigResponse {
  linux?: { cgroupDriver: CgroupDriver } | null;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface DNSConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

export interface PortMapping {
  protocol: Protocol;
  containerPort: number;
  hostPort: number;
  hostIp: string;
}

export interface NamespaceOption {
  network: NamespaceMode;
  pid: NamespaceMode;
  ipc: NamespaceMode;
  targetId?: string;
}

export interface Int64Value {
  value: number;
}

export interface SecurityProfile {
  /** 0 RuntimeDefault, 1 Unconfined, 2 Localhost */
  profileType: number;
  localhostRef: string;
}

export interface LinuxSandboxSecurityContext {
  namespaceOptions?: NamespaceOption;
  runAsUser?: Int64Value;
  runAsGroup?: Int64Value;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  privileged?: boolean;
  seccomp?: SecurityProfile;
}

export interface LinuxPodSandboxConfig {
  cgroupParent?: string;
  securityContext?: LinuxSandboxSecurityContext;
  sysctls?: KeyValueMap;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname: string;
  logDirectory: string;
  dnsConfig?: DNSConfig;
  portMappings: PortMapping[];
  labels: KeyValueMap;
  annotations: KeyValueMap;
  linux?: LinuxPodSandboxConfig;
}

export interface PodSandboxNetworkStatus {
  ip: string;
  additionalIps: { ip: string }[];
}

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: number;
  network?: PodSandboxNetworkStatus;
  labels: KeyValueMap;
  annotations: KeyValueMap;
  runtimeHandler: string;
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: number;
  labels: KeyValueMap;
  annotations: KeyValueMap;
  runtimeHandler: string;
}

export interface PodSandboxFilter {
  id?: string;
  state?: { state: PodSandboxState };
  labelSelector?: KeyValueMap;
}

export interface ImageSpec {
  image: string;
  annotations?: KeyValueMap;
  userSpecifiedImage?: string;
  runtimeHandler?: string;
}

export interface KeyValue {
  key: string;
  value: string;
}

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  selinuxRelabel?: boolean;
  propagation?: MountPropagation;
}

export interface Capability {
  addCapabilities: string[];
  dropCapabilities: string[];
}

export interface LinuxContainerResources {
  cpuPeriod?: number;
  cpuQuota?: number;
  cpuShares?: number;
  memoryLimitInBytes?: number;
  oomScoreAdj?: number;
}

export interface LinuxContainerSecurityContext {
  capabilities?: Capability;
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  runAsUser?: Int64Value;
  runAsGroup?: Int64Value;
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  noNewPrivs?: boolean;
  maskedPaths?: string[];
  readonlyPaths?: string[];
  seccomp?: SecurityProfile;
}

export interface LinuxContainerConfig {
  resources?: LinuxContainerResources;
  securityContext?: LinuxContainerSecurityContext;
}

export interface ContainerMetadata {
  name: string;
  attempt: number;
}

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: ImageSpec;
  command: string[];
  args: string[];
  workingDir: string;
  envs: KeyValue[];
  mounts: Mount[];
  labels: KeyValueMap;
  annotations: KeyValueMap;
  logPath: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: LinuxContainerConfig;
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata;
  image: ImageSpec;
  imageRef: string;
  state: ContainerState;
  createdAt: number;
  labels: KeyValueMap;
  annotations: KeyValueMap;
}

export interface ContainerFilter {
  id?: string;
  state?: { state: ContainerState };
  podSandboxId?: string;
  labelSelector?: KeyValueMap;
}

export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  image: ImageSpec;
  imageRef: string;
  reason: string;
  message: string;
  labels: KeyValueMap;
  annotations: KeyValueMap;
  mounts: Mount[];
  logPath: string;
}

export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

export interface ContainerEventResponse {
  containerId: string;
  containerEventType: ContainerEventType;
  createdAt: number;
  podSandboxStatus?: PodSandboxStatus;
  containersStatuses: ContainerStatus[];
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  uid?: Int64Value;
  username: string;
  pinned: boolean;
}

export interface ExecRequest {
  containerId: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

export interface AttachRequest {
  containerId: string;
  stdin: boolean;
  tty: boolean;
  stdout: boolean;
  stderr: boolean;
}

/** A wrapped uint64: absent (null) means "not reported", unlike 0. */
export interface UInt64Value {
  value: number;
}

type Maybe<T> = T | null | undefined;

export interface CpuUsage {
  /** Nanoseconds since the epoch. */
  timestamp: number;
  usageCoreNanoSeconds?: Maybe<UInt64Value>;
  usageNanoCores?: Maybe<UInt64Value>;
}

export interface MemoryUsage {
  timestamp: number;
  workingSetBytes?: Maybe<UInt64Value>;
  availableBytes?: Maybe<UInt64Value>;
  usageBytes?: Maybe<UInt64Value>;
  rssBytes?: Maybe<UInt64Value>;
  pageFaults?: Maybe<UInt64Value>;
  majorPageFaults?: Maybe<UInt64Value>;
}

export interface FilesystemUsage {
  timestamp: number;
  fsId?: Maybe<{ mountpoint: string }>;
  usedBytes?: Maybe<UInt64Value>;
  inodesUsed?: Maybe<UInt64Value>;
}

export interface ContainerStats {
  attributes?: Maybe<{ id: string; metadata?: Maybe<ContainerMetadata>; labels: KeyValueMap; annotations: KeyValueMap }>;
  cpu?: Maybe<CpuUsage>;
  memory?: Maybe<MemoryUsage>;
  writableLayer?: Maybe<FilesystemUsage>;
}

export interface NetworkInterfaceUsage {
  name: string;
  rxBytes?: Maybe<UInt64Value>;
  rxErrors?: Maybe<UInt64Value>;
  txBytes?: Maybe<UInt64Value>;
  txErrors?: Maybe<UInt64Value>;
}

export interface PodSandboxStats {
  attributes?: Maybe<{ id: string; metadata?: Maybe<PodSandboxMetadata>; labels: KeyValueMap; annotations: KeyValueMap }>;
  linux?: Maybe<{
    cpu?: Maybe<CpuUsage>;
    memory?: Maybe<MemoryUsage>;
    network?: Maybe<{ timestamp: number; defaultInterface?: Maybe<NetworkInterfaceUsage>; interfaces: NetworkInterfaceUsage[] }>;
    process?: Maybe<{ timestamp: number; processCount?: Maybe<UInt64Value> }>;
    containers: ContainerStats[];
  }>;
}

export interface ContainerStatsFilter {
  id?: string;
  podSandboxId?: string;
  labelSelector?: KeyValueMap;
}

/** Errors from the runtime keep the gRPC status code so callers can treat NOT_FOUND as success. */
export class CriError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly details: string,
  ) {
    super(`CRI ${method} failed: ${details}`);
    this.name = 'CriError';
  }
  get notFound(): boolean {
    return this.code === 5;
  }
  get unimplemented(): boolean {
    return this.code === 12;
  }
}

export interface RuntimeService {
  version(): Promise<VersionResponse>;
  status(): Promise<RuntimeStatus>;
  /** The `info` map of a verbose Status: free-form, runtime-specific (containerd puts its config there). */
  statusInfo(): Promise<Record<string, string>>;
  /** Runtime-wide settings (the cgroup driver); runtimes before CRI v1.28 answer UNIMPLEMENTED. */
  runtimeConfig(): Promise<RuntimeConfigResponse>;
  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string>;
  stopPodSandbox(podSandboxId: string): Promise<void>;
  removePodSandbox(podSandboxId: string): Promise<void>;
  podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus>;
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]>;
  createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string>;
  startContainer(containerId: string): Promise<void>;
  /** Sends the stop signal, waits `timeoutSeconds`, then SIGKILL (done by the runtime). */
  stopContainer(containerId: string, timeoutSeconds: number): Promise<void>;
  removeContainer(containerId: string): Promise<void>;
  listContainers(filter?: ContainerFilter): Promise<Container[]>;
  containerStatus(containerId: string): Promise<ContainerStatus>;
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse>;
  reopenContainerLog(containerId: string): Promise<void>;
  /** The streaming server URL that runs `cmd` (the caller proxies the client to it). */
  exec(req: ExecRequest): Promise<string>;
  attach(req: AttachRequest): Promise<string>;
  portForward(podSandboxId: string, ports: number[]): Promise<string>;
  listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]>;
  /** Runtimes before CRI v1.24 (and some since) answer UNIMPLEMENTED. */
  listPodSandboxStats(filter?: { id?: string; labelSelector?: KeyValueMap }): Promise<PodSandboxStats[]>;
  /** Server stream of container events; `onEnd` is called once when the stream ends or fails. */
  getContainerEvents(
    onEvent: (e: ContainerEventResponse) => void,
    onEnd: (err?: CriError) => void,
  ): { cancel(): void };
  close(): void;
}

export interface ImageService {
  imageStatus(image: ImageSpec): Promise<Image | undefined>;
  pullImage(image: ImageSpec, sandboxConfig?: PodSandboxConfig): Promise<string>;
  listImages(): Promise<Image[]>;
}

// The one import point for CRI types in bootlet. The message and enum types are generated from
// cri.proto at build time (build/gen-proto.mjs, with the decoder's own options from
// decode-options.json), so they cannot drift from what goes on the wire; this file only names them
// and adds what the .proto does not describe: CriError and the service interfaces.
//
// Two shapes of each message, as @grpc/proto-loader has them:
// - CriOutput: what the transport hands out. Every field is present (defaults filled), int64 is a
//   number (nanosecond timestamps lose sub-microsecond precision, which nothing here needs), enums
//   are numbers, and a message field the runtime left out is null.
// - CriInput: what bootlet sends. Every field optional, as proto3 has it; an unset field is the zero
//   value on the wire.
// Messages the runtime returns are named here after their output shape, messages bootlet builds
// after their input shape.
import type { MessageTypeDefinition } from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/types/cri.js';
import { CgroupDriver as CgroupDriverValues } from './generated/types/runtime/v1/CgroupDriver.js';
import { ContainerEventType as ContainerEventTypeValues } from './generated/types/runtime/v1/ContainerEventType.js';
import { ContainerState as ContainerStateValues } from './generated/types/runtime/v1/ContainerState.js';
import { MountPropagation as MountPropagationValues } from './generated/types/runtime/v1/MountPropagation.js';
import { NamespaceMode as NamespaceModeValues } from './generated/types/runtime/v1/NamespaceMode.js';
import { PodSandboxState as PodSandboxStateValues } from './generated/types/runtime/v1/PodSandboxState.js';
import { Protocol as ProtocolValues } from './generated/types/runtime/v1/Protocol.js';
import { _runtime_v1_SecurityProfile_ProfileType as ProfileTypeValues } from './generated/types/runtime/v1/SecurityProfile.js';
import { SupplementalGroupsPolicy as SupplementalGroupsPolicyValues } from './generated/types/runtime/v1/SupplementalGroupsPolicy.js';

type RuntimeV1 = ProtoGrpcType['runtime']['v1'];
export type CriMessageName = {
  [K in keyof RuntimeV1]: RuntimeV1[K] extends MessageTypeDefinition<infer _I, infer _O> ? K : never;
}[keyof RuntimeV1];
export type CriInput<M extends CriMessageName> =
  RuntimeV1[M] extends MessageTypeDefinition<infer I, infer _O> ? I : never;
export type CriOutput<M extends CriMessageName> =
  RuntimeV1[M] extends MessageTypeDefinition<infer _I, infer O> ? O : never;

// Enums: a const object for `ContainerState.CONTAINER_RUNNING`, and the type of its numeric values.
export const ContainerState = ContainerStateValues;
export type ContainerState = (typeof ContainerState)[keyof typeof ContainerState];
export const PodSandboxState = PodSandboxStateValues;
export type PodSandboxState = (typeof PodSandboxState)[keyof typeof PodSandboxState];
export const ContainerEventType = ContainerEventTypeValues;
export type ContainerEventType = (typeof ContainerEventType)[keyof typeof ContainerEventType];
export const NamespaceMode = NamespaceModeValues;
export type NamespaceMode = (typeof NamespaceMode)[keyof typeof NamespaceMode];
export const MountPropagation = MountPropagationValues;
export type MountPropagation = (typeof MountPropagation)[keyof typeof MountPropagation];
export const Protocol = ProtocolValues;
export type Protocol = (typeof Protocol)[keyof typeof Protocol];
export const CgroupDriver = CgroupDriverValues;
export type CgroupDriver = (typeof CgroupDriver)[keyof typeof CgroupDriver];
/** SecurityProfile.ProfileType. */
export const SecurityProfileType = ProfileTypeValues;
export type SecurityProfileType = (typeof SecurityProfileType)[keyof typeof SecurityProfileType];
export const SupplementalGroupsPolicy = SupplementalGroupsPolicyValues;
export type SupplementalGroupsPolicy = (typeof SupplementalGroupsPolicy)[keyof typeof SupplementalGroupsPolicy];

/** The name of an enum value, for messages: `enumName(ContainerState, 1)` is 'CONTAINER_RUNNING'. */
export function enumName<E extends Readonly<Record<string, number>>>(values: E, value: number): string {
  return Object.keys(values).find((k) => values[k] === value) ?? String(value);
}

export type KeyValueMap = Record<string, string>;

// ---- what the runtime returns ----
export type VersionResponse = CriOutput<'VersionResponse'>;
export type RuntimeCondition = CriOutput<'RuntimeCondition'>;
export type RuntimeStatus = CriOutput<'RuntimeStatus'>;
/** A runtime handler (a RuntimeClass's `handler`) and what it supports, from Status. */
export type RuntimeHandler = CriOutput<'RuntimeHandler'>;
/** What the runtime as a whole supports (Status.features; absent before containerd 2.0). */
export type RuntimeFeatures = CriOutput<'RuntimeFeatures'>;
export type RuntimeConfigResponse = CriOutput<'RuntimeConfigResponse'>;
export type PodSandbox = CriOutput<'PodSandbox'>;
export type PodSandboxStatus = CriOutput<'PodSandboxStatus'>;
export type PodSandboxNetworkStatus = CriOutput<'PodSandboxNetworkStatus'>;
export type Container = CriOutput<'Container'>;
export type ContainerStatus = CriOutput<'ContainerStatus'>;
export type ExecSyncResponse = CriOutput<'ExecSyncResponse'>;
export type ContainerEventResponse = CriOutput<'ContainerEventResponse'>;
export type Image = CriOutput<'Image'>;
export type ContainerStats = CriOutput<'ContainerStats'>;
export type PodSandboxStats = CriOutput<'PodSandboxStats'>;
export type CpuUsage = CriOutput<'CpuUsage'>;
export type MemoryUsage = CriOutput<'MemoryUsage'>;
export type FilesystemUsage = CriOutput<'FilesystemUsage'>;
export type ImageFsInfoResponse = CriOutput<'ImageFsInfoResponse'>;
export type NetworkInterfaceUsage = CriOutput<'NetworkInterfaceUsage'>;
/** A wrapped uint64: null means "not reported", unlike 0. */
export type UInt64Value = CriOutput<'UInt64Value'>;
/** Also what bootlet sends: node/volumes builds every mount whole, and ContainerStatus.mounts reads back the same shape. */
export type Mount = CriOutput<'Mount'>;

// ---- what bootlet sends ----
export type PodSandboxConfig = CriInput<'PodSandboxConfig'>;
export type PodSandboxMetadata = CriInput<'PodSandboxMetadata'>;
export type LinuxPodSandboxConfig = CriInput<'LinuxPodSandboxConfig'>;
export type LinuxSandboxSecurityContext = CriInput<'LinuxSandboxSecurityContext'>;
export type DNSConfig = CriInput<'DNSConfig'>;
export type PortMapping = CriInput<'PortMapping'>;
export type NamespaceOption = CriInput<'NamespaceOption'>;
export type UserNamespace = CriInput<'UserNamespace'>;
export type IDMapping = CriInput<'IDMapping'>;
export type SELinuxOption = CriInput<'SELinuxOption'>;
export type SecurityProfile = CriInput<'SecurityProfile'>;
export type Int64Value = CriInput<'Int64Value'>;
export type ContainerConfig = CriInput<'ContainerConfig'>;
export type ContainerMetadata = CriInput<'ContainerMetadata'>;
export type ImageSpec = CriInput<'ImageSpec'>;
export type AuthConfig = CriInput<'AuthConfig'>;
export type KeyValue = CriInput<'KeyValue'>;
export type LinuxContainerConfig = CriInput<'LinuxContainerConfig'>;
export type LinuxContainerResources = CriInput<'LinuxContainerResources'>;
export type LinuxContainerSecurityContext = CriInput<'LinuxContainerSecurityContext'>;
export type Capability = CriInput<'Capability'>;
export type PodSandboxFilter = CriInput<'PodSandboxFilter'>;
export type ContainerFilter = CriInput<'ContainerFilter'>;
export type ContainerStatsFilter = CriInput<'ContainerStatsFilter'>;
export type PodSandboxStatsFilter = CriInput<'PodSandboxStatsFilter'>;
export type ExecRequest = CriInput<'ExecRequest'>;
export type AttachRequest = CriInput<'AttachRequest'>;

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
  /** Status with the runtime handlers and their features (runtimes before CRI v1.30 list none), and the runtime's own features. */
  statusWithHandlers(): Promise<{
    status: RuntimeStatus;
    runtimeHandlers: RuntimeHandler[];
    features?: RuntimeFeatures;
  }>;
  /** The `info` map of a verbose Status: free-form, runtime-specific (containerd puts its config there). */
  statusInfo(): Promise<KeyValueMap>;
  /** Runtime-wide settings (the cgroup driver); runtimes before CRI v1.28 answer UNIMPLEMENTED. */
  runtimeConfig(): Promise<RuntimeConfigResponse>;
  /** The node's pod CIDRs (comma-separated) for the runtime's network plugin (UpdateRuntimeConfig). */
  updateRuntimeConfig(podCidr: string): Promise<void>;
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
  /** Applies new cgroup limits to a running container (in-place resize), synchronously. */
  updateContainerResources(containerId: string, linux: LinuxContainerResources): Promise<void>;
  /** Tells the runtime the sandbox's new total resources (CRI 1.33+; Unimplemented where not served). */
  updatePodSandboxResources(podSandboxId: string, resources: LinuxContainerResources): Promise<void>;
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse>;
  reopenContainerLog(containerId: string): Promise<void>;
  /** The streaming server URL that runs `cmd` (the caller proxies the client to it). */
  exec(req: ExecRequest): Promise<string>;
  attach(req: AttachRequest): Promise<string>;
  portForward(podSandboxId: string, ports: number[]): Promise<string>;
  listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]>;
  /** Runtimes before CRI v1.24 (and some since) answer UNIMPLEMENTED. */
  listPodSandboxStats(filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]>;
  /** Server stream of container events; `onEnd` is called once when the stream ends or fails. */
  getContainerEvents(onEvent: (e: ContainerEventResponse) => void, onEnd: (err?: CriError) => void): { cancel(): void };
  close(): void;
}

export interface ImageService {
  imageStatus(image: ImageSpec): Promise<Image | undefined>;
  /** `auth` unset: an anonymous pull. */
  pullImage(image: ImageSpec, sandboxConfig?: PodSandboxConfig, auth?: AuthConfig): Promise<string>;
  listImages(): Promise<Image[]>;
  /** The runtime's image (and, split, container) filesystems: the kubelet's imagefs. */
  imageFsInfo(): Promise<ImageFsInfoResponse>;
}

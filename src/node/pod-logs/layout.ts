// Where container logs live, as the kubelet lays them out so that crictl and log shippers find them:
//   <podLogsDir>/<namespace>_<name>_<uid>/<container>/<restartCount>.log      (the runtime writes it)
//   <podLogsDir>/.../<restartCount>.log.<UTC stamp>[.gz]                      (rotated by the log manager)
//   <dirname(podLogsDir)>/containers/<name>_<namespace>_<container>-<id>.log  (the legacy symlink)
// The one owner of these names. Every part is checked (pod-dirs' checks) before it goes into a path,
// whether it came from a manifest, a runtime label, the agent's socket or a directory listing.
// kuberuntime imports this file: it already takes volumes and pod dirs from node, which design.md's
// pipeline allows (node is not in the config -> podworkers -> kuberuntime -> cri line); nothing here
// imports kuberuntime, so the dependency stays one way.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { checkContainerName, checkNamespace, checkPodName, checkPodUID } from '../pod-dirs.js';
import { UnsafePathComponentError } from '../volume-errors.js';

/** The pod's identity as far as its log directory goes (a LabelledPod is one). */
export interface PodLogsOwner {
  readonly metadata: { readonly namespace: string; readonly name: string; readonly uid: string };
}

export interface PodLogsDirParts {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** restartCount is an int32; nine digits are more restarts than any container lives to see. */
const LOG_FILE = /^(\d{1,9})\.log$/;
/** A runtime's container id (containerd and CRI-O: 64 hex digits). */
const CONTAINER_ID = /^[0-9A-Za-z]{1,128}$/;

/** `<namespace>_<name>_<uid>`, the pod's directory under podLogsDir, from checked parts. */
export function podLogsDirName(namespace: string, name: string, uid: string): string {
  return `${checkNamespace(namespace)}_${checkPodName(name)}_${checkPodUID(uid)}`;
}

/** The parts of a pod log directory's name; undefined for a name this layout never makes. */
export function parsePodLogsDirName(entry: string): PodLogsDirParts | undefined {
  // None of the three parts may contain "_", so a valid name has exactly three.
  const parts = entry.split('_');
  if (parts.length !== 3) return undefined;
  const [namespace, name, uid] = parts as [string, string, string];
  try {
    podLogsDirName(namespace, name, uid);
  } catch (err) {
    if (err instanceof UnsafePathComponentError) return undefined;
    throw err;
  }
  return { namespace, name, uid };
}

/** The sandbox's log directory (PodSandboxConfig.log_directory). */
export function podLogDirectory(podLogsDir: string, pod: PodLogsOwner): string {
  const m = pod.metadata;
  return path.join(podLogsDir, podLogsDirName(m.namespace, m.name, m.uid));
}

/** One container's directory, where each of its instances has a `<restartCount>.log`. */
export function containerLogDirectory(podLogsDir: string, pod: PodLogsOwner, containerName: string): string {
  return path.join(podLogDirectory(podLogsDir, pod), checkContainerName(containerName));
}

/** Whether a directory entry can be a container's log directory (a valid container name). */
export function isContainerLogDirName(entry: string): boolean {
  try {
    checkContainerName(entry);
    return true;
  } catch {
    return false;
  }
}

function checkRestartCount(restartCount: number): number {
  if (!Number.isSafeInteger(restartCount) || restartCount < 0 || restartCount > 999_999_999)
    throw new UnsafePathComponentError('restart count', String(restartCount));
  return restartCount;
}

/** `<restartCount>.log`. */
export function containerLogFileName(restartCount: number): string {
  return `${checkRestartCount(restartCount)}.log`;
}

/** The restart count a `<n>.log` names; undefined for any other file (rotated ones included). */
export function restartCountOfLogFile(fileName: string): number | undefined {
  const m = LOG_FILE.exec(fileName);
  return m ? Number(m[1]) : undefined;
}

/** ContainerConfig.log_path: relative to the sandbox's log directory, as the kubelet writes it. */
export function containerLogPath(containerName: string, restartCount: number): string {
  return `${checkContainerName(containerName)}/${containerLogFileName(restartCount)}`;
}

/** The restart counts that have a log file in a container's log directory, highest first; none when it is missing. */
export async function restartCountsWithLogs(containerDir: string): Promise<number[]> {
  const names = await readdir(containerDir).catch(() => [] as string[]);
  return names
    .flatMap((n) => {
      const count = restartCountOfLogFile(n);
      return count === undefined ? [] : [count];
    })
    .sort((a, b) => b - a);
}

/** The restart count of the newest log file now, if newer than `than`. */
export async function newerRestart(containerDir: string, than: number): Promise<number | undefined> {
  const newest = (await restartCountsWithLogs(containerDir))[0];
  return newest !== undefined && newest > than ? newest : undefined;
}

/**
 * Whether `logPath` (as the runtime reports it) is a `<n>.log` of this container, exactly where this
 * agent puts it: an absolute, normalised path, no other directory. Names that are not valid never match.
 */
export function isContainerLogPathOf(
  logPath: string,
  podLogsDir: string,
  pod: PodLogsOwner,
  containerName: string,
): boolean {
  let expectedDir: string;
  try {
    expectedDir = containerLogDirectory(podLogsDir, pod, containerName);
  } catch (err) {
    if (err instanceof UnsafePathComponentError) return false;
    throw err;
  }
  return (
    path.resolve(logPath) === logPath &&
    path.dirname(logPath) === expectedDir &&
    restartCountOfLogFile(path.basename(logPath)) !== undefined
  );
}

/** `20261129-174115.123` as the kubelet's rotated-file suffix (a sortable UTC timestamp). */
function rotationStamp(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}`;
}

/** The name a live log is renamed to when it is rotated at `at`. */
export function rotatedLogPath(logPath: string, at: Date): string {
  return `${logPath}.${rotationStamp(at)}`;
}

/** Whether `fileName` is a finished rotation of the live file named `liveName` (plain or gzipped, not a temporary). */
export function isRotatedLogOf(liveName: string, fileName: string): boolean {
  return fileName.startsWith(`${liveName}.`) && !fileName.endsWith('.tmp');
}

/** The kubelet's legacy /var/log/containers, beside podLogsDir. */
export function containerLogLinksDir(podLogsDir: string): string {
  return path.join(path.dirname(podLogsDir), 'containers');
}

function checkContainerId(id: string): string {
  if (!CONTAINER_ID.test(id)) throw new UnsafePathComponentError('container id', id);
  return id;
}

/** `<podName>_<namespace>_<container>-<id>.log`, what log shippers configured for the kubelet read. */
export function containerLogLinkName(pod: PodLogsOwner, containerName: string, containerId: string): string {
  return `${checkPodName(pod.metadata.name)}_${checkNamespace(pod.metadata.namespace)}_${checkContainerName(containerName)}-${checkContainerId(containerId)}.log`;
}

/** Whether a /var/log/containers entry is the link of this container. */
export function isContainerLogLinkOf(entry: string, containerId: string): boolean {
  return entry.endsWith(`-${containerId}.log`);
}

// Finds a static pod's container log file under podLogsDir (the layout of src/node/pod-logs/layout.ts):
// the pod from the running agent's socket when it answers, else from the directory names alone,
// which is all there is before the agent (or the API server) runs. Names from either place are
// checked (by the layout) before they become paths.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import {
  containerLogDirectory,
  containerLogFileName,
  isContainerLogDirName,
  parsePodLogsDirName,
  podLogDirectory,
  restartCountsWithLogs,
} from '../node/pod-logs/layout.js';
import { errorMessage } from '../util/error-message.js';

export class LogLookupError extends Error {}

export interface PodLogRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** Container names from the agent's spec, when the agent answered. */
  readonly containers?: readonly string[];
}

/** Picks POD from the agent's pods: the exact name, or `POD-<node>` when only one pod is so named. */
export function pickAgentPod(pods: readonly Pod[], name: string, namespace: string | undefined): PodLogRef | undefined {
  const inNs = pods.filter((p) => namespace === undefined || p.metadata?.namespace === namespace);
  const exact = inNs.filter((p) => p.metadata?.name === name);
  const matches = exact.length > 0 ? exact : inNs.filter((p) => p.metadata?.name?.startsWith(`${name}-`));
  if (matches.length === 0) return undefined;
  if (matches.length > 1)
    throw new LogLookupError(
      `${matches.length} pods match "${name}": ${matches.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).join(', ')}; name one exactly (and -n NAMESPACE)`,
    );
  const p = matches[0]!;
  const spec = p.spec;
  return {
    namespace: p.metadata?.namespace ?? 'default',
    name: p.metadata?.name ?? name,
    uid: p.metadata?.uid ?? '',
    containers: [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c) => c.name),
  };
}

async function newestMtime(dir: string): Promise<number> {
  let newest = (await stat(dir)).mtimeMs;
  for (const c of await readdir(dir).catch(() => []))
    newest = Math.max(newest, (await stat(join(dir, c)).catch(() => undefined))?.mtimeMs ?? 0);
  return newest;
}

/** Finds POD among the log directories; of several UIDs (earlier versions of the pod), the newest. */
export async function findPodInLogDir(
  podLogsDir: string,
  name: string,
  namespace: string | undefined,
): Promise<PodLogRef | undefined> {
  let entries: string[];
  try {
    entries = await readdir(podLogsDir);
  } catch (err) {
    throw new LogLookupError(`cannot read ${podLogsDir}: ${errorMessage(err)}`);
  }
  const all = entries.flatMap((e) => {
    const p = parsePodLogsDirName(e);
    return p && (namespace === undefined || p.namespace === namespace) ? [{ ...p, dir: e }] : [];
  });
  let matches = all.filter((p) => p.name === name);
  if (matches.length === 0) matches = all.filter((p) => p.name.startsWith(`${name}-`));
  const pods = new Set(matches.map((m) => `${m.namespace}/${m.name}`));
  if (pods.size === 0) return undefined;
  if (pods.size > 1)
    throw new LogLookupError(
      `${pods.size} pods in ${podLogsDir} match "${name}": ${[...pods].join(', ')}; name one exactly (and -n NAMESPACE)`,
    );
  const dated = await Promise.all(matches.map(async (m) => ({ m, at: await newestMtime(join(podLogsDir, m.dir)) })));
  dated.sort((a, b) => b.at - a.at);
  const { namespace: ns, name: podName, uid } = dated[0]!.m;
  return { namespace: ns, name: podName, uid };
}

export interface LogFileChoice {
  readonly container: string;
  readonly file: string;
  /** The pod's log directory, where a newer restart's file will appear. */
  readonly containerDir: string;
  readonly restart: number;
}

/** The log file of the container's current (or previous) instance. */
export async function chooseLogFile(
  podLogsDir: string,
  pod: PodLogRef,
  container: string | undefined,
  previous: boolean,
): Promise<LogFileChoice> {
  const owner = { metadata: pod };
  const podDir = podLogDirectory(podLogsDir, owner);
  const present = (await readdir(podDir).catch(() => [] as string[])).filter(isContainerLogDirName).sort();
  const known = pod.containers && pod.containers.length > 0 ? [...pod.containers] : present;
  let name = container;
  if (name === undefined) {
    if (known.length !== 1)
      throw new LogLookupError(
        `a container name must be specified for pod ${pod.name}, choose one of: [${known.join(' ')}]`,
      );
    name = known[0]!;
  } else if (!known.includes(name)) {
    throw new LogLookupError(
      `container ${name} is not valid for pod ${pod.name}; its containers: [${known.join(' ')}]`,
    );
  }
  const containerDir = containerLogDirectory(podLogsDir, owner, name);
  const restarts = await restartCountsWithLogs(containerDir);
  const restart = previous ? restarts[1] : restarts[0];
  if (restart === undefined) {
    if (previous) throw new LogLookupError(`previous terminated container "${name}" in pod "${pod.name}" not found`);
    throw new LogLookupError(`container "${name}" in pod "${pod.name}" has no log file yet under ${containerDir}`);
  }
  return { container: name, file: join(containerDir, containerLogFileName(restart)), containerDir, restart };
}

// GET /containerLogs/{namespace}/{pod}/{container}: the container's CRI log, with the kubelet's
// query options. Everything that can fail is checked before the 200 is written (an unknown pod or
// container is 404, a bad option 400/422, no such instance 400, as the kubelet answers); then the
// log streams until it is done, the client leaves, or (follow) the container stops or is removed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FileHandle } from 'node:fs/promises';
import type { Logger } from '../../log/logger.js';
import { ContainerState, CriError, type RuntimeService } from '../../cri/cri-types.js';
import { isContainerLogPathOf } from '../../node/pod-logs/layout.js';
import { openLogFile, type ContainerRunState } from '../../node/pod-logs/follow.js';
import type { PodStatusEntry } from '../../status/status-manager.js';
import { LogOptionsError, parseLogOptions } from '../logs/log-options.js';
import { streamContainerLog } from '../logs/log-stream.js';
import type { PodRef } from './kubelet-path.js';
import { findPod, logContainerId, requireContainer } from './pod-lookup.js';
import { HttpError } from './reply.js';
import { errorMessage } from '../../util/error-message.js';

export interface ContainerLogsDeps {
  runtime: RuntimeService;
  podLogsDir: string;
  statuses(): readonly PodStatusEntry[];
  logger: Logger;
}

/** The runtime's log path, accepted only where this agent put it: `<podLogsDir>/<ns>_<name>_<uid>/<container>/<n>.log`. */
export function checkedLogPath(logPath: string, podLogsDir: string, e: PodStatusEntry, container: string): string {
  const owner = {
    metadata: { namespace: e.pod.metadata?.namespace ?? '', name: e.pod.metadata?.name ?? '', uid: e.uid },
  };
  if (!isContainerLogPathOf(logPath, podLogsDir, owner, container)) {
    throw new HttpError(500, `the runtime reports a log path outside this pod's log directory; not reading it`);
  }
  return logPath;
}

async function runState(runtime: RuntimeService, id: string): Promise<ContainerRunState> {
  try {
    return (await runtime.containerStatus(id)).state === ContainerState.CONTAINER_RUNNING ? 'running' : 'stopped';
  } catch (e) {
    if (e instanceof CriError && e.notFound) return 'gone';
    throw e;
  }
}

export async function serveContainerLogs(
  req: IncomingMessage,
  res: ServerResponse,
  ref: PodRef,
  container: string,
  query: URLSearchParams,
  d: ContainerLogsDeps,
): Promise<void> {
  let options;
  try {
    options = parseLogOptions(query, Date.now());
  } catch (e) {
    if (e instanceof LogOptionsError) throw new HttpError(e.statusCode, e.message);
    throw e;
  }
  const entry = findPod(d.statuses(), ref);
  requireContainer(entry, container);
  const id = logContainerId(entry, container, options.previous);
  let logPath: string;
  try {
    logPath = (await d.runtime.containerStatus(id)).logPath;
  } catch (e) {
    if (e instanceof CriError && e.notFound)
      throw new HttpError(400, `container "${container}" in pod "${ref.name}" is not available: it was removed`);
    throw e;
  }
  const path = checkedLogPath(logPath, d.podLogsDir, entry, container);
  let file: FileHandle;
  try {
    file = await openLogFile(path);
  } catch (e) {
    throw new HttpError(
      400,
      `failed to open the log of container "${container}" in pod "${ref.name}": ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`,
    );
  }
  const abort = new AbortController();
  const onClose = (): void => abort.abort();
  res.on('close', onClose);
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  // Headers go out now: a follower with nothing new to read must still see its stream open.
  res.flushHeaders();
  const pod = `${ref.namespace}/${ref.name}`;
  let bad = 0;
  try {
    await streamContainerLog(path, file, {
      options,
      out: res,
      signal: abort.signal,
      containerState: options.follow ? () => runState(d.runtime, id) : undefined,
      onBadLine: () => {
        if (bad++ === 0) d.logger.warn('Skipped a line that is not in the CRI log format', { pod, container, path });
      },
    });
  } catch (e) {
    d.logger.warn('Container log stream failed', { pod, container, err: errorMessage(e) });
    res.destroy();
    return;
  } finally {
    res.off('close', onClose);
  }
  res.end();
}

// The runtime as a user sees it: one poller in the bench process, on its own CRI connection, lists
// the runtime every few milliseconds and keeps when each pod's container was first listed RUNNING
// (and its sandbox first listed). Both sides of a comparison are timed by this same poller, in the
// same run, so neither side's own idea of "started" enters the figure.
import { connectRuntime } from '../src/cri/cri-client.js';
import { ContainerState, type RuntimeService } from '../src/cri/cri-types.js';

/** The label the kubelet (and bootlet) put on every sandbox and container; the bare baseline sets it too. */
export const POD_NAME_LABEL = 'io.kubernetes.pod.name';

export interface RuntimePoller {
  /** performance.now() of the first list that showed a RUNNING container of this pod. */
  running(podName: string, timeoutMs?: number): Promise<number>;
  /** performance.now() of the first list that showed a sandbox of this pod (any state). */
  sandboxListed(podName: string, timeoutMs?: number): Promise<number>;
  /** The earliest sandbox listed at or after `since` whose pod name starts with `prefix`. */
  firstSandboxSince(prefix: string, since: number, timeoutMs?: number): Promise<number>;
  /** Lists made and their mean duration (ms). */
  stats(): { polls: number; meanListMs: number };
  stop(): Promise<void>;
}

export interface PollerOptions {
  /** Pause between the end of one round of lists and the next. */
  intervalMs?: number;
  /** Also list sandboxes (the start-up measure needs them; the pod-start measure does not). */
  sandboxes?: boolean;
}

export async function startRuntimePoller(endpoint: string, opts: PollerOptions = {}): Promise<RuntimePoller> {
  const intervalMs = opts.intervalMs ?? 5;
  const conn = await connectRuntime(endpoint);
  const runtime: RuntimeService = conn.runtime;
  const runningAt = new Map<string, number>();
  const sandboxAt = new Map<string, number>();
  let polls = 0;
  let listMs = 0;
  let stopped = false;
  const changed: (() => void)[] = [];
  const notify = (): void => {
    for (const f of changed.splice(0)) f();
  };

  const loop = (async () => {
    while (!stopped) {
      // The state was read by the runtime between the send and the answer; the send time is
      // used, the same for both sides.
      const sent = performance.now();
      try {
        const [containers, sandboxes] = await Promise.all([
          runtime.listContainers({ state: { state: ContainerState.CONTAINER_RUNNING } }),
          opts.sandboxes ? runtime.listPodSandbox({}) : Promise.resolve([]),
        ]);
        polls++;
        listMs += performance.now() - sent;
        for (const c of containers) {
          const pod = c.labels[POD_NAME_LABEL];
          if (pod !== undefined && !runningAt.has(pod)) runningAt.set(pod, sent);
        }
        for (const s of sandboxes) {
          const pod = s.labels[POD_NAME_LABEL] ?? s.metadata?.name;
          if (pod !== undefined && !sandboxAt.has(pod)) sandboxAt.set(pod, sent);
        }
        notify();
      } catch {
        // A busy runtime may time a list out; the next round lists again.
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();

  const waitFor = (get: () => number | undefined, what: string, timeoutMs: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`poller: ${what} not seen in ${timeoutMs} ms`)), timeoutMs);
      const check = (): void => {
        const t = get();
        if (t !== undefined) {
          clearTimeout(deadline);
          resolve(t);
        } else changed.push(check);
      };
      check();
    });

  return {
    running: (pod, timeoutMs = 120_000) => waitFor(() => runningAt.get(pod), `${pod} running`, timeoutMs),
    sandboxListed: (pod, timeoutMs = 120_000) => waitFor(() => sandboxAt.get(pod), `${pod} sandbox`, timeoutMs),
    firstSandboxSince: (prefix, since, timeoutMs = 120_000) =>
      waitFor(
        () => {
          const times = [...sandboxAt].filter(([pod, t]) => pod.startsWith(prefix) && t >= since).map(([, t]) => t);
          return times.length > 0 ? Math.min(...times) : undefined;
        },
        `a ${prefix}* sandbox`,
        timeoutMs,
      ),
    stats: () => ({ polls, meanListMs: polls > 0 ? listMs / polls : NaN }),
    async stop() {
      stopped = true;
      await loop;
      runtime.close();
    },
  };
}

// What the node should run (the manifest directory, read through bootlet's own loader) against
// what it runs (the CRI), in the three counts the soak is about: lost pods, orphans, duplicates.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ignoredNameReason } from '../src/config/ignore.js';
import { loadManifest } from '../src/config/manifest.js';
import { ContainerState, PodSandboxState, type RuntimeService } from '../src/cri/cri-types.js';
import { CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL } from '../src/k8s/cri-labels.js';
import { listRuntimePods } from '../src/kuberuntime/runtime-pods.js';

export interface ExpectedPod {
  readonly uid: string;
  /** namespace/name as the runtime labels it (name suffixed with the node). */
  readonly key: string;
  readonly containers: readonly string[];
  readonly file: string;
}

/**
 * The pods the manifests in `dir` ask for, keyed by UID: the UID bootlet computes (content, node
 * and path), and the first file by name when two declare one pod, as bootlet decides.
 */
export function expectedPods(dir: string, nodeName: string): Map<string, ExpectedPod> {
  const out = new Map<string, ExpectedPod>();
  const keys = new Set<string>();
  for (const name of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    if (ignoredNameReason(file) !== undefined) continue;
    let bytes: Buffer;
    try {
      if (!fs.statSync(file).isFile()) continue;
      bytes = fs.readFileSync(file);
    } catch {
      continue;
    }
    const r = loadManifest(file, bytes, nodeName, new Date());
    if ('error' in r) continue;
    const key = r.pod.key;
    if (keys.has(key)) continue;
    keys.add(key);
    out.set(r.pod.uid, {
      uid: r.pod.uid,
      key,
      containers: (r.pod.pod.spec?.containers ?? []).map((c) => c.name),
      file,
    });
  }
  return out;
}

export interface Census {
  /** Expected pods without a ready sandbox and every container running. */
  readonly lost: string[];
  /** Runtime pods (any state) that no manifest asks for. */
  readonly orphans: string[];
  /** Of those, the ones the runtime refuses to remove (not counted in orphans). */
  readonly stuck: string[];
  /** Pods with two ready sandboxes, or containers running twice, by name. */
  readonly duplicates: string[];
  readonly converged: boolean;
}

export interface CensusScope {
  /**
   * UIDs of pods the runtime refuses to remove, whatever the agent does (containerd keeps a
   * container whose start was cancelled, "cannot delete running task", containerd/containerd#11037);
   * they are reported apart from orphans.
   */
  readonly stuck?: ReadonlySet<string>;
  /** Only pods of this node (their names end in -<node>): each scenario's agent has a node of its own. */
  readonly node?: string;
}

export async function census(
  runtime: RuntimeService,
  expected: ReadonlyMap<string, ExpectedPod>,
  scope: CensusScope = {},
): Promise<Census> {
  const stuckUids = scope.stuck ?? new Set<string>();
  const all = await listRuntimePods(runtime);
  const pods = new Map([...all].filter(([, p]) => scope.node === undefined || p.name.endsWith(`-${scope.node}`)));
  const lost: string[] = [];
  for (const e of expected.values()) {
    const p = pods.get(e.uid);
    const ready = p?.sandboxes.find((s) => s.state === PodSandboxState.SANDBOX_READY);
    const running =
      ready !== undefined &&
      e.containers.every((n) =>
        p!.containers.some(
          (c) => c.name === n && c.sandboxId === ready.id && c.state === ContainerState.CONTAINER_RUNNING,
        ),
      );
    if (!running) lost.push(e.key);
  }
  const unwanted = [...pods.values()].filter((p) => !expected.has(p.uid));
  const describe = (p: { namespace: string; name: string; uid: string }) =>
    `${p.namespace}/${p.name} ${p.uid.slice(0, 8)}`;
  const stuck = unwanted.filter((p) => stuckUids.has(p.uid) && isStopped(p)).map(describe);
  const orphans = unwanted.filter((p) => !(stuckUids.has(p.uid) && isStopped(p))).map(describe);
  const readyByName = new Map<string, number>();
  const runningByName = new Map<string, number>();
  for (const p of pods.values()) {
    const key = `${p.namespace}/${p.name}`;
    for (const s of p.sandboxes)
      if (s.state === PodSandboxState.SANDBOX_READY) readyByName.set(key, (readyByName.get(key) ?? 0) + 1);
    for (const c of p.containers)
      if (c.state === ContainerState.CONTAINER_RUNNING)
        runningByName.set(`${key}/${c.name}`, (runningByName.get(`${key}/${c.name}`) ?? 0) + 1);
  }
  const duplicates = [...readyByName, ...runningByName].filter(([, n]) => n > 1).map(([k]) => k);
  return {
    lost,
    orphans,
    stuck,
    duplicates,
    converged: lost.length === 0 && orphans.length === 0 && duplicates.length === 0,
  };
}

function isStopped(p: { sandboxes: { state: PodSandboxState }[]; containers: { state: ContainerState }[] }): boolean {
  return (
    p.sandboxes.every((s) => s.state !== PodSandboxState.SANDBOX_READY) &&
    p.containers.every((c) => c.state === ContainerState.CONTAINER_EXITED)
  );
}

export interface Convergence {
  /** Time from the call until the first converged census; undefined when the deadline passed. */
  readonly ms: number | undefined;
  /** The census that ended the wait (the converged one, or the last before the deadline). */
  readonly last: Census;
  /** The last census that was not converged (what took the time). */
  readonly lastPending?: Census;
}

/**
 * Polls until the runtime matches the manifests. `expected` is read again on each poll when it is
 * a function (the directory may still change). Runtime errors (containerd restarting) are retried.
 */
export async function waitConverged(
  runtime: RuntimeService,
  expected: ReadonlyMap<string, ExpectedPod> | (() => ReadonlyMap<string, ExpectedPod>),
  timeoutMs: number,
  scope: CensusScope = {},
  intervalMs = 100,
): Promise<Convergence> {
  const t0 = performance.now();
  let last: Census = { lost: ['(runtime not read yet)'], orphans: [], stuck: [], duplicates: [], converged: false };
  let lastPending: Census | undefined;
  for (;;) {
    try {
      last = await census(runtime, typeof expected === 'function' ? expected() : expected, scope);
      if (last.converged) return { ms: performance.now() - t0, last, lastPending };
      lastPending = last;
    } catch {
      /* the runtime is away: keep polling */
    }
    if (performance.now() - t0 > timeoutMs) return { ms: undefined, last, lastPending };
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Removes every pod (of `node`, when given) through the CRI: after a scenario, and after a failure. */
export async function removeAllPods(runtime: RuntimeService, node?: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const sandboxes = (await runtime.listPodSandbox()).filter(
        (s) => node === undefined || (s.labels[POD_NAME_LABEL] ?? '').endsWith(`-${node}`),
      );
      if (sandboxes.length === 0) return;
      for (const s of sandboxes) {
        await runtime.stopPodSandbox(s.id).catch(() => undefined);
        await runtime.removePodSandbox(s.id).catch(() => undefined);
      }
    } catch {
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/**
 * Looks at the runtime every `intervalMs` for the whole run and remembers every pod seen with two
 * ready sandboxes, or a container running twice. A transient duplicate (a replacement started
 * before its predecessor stopped) is caught here even when the end state is clean. Each scenario's
 * agent has a node name of its own, so incidents are told apart by the pods' names.
 */
export class DuplicateWatch {
  private timer: NodeJS.Timeout | undefined;
  /** "sandbox ns/pod-node" or "container ns/pod-node/container". */
  private readonly seen = new Set<string>();
  private busy = false;

  constructor(
    private readonly runtime: RuntimeService | undefined,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    if (this.runtime) this.timer = setInterval(() => void this.sample(), this.intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Duplicates seen so far among the pods of `node`. */
  incidents(node: string): string[] {
    return [...this.seen].filter((k) => {
      const pod = k.startsWith('sandbox ') ? k : k.slice(0, k.lastIndexOf('/'));
      return pod.endsWith(`-${node}`);
    });
  }

  private async sample(): Promise<void> {
    if (this.busy || !this.runtime) return;
    this.busy = true;
    try {
      const [sandboxes, containers] = await Promise.all([this.runtime.listPodSandbox(), this.runtime.listContainers()]);
      const count = new Map<string, number>();
      const bump = (k: string) => count.set(k, (count.get(k) ?? 0) + 1);
      for (const s of sandboxes)
        if (s.state === PodSandboxState.SANDBOX_READY)
          bump(`sandbox ${s.labels[POD_NAMESPACE_LABEL]}/${s.labels[POD_NAME_LABEL]}`);
      for (const c of containers) {
        if (c.state === ContainerState.CONTAINER_RUNNING)
          bump(
            `container ${c.labels[POD_NAMESPACE_LABEL]}/${c.labels[POD_NAME_LABEL]}/${c.labels[CONTAINER_NAME_LABEL]}`,
          );
      }
      for (const [k, n] of count) {
        if (n < 2) continue;
        if (!this.seen.has(k)) process.stderr.write(`soak: duplicate seen: ${k} ×${n}\n`);
        this.seen.add(k);
      }
    } catch {
      /* the runtime is away (a containerd restart): nothing to see */
    } finally {
      this.busy = false;
    }
  }
}

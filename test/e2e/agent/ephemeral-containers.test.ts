// Ephemeral containers on an API pod (the packaged agent, a real containerd, the fake API server,
// real kubectl, Debian's 1.36): `kubectl debug -i --target` patches pods/<name>/ephemeralcontainers, the agent
// starts the debug container in the running pod without restarting it, in the target's PID
// namespace, reports it in status.ephemeralContainerStatuses, and kubectl's attach through the API
// server to the kubelet API carries the shell's output back.
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import type { FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl, KUBECTL } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';
import { startKubeletApiNode } from './kubelet-api-node.js';

const NODE = 'ephemeral-e2e';
const h = useAgentHarness('ephemeral', NODE);
let api: FakeApiServer;
let kubectl: Kubectl;
let adminKubeconfig: string;
const children: ChildProcess[] = [];

/** A process no other container runs: the debug container's `ps` must show it. */
const MARKER = ['sleep', '86399'];

interface DebugRun {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number>;
}

/** A kubectl child whose output is collected and which is killed at the end of the file. */
function tracked(child: ChildProcessWithoutNullStreams): DebugRun {
  const run: DebugRun = {
    child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.on('close', (code) => resolve(code ?? -1))),
  };
  child.stdout.on('data', (d: Buffer) => (run.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (run.stderr += d.toString()));
  children.push(child);
  return run;
}

/** kubectl with its stdin a pipe the test writes to, for an interactive attach. */
function startDebug(args: string[]): DebugRun {
  const child = spawn(KUBECTL, ['--kubeconfig', adminKubeconfig, '--cache-dir', join(h.dir, 'kube-cache'), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, HOME: h.dir },
  });
  return tracked(child);
}

const shellQuote = (a: string): string => `'${a.replace(/'/g, `'\\''`)}'`;

/**
 * kubectl under a pseudo-terminal (util-linux `script`), its size set first to rows × cols, so that
 * `-t` is honoured and kubectl sends that size over the attach's resize stream. What the test writes
 * goes to the terminal as typed keys; `-e` gives kubectl's exit code.
 */
function startDebugOnTerminal(args: string[], rows: number, cols: number): DebugRun {
  const kubectlArgs = [KUBECTL, '--kubeconfig', adminKubeconfig, '--cache-dir', join(h.dir, 'kube-cache'), ...args]
    .map(shellQuote)
    .join(' ');
  const child = spawn('script', ['-qefc', `stty rows ${rows} cols ${cols}; exec ${kubectlArgs}`, '/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, HOME: h.dir, TERM: 'dumb' },
  });
  return tracked(child);
}

async function runtimePod(): Promise<RuntimePod | undefined> {
  const runtime = h.cri().runtime;
  const listed = [...(await listRuntimePods(runtime)).values()].find(
    (p) => p.name === 'target' && p.namespace === 'default',
  );
  return listed ? readRuntimePod(runtime, listed.uid) : undefined;
}

const runningNamed = (p: RuntimePod | undefined, name: string) =>
  p?.containers.find((c) => c.name === name && c.state === ContainerState.CONTAINER_RUNNING);

beforeAll(async () => {
  ({ api, adminKubeconfig, admin: kubectl } = await startKubeletApiNode(h, { agent: { extraArgs: ['--v=3'] } }));
});

let failed = false;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failed = true;
});

afterAll(async () => {
  if (failed || process.env.SHOW_AGENT_LOG) console.log(`agent log:\n${h.agent().lines.slice(-60).join('\n')}`);
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await api?.dispose();
});

describe('ephemeral containers', () => {
  it('kubectl debug -i --target runs a shell in the target PID namespace and attaches to it, the pod untouched', async () => {
    await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node registered' });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'target', namespace: 'default' },
      spec: {
        nodeName: NODE,
        hostNetwork: true,
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'main', image: TEST_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: MARKER }],
      },
    };
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(pod));
    const before = await waitFor(async () => runningNamed(await runtimePod(), 'main'), {
      timeoutMs: 60_000,
      what: 'the target container running',
    });
    const sandboxBefore = (await runtimePod())!.sandboxes[0]!.id;

    // Every state the API server is told, as a watcher sees it.
    const states = kubectl.start([
      'get',
      'pod',
      'target',
      '--watch',
      '-o',
      'jsonpath={.status.ephemeralContainerStatuses[0].state}{"\\n"}',
    ]);
    children.push(states.child);
    // stdin stays open until the output is back: kubectl debug sets no stdinOnce, so (as with a real
    // kubelet on containerd) closing it ends the attach at once.
    const debug = startDebug([
      'debug',
      '-i',
      'target',
      '--image',
      TEST_IMAGES.busybox,
      '--image-pull-policy=IfNotPresent',
      '--target=main',
      '--container=debugger',
      '--',
      'sh',
    ]);
    debug.child.stdin!.write('echo debug-shell-$((6*7)); ps\n');
    await waitFor(() => debug.stdout.includes(MARKER.join(' ')), {
      timeoutMs: 60_000,
      what: `ps output through the attach (stdout ${JSON.stringify(debug.stdout)}, stderr ${JSON.stringify(debug.stderr)})`,
    });
    debug.child.stdin!.end('exit\n');
    expect(await debug.exited, `kubectl debug: ${debug.stderr}`).toBe(0);
    // The shell's output came back through the attach: the target's process is in its PID namespace.
    expect(debug.stdout).toContain('debug-shell-42');
    expect(debug.stdout).toMatch(new RegExp(`\\s1 \\S+\\s+${MARKER.join(' ')}`));
    expect(
      api.requests.some(
        (r) =>
          r.method === 'PATCH' &&
          r.path === '/api/v1/namespaces/default/pods/target/ephemeralcontainers' &&
          r.status === 200,
      ),
    ).toBe(true);
    expect(api.requests.some((r) => r.path.endsWith('/pods/target/attach') && r.status === 101)).toBe(true);

    const after = await runtimePod();
    const dbg = after?.containers.find((c) => c.name === 'debugger');
    expect(dbg?.meta.type).toBe('ephemeral');
    expect(dbg?.sandboxId).toBe(sandboxBefore);
    // Adding it restarted nothing: the same target container and sandbox.
    expect(runningNamed(after, 'main')?.id).toBe(before.id);
    expect(after?.sandboxes[0]?.id).toBe(sandboxBefore);

    // Once the shell exited its status says so, and it is never started again.
    const reported = await waitFor(
      () => {
        const o = api.pod('default', 'target');
        return o?.status?.ephemeralContainerStatuses?.[0]?.state?.terminated ? o : undefined;
      },
      { timeoutMs: 30_000, what: 'the ephemeral container terminated in the API' },
    );
    expect(reported.status?.ephemeralContainerStatuses?.[0]).toMatchObject({
      name: 'debugger',
      containerID: `containerd://${dbg!.id}`,
      state: { terminated: { exitCode: 0 } },
    });
    expect(reported.status?.phase).toBe('Running');
    expect(reported.status?.containerStatuses?.[0]?.ready).toBe(true);
    // The sync that saw it exit started nothing (the kubelet never restarts an ephemeral container).
    const finishedAt = (await runtimePod())!.containers.find((c) => c.name === 'debugger')!.finishedAt;
    await h
      .agent()
      .waitForLog(
        (r) => r.msg === 'Pod synced' && r.podUID === reported.metadata?.uid && Number(r.ts) * 1e9 > finishedAt,
        'a sync after the ephemeral container exited',
        30_000,
      );
    const debuggers = (await runtimePod())?.containers.filter((c) => c.name === 'debugger') ?? [];
    expect(debuggers.map((c) => c.id)).toEqual([dbg!.id]);
    // While it ran the API said so (kubectl debug waits for that before it attaches), in a status
    // patch of the node's own.
    await waitFor(() => /"terminated"/.test(states.stdout), { timeoutMs: 30_000, what: 'the watcher seeing it end' });
    await states.stop();
    expect(states.stdout).toMatch(/\{"running":\{"startedAt":"[^"]+"\}\}/);
    expect(
      api.requests.some(
        (r) =>
          r.method === 'PATCH' &&
          r.path === '/api/v1/namespaces/default/pods/target/status' &&
          r.user === `system:node:${NODE}` &&
          r.status === 200,
      ),
    ).toBe(true);
  });

  it('the fake refuses to change or remove an ephemeral container, or to target a container the pod lacks', async () => {
    const path = '/api/v1/namespaces/default/pods/target/ephemeralcontainers';
    const current = JSON.parse(await kubectl.ok(['get', '--raw', path])) as Pod;
    expect(current.spec?.ephemeralContainers?.map((c) => c.name)).toEqual(['debugger']);
    const removed = { ...current, spec: { ...current.spec!, ephemeralContainers: [] } };
    const r1 = await kubectl.run(['replace', '--raw', path, '-f', '-'], 30_000, JSON.stringify(removed));
    expect(r1.stderr + r1.stdout).toMatch(/may not be removed/);
    const badTarget = {
      ...current,
      spec: {
        ...current.spec!,
        ephemeralContainers: [
          ...current.spec!.ephemeralContainers!,
          { name: 'd2', image: TEST_IMAGES.busybox, targetContainerName: 'nope' },
        ],
      },
    };
    const r2 = await kubectl.run(['replace', '--raw', path, '-f', '-'], 30_000, JSON.stringify(badTarget));
    expect(r2.stderr + r2.stdout).toMatch(/targetContainerName: Not found: "nope"/);
  });

  it('kubectl debug -it gives the shell a terminal: its stdin is a tty of the size kubectl sent, and the output comes back', async () => {
    const debug = startDebugOnTerminal(
      [
        'debug',
        '-it',
        'target',
        '--image',
        TEST_IMAGES.busybox,
        '--image-pull-policy=IfNotPresent',
        '--target=main',
        '--container=tty-debugger',
        '--',
        'sh',
      ],
      33,
      111,
    );
    const output = (what: string, re: RegExp): Promise<unknown> =>
      waitFor(() => re.test(debug.stdout), { timeoutMs: 60_000, what }).catch((e: unknown) => {
        throw new Error(
          `${(e as Error).message}; output ${JSON.stringify(debug.stdout)}, stderr ${JSON.stringify(debug.stderr)}`,
        );
      });
    // kubectl says this on the terminal just before it attaches.
    await output('kubectl attaching', /try pressing enter/);
    // Typed keys: a terminal sends a carriage return for Enter.
    debug.child.stdin!.write('tty; stty size; echo tty-shell-$((6*7))\r');
    await output("the shell's answer through the attach", /^tty-shell-42\r?$/m);
    expect(debug.stdout).toMatch(/^\/dev\/pts\/\d+\r?$/m);
    // kubectl attach sends the size plus one row and column first, then the size itself, to make the
    // program redraw; `stty size` may run between the two. Either is a size only the resize stream brought.
    expect(debug.stdout).toMatch(/^(33 111|34 112)\r?$/m);
    // The second resize must arrive too: the shell waits for it, 10 s at most, and says what it ends on.
    debug.child.stdin!.write(
      'for i in $(seq 100); do [ "$(stty size)" = "33 111" ] && break; sleep 0.1; done; echo "final-size $(stty size)"\r',
    );
    await output('the final size after both resizes', /^final-size \d+ \d+\r?$/m);
    expect(debug.stdout).toMatch(/^final-size 33 111\r?$/m);
    debug.child.stdin!.write('exit\r');
    expect(await debug.exited, `kubectl debug -it: ${debug.stdout}`).toBe(0);
    const attach = api.requests.filter((r) => r.path.endsWith('/pods/target/attach') && r.status === 101).at(-1)!;
    expect(new URLSearchParams(attach.query).get('tty')).toBe('true');
    const spec = api.pod('default', 'target')!.spec?.ephemeralContainers?.find((c) => c.name === 'tty-debugger');
    expect(spec).toMatchObject({ stdin: true, tty: true, targetContainerName: 'main' });
    const dbg = (await runtimePod())?.containers.find((c) => c.name === 'tty-debugger');
    expect(dbg?.meta.type).toBe('ephemeral');
  });
});

// A pod's runtime handler and user namespace, decided as the kubelet's NamespacesForPod,
// GetOrCreateUserNamespaceMappings and LookupRuntimeHandler decide them, and what CriPodRuntime
// then asks of the runtime: RunPodSandbox's runtime_handler, the sandbox's and every container's
// userns_options, or nothing at all when the pod cannot be isolated as it asks.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  NamespaceMode,
  type ContainerConfig,
  type ImageService,
  type PodSandboxConfig,
  type RuntimeHandler,
  type RuntimeService,
} from '../../../src/cri/cri-types.js';
import { createLogger } from '../../../src/log/logger.js';
import { PodIsolation } from '../../../src/kuberuntime/pod-isolation.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { RuntimeClassNotFoundError, type RuntimeClasses } from '../../../src/kuberuntime/runtime-class.js';
import { UserNamespaceManager } from '../../../src/node/userns/user-namespaces.js';
import { useTmpDir } from '../../support/tmp.js';
import { pod, UID } from './fixtures.js';

const tmp = useTmpDir('pod-isolation');
const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
const BLOCK = 65536;

const handler = (name: string, userNamespaces: boolean, recursiveReadOnlyMounts = false): RuntimeHandler => ({
  name,
  features: { userNamespaces, recursiveReadOnlyMounts },
});
const classes: RuntimeClasses = {
  handlerOf: async (name) => {
    if (name === 'gvisor') return 'runsc';
    if (name === 'userns') return 'crun';
    throw new RuntimeClassNotFoundError(name);
  },
};

let n = 0;
function isolation(
  handlers: RuntimeHandler[] | undefined,
  rootDir = path.join(tmp, `root-${n++}`),
  blocks = 200,
): PodIsolation {
  return new PodIsolation({
    runtimeClasses: classes,
    handlers: { answeredHandlers: async () => handlers },
    userNamespaces: new UserNamespaceManager({
      rootDir,
      range: async () => ({ firstId: BLOCK, length: BLOCK * blocks }),
      logger,
    }),
    logger,
  });
}

describe('pod isolation', () => {
  it("a pod that asks for nothing: the default handler and the node's user namespace (mode NODE)", async () => {
    const iso = await isolation([]).forPod(pod());
    expect(iso.runtimeHandler).toBe('');
    expect(iso.namespaceOptions.usernsOptions).toEqual({ mode: NamespaceMode.NODE, uids: [], gids: [] });
    const explicit = await isolation([]).forPod(pod({ spec: { hostUsers: true } }));
    expect(explicit.namespaceOptions.usernsOptions?.mode).toBe(NamespaceMode.NODE);
  });

  it("hostUsers: false on a handler with user namespaces: mode POD and the pod's block", async () => {
    const iso = await isolation([handler('', true)]).forPod(pod({ spec: { hostUsers: false } }));
    const userns = iso.namespaceOptions.usernsOptions!;
    expect(userns.mode).toBe(NamespaceMode.POD);
    expect(userns.uids).toEqual(userns.gids);
    expect(userns.uids).toHaveLength(1);
    expect(userns.uids![0]).toMatchObject({ containerId: 0, length: BLOCK });
    expect(userns.uids![0]!.hostId! % BLOCK).toBe(0);
  });

  const refused: [string, RuntimeHandler[] | undefined, string | undefined, string][] = [
    [
      'a handler without user namespaces',
      [handler('', false)],
      undefined,
      "can't set `spec.hostUsers: false`, runtime does not support user namespaces",
    ],
    [
      "a RuntimeClass's handler without user namespaces",
      [handler('', true), handler('runsc', false)],
      'gvisor',
      'can\'t set `spec.hostUsers: false`, RuntimeClass handler "runsc" does not support user namespaces',
    ],
    [
      'a runtime that lists no handlers (containerd before 2.0)',
      [],
      undefined,
      'can\'t set `spec.hostUsers: false`, runtime does not support user namespaces: the handler "" is not known',
    ],
    [
      'a runtime that has not answered Status',
      undefined,
      undefined,
      "can't set `spec.hostUsers: false`, runtime does not support user namespaces: runtime handlers are not set",
    ],
  ];
  it.each(refused)('refuses hostUsers: false on %s', async (_name, handlers, runtimeClassName, message) => {
    await expect(isolation(handlers).forPod(pod({ spec: { hostUsers: false, runtimeClassName } }))).rejects.toThrow(
      message,
    );
  });

  it('a RuntimeClass: its handler, or NotFound in the API machinery words', async () => {
    expect((await isolation([]).forPod(pod({ spec: { runtimeClassName: 'gvisor' } }))).runtimeHandler).toBe('runsc');
    await expect(isolation([]).forPod(pod({ spec: { runtimeClassName: 'kata' } }))).rejects.toThrow(
      'runtimeclass.node.k8s.io "kata" not found',
    );
    // Standalone there are no RuntimeClasses: a pod naming one never runs on the default handler.
    const standalone = PodIsolation.withoutRuntimeFeatures(logger);
    await expect(standalone.forPod(pod({ spec: { runtimeClassName: 'gvisor' } }))).rejects.toThrow(
      'runtimeclass.node.k8s.io "gvisor" not found',
    );
  });

  it("recursive read-only mounts: only where the pod's handler lists them", async () => {
    const handlers = [handler('', false, true), handler('runsc', false, false)];
    expect(await isolation(handlers).supportsRecursiveReadOnly(pod())).toBe(true);
    expect(await isolation(handlers).supportsRecursiveReadOnly(pod({ spec: { runtimeClassName: 'gvisor' } }))).toBe(
      false,
    );
    expect(await isolation(handlers).supportsRecursiveReadOnly(pod({ spec: { runtimeClassName: 'kata' } }))).toBe(
      false,
    );
    expect(await isolation([]).supportsRecursiveReadOnly(pod())).toBe(false);
    expect(await isolation(undefined).supportsRecursiveReadOnly(pod())).toBe(false);
  });
});

describe('what the runtime is asked', () => {
  function runtimeOf(iso: PodIsolation | undefined, rootDir = path.join(tmp, `runtime-${n++}`)) {
    const sandboxes: { config: PodSandboxConfig; handler: string | undefined }[] = [];
    const created: { config: ContainerConfig; sandbox: PodSandboxConfig }[] = [];
    const runtime = {
      runPodSandbox: async (config: PodSandboxConfig, handler?: string) => (sandboxes.push({ config, handler }), 'sb'),
      podSandboxStatus: async () => ({ network: { ip: '10.85.0.9', additionalIps: [] } }),
      createContainer: async (_id: string, config: ContainerConfig, sandbox: PodSandboxConfig) => (
        created.push({ config, sandbox }),
        'c1'
      ),
      startContainer: async () => {},
    } as unknown as RuntimeService;
    const images = { imageStatus: async () => ({ id: 'sha256:busybox' }) } as unknown as ImageService;
    const pods = new CriPodRuntime({
      runtime,
      images,
      rootDir,
      podLogsDir: path.join(rootDir, 'logs'),
      nodeName: 'node1',
      nodeIP: '10.0.0.7',
      resolvConf: '',
      logger,
      isolation: iso,
    });
    return { pods, sandboxes, created };
  }

  it("hostUsers: false: the sandbox and the container carry the pod's mappings; RunPodSandbox the handler", async () => {
    const rootDir = path.join(tmp, `shared-${n++}`);
    const { pods, sandboxes, created } = runtimeOf(
      isolation([handler('', true), handler('crun', true)], rootDir),
      rootDir,
    );
    const p = pod({ spec: { hostUsers: false, runtimeClassName: 'userns' } });
    const sb = await pods.createSandbox(p, 0);
    await pods.startContainer(p, sb, p.spec!.containers[0]!, 'container', 0);
    expect(sandboxes[0]!.handler).toBe('crun');
    const userns = sandboxes[0]!.config.linux!.securityContext!.namespaceOptions!.usernsOptions!;
    expect(userns.mode).toBe(NamespaceMode.POD);
    expect(created[0]!.config.linux!.securityContext!.namespaceOptions!.usernsOptions).toEqual(userns);
    expect(created[0]!.sandbox.linux!.securityContext!.namespaceOptions!.usernsOptions).toEqual(userns);
    // The same block is read back from the pod's file for every later container.
    expect(JSON.parse(readUserns(rootDir))).toEqual({
      uidMappings: [{ hostId: userns.uids![0]!.hostId, containerId: 0, length: BLOCK }],
      gidMappings: [{ hostId: userns.uids![0]!.hostId, containerId: 0, length: BLOCK }],
    });
  });

  it('a pod that cannot be isolated as asked makes nothing: no sandbox, no log directory', async () => {
    const { pods, sandboxes } = runtimeOf(isolation([handler('', false)]));
    await expect(pods.createSandbox(pod({ spec: { hostUsers: false } }), 0)).rejects.toThrow(
      "can't set `spec.hostUsers: false`, runtime does not support user namespaces",
    );
    await expect(pods.createSandbox(pod({ spec: { runtimeClassName: 'kata' } }), 0)).rejects.toThrow(
      'runtimeclass.node.k8s.io "kata" not found',
    );
    expect(sandboxes).toEqual([]);
  });

  it('without the isolation part (no runtime features known) a user namespace is refused, not dropped', async () => {
    const { pods, sandboxes } = runtimeOf(undefined);
    await expect(pods.createSandbox(pod({ spec: { hostUsers: false } }), 0)).rejects.toThrow(
      "can't set `spec.hostUsers: false`, runtime does not support user namespaces: runtime handlers are not set",
    );
    expect(sandboxes).toEqual([]);
  });

  it("frees the pod's block when its directories are removed, for another pod", async () => {
    const rootDir = path.join(tmp, `release-${n++}`);
    const iso = isolation([handler('', true)], rootDir, 1);
    const { pods } = runtimeOf(iso, rootDir);
    const first = await pods.createSandbox(pod({ spec: { hostUsers: false } }), 0);
    expect(first.id).toBe('sb');
    const other = pod({ spec: { hostUsers: false } });
    other.metadata.uid = 'another-pod';
    await expect(iso.forPod(other)).rejects.toThrow('could not find an empty slot to allocate a user namespace');
    await pods.cleanupPod(UID, 'kube-system', 'web-node1');
    expect((await iso.forPod(other)).namespaceOptions.usernsOptions!.uids![0]!.hostId).toBe(BLOCK);
  });
});

function readUserns(rootDir: string): string {
  return readFileSync(path.join(rootDir, 'pods', UID, 'userns'), 'utf8');
}

import { describe, expect, it } from 'vitest';
import { buildContainerConfig, type ContainerConfigContext } from '../../../src/kuberuntime/container-config.js';
import { containerLogPath } from '../../../src/node/pod-logs/layout.js';
import { hashContainer, kubeletContainerHash } from '../../../src/kuberuntime/container-hash.js';
import { MountPropagation, NamespaceMode } from '../../../src/cri/cri-types.js';
import { EnvError, containerEnv } from '../../../src/kuberuntime/env.js';
import { expandVars } from '../../../src/kuberuntime/expansion.js';
import { parseContainerMeta } from '../../../src/kuberuntime/labels.js';
import { milliCpuToQuota, milliCpuToShares } from '../../../src/cm/cpu-shares.js';
import { linuxContainerResources, oomScoreAdj } from '../../../src/kuberuntime/resources.js';
import {
  DEFAULT_MASKED_PATHS,
  DEFAULT_READONLY_PATHS,
  RunAsNonRootError,
  verifyRunAsNonRoot,
} from '../../../src/kuberuntime/security-context.js';
import { UID, container, pod } from './fixtures.js';

const GiB = 2 ** 30;

function ctx(over: Partial<ContainerConfigContext> = {}): ContainerConfigContext {
  return {
    restartCount: 0,
    imageRef: 'sha256:abc',
    type: 'container',
    nodeName: 'node1',
    hostIP: '192.0.2.10',
    podIPs: [],
    mounts: [],
    nodeMemoryCapacityBytes: 8 * GiB,
    ...over,
  };
}

describe('expandVars', () => {
  const vars = new Map([
    ['A', 'alpha'],
    ['EMPTY', ''],
  ]);
  const look = (n: string) => vars.get(n);
  it.each([
    ['$(A)', 'alpha'],
    ['x-$(A)-y', 'x-alpha-y'],
    ['$(EMPTY)', ''],
    ['$(MISSING)', '$(MISSING)'],
    ['$$(A)', '$(A)'],
    ['$$$(A)', '$alpha'],
    ['$A', '$A'],
    ['$(A', '$(A'],
    ['a$', 'a$'],
    ['$()', '$()'],
    ['$(A)$(A)', 'alphaalpha'],
  ])('%s -> %s', (input, out) => expect(expandVars(input, look)).toBe(out));
});

describe('containerEnv', () => {
  const envCtx = {
    hostIP: '192.0.2.10',
    podIPs: [] as string[],
    nodeAllocatable: { cpuMillis: 4000, memoryBytes: 8 * GiB, ephemeralStorageBytes: 0 },
  };

  it('expands against earlier variables only; later duplicates win in place', () => {
    const c = container({
      env: [
        { name: 'B', value: '$(A)-b' },
        { name: 'A', value: 'a' },
        { name: 'C', value: '$(A)-c' },
        { name: 'B', value: 'again-$(B)' },
      ],
    });
    expect(containerEnv(pod(), c, envCtx)).toEqual([
      { key: 'B', value: 'again-$(A)-b' },
      { key: 'A', value: 'a' },
      { key: 'C', value: 'a-c' },
    ]);
  });

  it('resolves fieldRefs', () => {
    const p = pod({ spec: { hostNetwork: true, serviceAccountName: 'sa' } });
    const refs = {
      NAME: 'metadata.name',
      NS: 'metadata.namespace',
      UID: 'metadata.uid',
      LABEL: "metadata.labels['component']",
      ANN: "metadata.annotations['kubernetes.io/config.source']",
      NOANN: "metadata.annotations['nope']",
      NODE: 'spec.nodeName',
      SA: 'spec.serviceAccountName',
      HOSTIP: 'status.hostIP',
      HOSTIPS: 'status.hostIPs',
      PODIP: 'status.podIP',
      PODIPS: 'status.podIPs',
    };
    const c = container({
      env: Object.entries(refs).map(([name, fieldPath]) => ({ name, valueFrom: { fieldRef: { fieldPath } } })),
    });
    expect(Object.fromEntries(containerEnv(p, c, envCtx).map((e) => [e.key, e.value]))).toEqual({
      NAME: 'web-node1',
      NS: 'kube-system',
      UID,
      LABEL: 'web',
      ANN: 'file',
      NOANN: '',
      NODE: 'node1',
      SA: 'sa',
      HOSTIP: '192.0.2.10',
      HOSTIPS: '192.0.2.10',
      // a host-network pod's IP is the node's
      PODIP: '192.0.2.10',
      PODIPS: '192.0.2.10',
    });
  });

  it('resolves resourceFieldRefs with divisors, rounding up, node allocatable for missing limits', () => {
    const c = container({
      resources: { requests: { cpu: '250m', memory: '100Mi' }, limits: { cpu: '1500m' } },
      env: [
        { name: 'LCPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
        { name: 'LCPU_M', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
        { name: 'RCPU', valueFrom: { resourceFieldRef: { resource: 'requests.cpu' } } },
        { name: 'RMEM_MI', valueFrom: { resourceFieldRef: { resource: 'requests.memory', divisor: '1Mi' } } },
        { name: 'LMEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } },
      ],
    });
    expect(Object.fromEntries(containerEnv(pod(), c, envCtx).map((e) => [e.key, e.value]))).toEqual({
      LCPU: '2',
      LCPU_M: '1500',
      RCPU: '1',
      RMEM_MI: '100',
      LMEM: String(8 * GiB),
    });
  });

  it('a container started on the node gets allocatable memory (capacity less memory.available<100Mi) for a missing limits.memory', () => {
    const c = container({ env: [{ name: 'LMEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } }] });
    const envs = buildContainerConfig(pod({ spec: { containers: [c] } }), c, ctx()).envs ?? [];
    expect(envs.find((e) => e.key === 'LMEM')?.value).toBe(String(8 * GiB - 100 * 2 ** 20));
  });

  it('refuses ConfigMap / Secret references with the kubelet message', () => {
    const c = container({ env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }] });
    expect(() => containerEnv(pod(), c, envCtx)).toThrow(EnvError);
    expect(() => containerEnv(pod(), c, envCtx)).toThrow(
      "couldn't get configMap kube-system/cm, no kubeClient defined",
    );
  });
});

describe('resources', () => {
  it('cpu shares and quota formulas with their floors', () => {
    expect(milliCpuToShares(0)).toBe(2);
    expect(milliCpuToShares(1)).toBe(2);
    expect(milliCpuToShares(100)).toBe(102);
    expect(milliCpuToShares(1000)).toBe(1024);
    expect(milliCpuToShares(1_000_000)).toBe(262144);
    expect(milliCpuToQuota(0, 100000)).toBe(0);
    expect(milliCpuToQuota(5, 100000)).toBe(1000);
    expect(milliCpuToQuota(250, 100000)).toBe(25000);
  });

  it('maps requests and limits', () => {
    const c = container({
      resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '2', memory: '1Gi' } },
    });
    const p = pod({ spec: { containers: [c] } });
    expect(linuxContainerResources(p, c, 8 * GiB)).toEqual({
      cpuShares: 256,
      cpuPeriod: 100000,
      cpuQuota: 200000,
      memoryLimitInBytes: GiB,
      oomScoreAdj: 1000 - Math.floor((1000 * 256 * 2 ** 20) / (8 * GiB)),
    });
  });

  it('takes shares from the limit when there is no request', () => {
    const c = container({ resources: { limits: { cpu: '500m' } } });
    expect(linuxContainerResources(pod({ spec: { containers: [c] } }), c, GiB).cpuShares).toBe(512);
  });

  it('oom_score_adj by QoS class', () => {
    const guaranteed = container({
      resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
    });
    const burstableSmall = container({ resources: { requests: { cpu: '100m' } } });
    const burstableHuge = container({ resources: { requests: { memory: '100Gi' } } });
    const burstableHalf = container({ resources: { requests: { memory: '4Gi' } } });
    const one = (c: ReturnType<typeof container>, extra = {}) => pod({ spec: { containers: [c], ...extra } });
    expect(oomScoreAdj(one(guaranteed), guaranteed, 8 * GiB)).toBe(-997);
    expect(oomScoreAdj(one(container()), container(), 8 * GiB)).toBe(1000);
    expect(oomScoreAdj(one(burstableSmall), burstableSmall, 8 * GiB)).toBe(999);
    expect(oomScoreAdj(one(burstableHuge), burstableHuge, 8 * GiB)).toBe(3);
    expect(oomScoreAdj(one(burstableHalf), burstableHalf, 8 * GiB)).toBe(500);
    // system-node-critical static pods are protected whatever their QoS; cluster-critical are not
    expect(oomScoreAdj(one(container(), { priorityClassName: 'system-node-critical' }), container(), 8 * GiB)).toBe(
      -997,
    );
    expect(oomScoreAdj(one(container(), { priorityClassName: 'system-cluster-critical' }), container(), 8 * GiB)).toBe(
      1000,
    );
  });
});

describe('buildContainerConfig', () => {
  it('assembles the config the kubelet would send', () => {
    const c = container({
      command: ['/bin/sh', '-c', 'echo $(GREETING) $$(NOT) $(UNKNOWN)'],
      args: ['$(GREETING)'],
      workingDir: '/work',
      env: [{ name: 'GREETING', value: 'hello' }],
      stdin: true,
      tty: true,
    });
    const p = pod({ spec: { hostNetwork: true, containers: [c] } });
    const mounts = [
      {
        containerPath: '/data',
        hostPath: '/srv/data',
        readonly: true,
        selinuxRelabel: false,
        propagation: MountPropagation.PROPAGATION_PRIVATE,
        recursiveReadOnly: false,
        image: null,
        imageSubPath: '',
      },
    ];
    const cfg = buildContainerConfig(p, c, ctx({ restartCount: 3, mounts }));
    expect(cfg.metadata).toEqual({ name: 'app', attempt: 3 });
    expect(cfg.image).toEqual({ image: 'sha256:abc', userSpecifiedImage: 'bootlet.local/busybox:1.36' });
    expect(cfg.command).toEqual(['/bin/sh', '-c', 'echo hello $(NOT) $(UNKNOWN)']);
    expect(cfg.args).toEqual(['hello']);
    expect(cfg.workingDir).toBe('/work');
    expect(cfg.envs).toEqual([{ key: 'GREETING', value: 'hello' }]);
    expect(cfg.mounts).toBe(mounts);
    expect(cfg.logPath).toBe('app/3.log');
    expect(containerLogPath('x', 0)).toBe('x/0.log');
    expect([cfg.stdin, cfg.stdinOnce, cfg.tty]).toEqual([true, false, true]);
    const meta = parseContainerMeta(cfg.labels, cfg.annotations);
    expect(meta).toMatchObject({
      podUid: UID,
      containerName: 'app',
      hash: kubeletContainerHash(c),
      specHash: hashContainer(c),
      restartCount: 3,
      type: 'container',
      terminationGracePeriodSeconds: 30,
    });
  });

  it('carries the restart request it was started under (bootlet.io/restartedAt), read back as meta.restartedAt', () => {
    const cfg = buildContainerConfig(pod(), container(), { ...ctx(), restartedAt: '2026-12-01T12:00:00Z' });
    expect(cfg.annotations?.['bootlet.io/restartedAt']).toBe('2026-12-01T12:00:00Z');
    expect(parseContainerMeta(cfg.labels, cfg.annotations)?.restartedAt).toBe('2026-12-01T12:00:00Z');
    const plain = buildContainerConfig(pod(), container(), ctx());
    expect(plain.annotations?.['bootlet.io/restartedAt']).toBeUndefined();
    expect(parseContainerMeta(plain.labels, plain.annotations)?.restartedAt).toBeUndefined();
  });

  it('security context: defaults for a plain container', () => {
    const sc = buildContainerConfig(pod(), container(), ctx()).linux!.securityContext!;
    expect(sc).toEqual({
      privileged: false,
      readonlyRootfs: false,
      namespaceOptions: { network: NamespaceMode.POD, ipc: NamespaceMode.POD, pid: NamespaceMode.CONTAINER },
      supplementalGroups: [],
      noNewPrivs: false,
      maskedPaths: [...DEFAULT_MASKED_PATHS],
      readonlyPaths: [...DEFAULT_READONLY_PATHS],
      seccomp: { profileType: 1, localhostRef: '' },
    });
  });

  it('security context: container settings over pod settings', () => {
    const c = container({
      securityContext: {
        runAsUser: 10,
        capabilities: { add: ['NET_ADMIN', 'SYS_TIME'], drop: ['ALL'] },
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        privileged: true,
        seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/etcd.json' },
        procMount: 'Unmasked',
      },
    });
    const p = pod({
      spec: {
        hostNetwork: true,
        hostPID: true,
        securityContext: {
          runAsUser: 1,
          runAsGroup: 2,
          fsGroup: 3,
          supplementalGroups: [4],
          seccompProfile: { type: 'RuntimeDefault' },
        },
        containers: [c],
      },
    });
    const sc = buildContainerConfig(p, c, ctx({ seccompProfileRoot: '/var/lib/bootlet/seccomp' })).linux!
      .securityContext!;
    expect(sc).toMatchObject({
      privileged: true,
      readonlyRootfs: true,
      noNewPrivs: true,
      runAsUser: { value: 10 },
      runAsGroup: { value: 2 },
      supplementalGroups: [3, 4],
      capabilities: { addCapabilities: ['NET_ADMIN', 'SYS_TIME'], dropCapabilities: ['ALL'] },
      namespaceOptions: { network: NamespaceMode.NODE, ipc: NamespaceMode.POD, pid: NamespaceMode.NODE },
      seccomp: { profileType: 2, localhostRef: '/var/lib/bootlet/seccomp/profiles/etcd.json' },
      maskedPaths: [],
      readonlyPaths: [],
    });
  });

  it('seccomp: pod profile when the container has none; seccompDefault makes RuntimeDefault', () => {
    const fromPod = buildContainerConfig(
      pod({ spec: { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } } }),
      container(),
      ctx(),
    );
    expect(fromPod.linux?.securityContext?.seccomp?.profileType).toBe(0);
    expect(
      buildContainerConfig(pod(), container(), ctx({ seccompDefault: true })).linux?.securityContext?.seccomp
        ?.profileType,
    ).toBe(0);
  });

  it('image user fills runAsUser when the pod sets none', () => {
    const sc = buildContainerConfig(pod(), container(), ctx({ imageUid: 65534 })).linux!.securityContext!;
    expect(sc.runAsUser).toEqual({ value: 65534 });
  });

  it('verifyRunAsNonRoot', () => {
    const nonRoot = pod({ spec: { securityContext: { runAsNonRoot: true } } });
    expect(() => verifyRunAsNonRoot(nonRoot, container(), 0, '')).toThrow(RunAsNonRootError);
    expect(() => verifyRunAsNonRoot(nonRoot, container(), undefined, 'nobody')).toThrow(/non-numeric user \(nobody\)/);
    expect(() => verifyRunAsNonRoot(nonRoot, container(), 1000, '')).not.toThrow();
    expect(() => verifyRunAsNonRoot(nonRoot, container({ securityContext: { runAsUser: 0 } }), 1000, '')).toThrow(
      /runAsUser breaks non-root policy/,
    );
    expect(() => verifyRunAsNonRoot(pod(), container(), 0, '')).not.toThrow();
  });
});

// AppArmor and SELinux as the kubelet sends them (getAppArmorProfile, convertToRuntimeSELinuxOption).
describe('isolation fields of the security context', () => {
  const sc = (p: ReturnType<typeof pod>, c = p.spec!.containers[0]!) =>
    buildContainerConfig(p, c, ctx()).linux!.securityContext!;

  it.each([
    ['RuntimeDefault', { type: 'RuntimeDefault' }, { profileType: 0, localhostRef: '' }, 'runtime/default'],
    ['Unconfined', { type: 'Unconfined' }, { profileType: 1, localhostRef: '' }, 'unconfined'],
    [
      'Localhost',
      { type: 'Localhost', localhostProfile: 'k8s-apparmor-example-deny-write' },
      { profileType: 2, localhostRef: 'k8s-apparmor-example-deny-write' },
      'localhost/k8s-apparmor-example-deny-write',
    ],
  ])('AppArmor %s: the profile field and the deprecated string', (_n, profile, apparmor, deprecated) => {
    const c = container({ securityContext: { appArmorProfile: profile } });
    const got = sc(pod({ spec: { containers: [c] } }), c);
    expect(got.apparmor).toEqual(apparmor);
    expect(got.apparmorProfile).toBe(deprecated);
  });

  it('AppArmor: the container field, then the deprecated annotation, then the pod field; none when none is set', () => {
    const annotated = pod({
      annotations: { 'container.apparmor.security.beta.kubernetes.io/app': 'localhost/from-annotation' },
      spec: { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'from-pod' } } },
    });
    expect(sc(annotated).apparmor).toEqual({ profileType: 2, localhostRef: 'from-annotation' });
    const podLevel = pod({
      spec: { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'from-pod' } } },
    });
    expect(sc(podLevel).apparmorProfile).toBe('localhost/from-pod');
    const own = container({ securityContext: { appArmorProfile: { type: 'Unconfined' } } });
    expect(sc({ ...annotated, spec: { ...annotated.spec!, containers: [own] } }, own).apparmor?.profileType).toBe(1);
    const none = sc(pod());
    expect(none.apparmor).toBeUndefined();
    expect(none.apparmorProfile).toBeUndefined();
  });

  it("SELinux: the container's options over the pod's, all four parts", () => {
    const podOpts = { user: 'system_u', role: 'system_r', type: 'spc_t', level: 's0:c1,c2' };
    expect(sc(pod({ spec: { securityContext: { seLinuxOptions: podOpts } } })).selinuxOptions).toEqual(podOpts);
    const c = container({ securityContext: { seLinuxOptions: { level: 's0:c3' } } });
    expect(
      sc(pod({ spec: { securityContext: { seLinuxOptions: podOpts }, containers: [c] } }), c).selinuxOptions,
    ).toEqual({ user: '', role: '', type: '', level: 's0:c3' });
    expect(sc(pod()).selinuxOptions).toBeUndefined();
  });

  it('procMount: the default masked and read-only paths unless Unmasked', () => {
    expect(sc(pod()).maskedPaths).toEqual([...DEFAULT_MASKED_PATHS]);
    expect(sc(pod()).readonlyPaths).toEqual([...DEFAULT_READONLY_PATHS]);
    const c = container({ securityContext: { procMount: 'Unmasked' } });
    const unmasked = sc(pod({ spec: { hostUsers: false, containers: [c] } }), c);
    expect(unmasked.maskedPaths).toEqual([]);
    expect(unmasked.readonlyPaths).toEqual([]);
  });
});

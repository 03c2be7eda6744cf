import { describe, expect, it } from 'vitest';
import { commandOutput } from '../../../src/cli/run.js';
import { PROBE_USER_AGENT } from '../../../src/prober/user-agent.js';
import {
  BOOTLET_VERSION,
  KUBERNETES_MINOR_VERSION,
  KUBERNETES_VERSION,
  kubeletVersion,
  kubeletVersionLine,
} from '../../../src/version.js';

/**
 * A semantic version as k8s.io/apimachinery's ParseSemantic takes it (which kubeadm applies to a
 * Node's nodeInfo.kubeletVersion): three numbers, optional pre-release, optional build metadata.
 */
function parseSemantic(
  v: string,
): { major: number; minor: number; patch: number; pre: string; build: string } | undefined {
  const m =
    /^\s*v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\s*$/.exec(
      v,
    );
  return m
    ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), pre: m[4] ?? '', build: m[5] ?? '' }
    : undefined;
}

/** kubeadm preflight runs `kubelet --version` and wants the whole output to be "Kubernetes v<semver>". */
function kubeadmReadsKubeletVersion(output: string): string | undefined {
  return /^\s*Kubernetes v((?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)[-0-9a-zA-Z_.+]*)\s*$/.exec(
    output.trim(),
  )?.[1];
}

describe('version', () => {
  it('reports the implemented Kubernetes version with bootlet as build metadata', () => {
    expect(kubeletVersion('0.1.0')).toBe(`${KUBERNETES_VERSION}+bootlet.0.1.0`);
    expect(kubeletVersion('0.1.0')).toBe('v1.36.0+bootlet.0.1.0');
  });

  it("gives probes the kubelet's User-Agent of that minor", () => {
    expect(KUBERNETES_MINOR_VERSION).toBe('1.36');
    expect(PROBE_USER_AGENT).toBe('kube-probe/1.36');
  });

  it("parses as kubeadm's version checks parse it, with the Kubernetes minor for skew checks", () => {
    for (const b of ['0.1.0', 'dev', '0.2.0-rc.1', '1.0.0+local_build']) {
      const v = parseSemantic(kubeletVersion(b));
      expect(v, kubeletVersion(b)).toMatchObject({ major: 1, minor: 36, patch: 0, pre: '' });
    }
    expect(parseSemantic('v0.1.0')?.minor).toBe(1); // what the Node said before: "too old" for kubeadm
  });

  it('answers --version exactly as the kubelet does, so kubeadm preflight reads it', () => {
    const out = commandOutput({ kind: 'version', format: 'kubelet' })!;
    expect(out).toBe(kubeletVersionLine());
    const read = kubeadmReadsKubeletVersion(out);
    expect(`v${read}`).toBe(kubeletVersion());
    expect(parseSemantic(read!)?.minor).toBe(36);
  });

  it('answers `bootlet version` with its own, the kubelet and the Node versions', () => {
    expect(commandOutput({ kind: 'version', format: 'bootlet' })).toBe(
      `bootlet v${BOOTLET_VERSION} (kubelet v1.36.0, node ${process.version})`,
    );
    expect(JSON.parse(commandOutput({ kind: 'version', format: 'raw' })!)).toMatchObject({
      gitVersion: kubeletVersion(),
      nodeVersion: process.version,
      nodeExecArgv: process.execArgv,
    });
  });
});

/**
 * kubeadm's KubeletVersionCheck (cmd/kubeadm/app/preflight/checks.go, the same in 1.35, 1.36 and 1.37): the
 * kubelet may be at most three minors older than kubeadm (constants.MinimumKubeletVersion =
 * getSkewedKubernetesVersion(-3)) and no newer than the control plane it deploys, which is kubeadm's own minor
 * or the one before (MinimumControlPlaneVersion = getSkewedKubernetesVersion(-1)). The words are kubeadm's.
 */
function kubeadmKubeletVersionCheck(kubeadmMinor: number, controlPlaneMinor: number, kubelet: string): string[] {
  const v = parseSemantic(kubelet)!;
  if (v.major === 1 && v.minor < kubeadmMinor - 3)
    return [`Kubelet version "${kubelet}" is lower than kubadm can support. Please upgrade kubelet`];
  if (v.major > 1 || v.minor > controlPlaneMinor)
    return [
      `the kubelet version is higher than the control plane version. This is not a supported version skew and may lead to a malfunctional cluster. Kubelet version: "${kubelet}" Control plane version: "1.${controlPlaneMinor}.0"`,
    ];
  return [];
}

describe("kubeadm's version skew, against the version bootlet reports", () => {
  const reported = kubeadmReadsKubeletVersion(kubeletVersionLine())!;

  it.each([
    [36, 36],
    [37, 37],
    [37, 36],
  ])('kubeadm 1.%i deploying a 1.%i control plane accepts it', (kubeadm, controlPlane) => {
    expect(kubeadmKubeletVersionCheck(kubeadm, controlPlane, reported)).toEqual([]);
  });

  it.each([
    [35, 35],
    [35, 34],
    [36, 35],
  ])('kubeadm 1.%i deploying a 1.%i control plane refuses it as newer than the control plane', (kubeadm, cp) => {
    expect(kubeadmKubeletVersionCheck(kubeadm, cp, reported)).toEqual([
      expect.stringContaining('the kubelet version is higher than the control plane version'),
    ]);
  });

  it('is three minors from the oldest kubeadm that accepts it (1.39 refuses it as too old)', () => {
    expect(kubeadmKubeletVersionCheck(39, 39, reported)).toEqual([]);
    expect(kubeadmKubeletVersionCheck(40, 40, reported)).toEqual([
      `Kubelet version "${reported}" is lower than kubadm can support. Please upgrade kubelet`,
    ]);
  });
});

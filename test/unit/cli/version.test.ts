import { describe, expect, it } from 'vitest';
import { commandOutput } from '../../../src/cli/run.js';
import { BOOTLET_VERSION, KUBERNETES_VERSION, kubeletVersion, kubeletVersionLine } from '../../../src/version.js';

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
    expect(kubeletVersion('0.1.0')).toBe('v1.34.0+bootlet.0.1.0');
  });

  it("parses as kubeadm's version checks parse it, with the Kubernetes minor for skew checks", () => {
    for (const b of ['0.1.0', 'dev', '0.2.0-rc.1', '1.0.0+local_build']) {
      const v = parseSemantic(kubeletVersion(b));
      expect(v, kubeletVersion(b)).toMatchObject({ major: 1, minor: 34, patch: 0, pre: '' });
    }
    expect(parseSemantic('v0.1.0')?.minor).toBe(1); // what the Node said before: "too old" for kubeadm
  });

  it('answers --version exactly as the kubelet does, so kubeadm preflight reads it', () => {
    const out = commandOutput({ kind: 'version', format: 'kubelet' })!;
    expect(out).toBe(kubeletVersionLine());
    const read = kubeadmReadsKubeletVersion(out);
    expect(`v${read}`).toBe(kubeletVersion());
    expect(parseSemantic(read!)?.minor).toBe(34);
  });

  it('answers `bootlet version` with its own, the kubelet and the Node versions', () => {
    expect(commandOutput({ kind: 'version', format: 'bootlet' })).toBe(
      `bootlet v${BOOTLET_VERSION} (kubelet v1.34.0, node ${process.version})`,
    );
    expect(JSON.parse(commandOutput({ kind: 'version', format: 'raw' })!)).toMatchObject({
      gitVersion: kubeletVersion(),
      nodeVersion: process.version,
      nodeExecArgv: process.execArgv,
    });
  });
});

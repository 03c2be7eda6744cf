// bootlet started exactly as kubeadm's systemd drop-in starts the kubelet, with the files kubeadm
// writes for 1.28-1.34. The exact corpus (branch `fixtures`, test/fixtures/kubeadm/<v>/kubelet/) is
// (test/fixtures/kubeadm).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/argv.js';
import type { BootletOptions } from '../../../src/cli/options.js';
import { resolveOptions } from '../../../src/cli/resolve-options.js';
import { OPTION_SETTINGS } from '../../../src/cli/settings/table.js';
import { expandExecStart, parseServiceUnit } from '../../support/systemd-unit.js';
import { KUBEADM_VERSIONS } from '../../support/kubeadm-versions.js';

const VERSIONS = KUBEADM_VERSIONS;
const fixtures = (v: string): string => {
  const exact = fileURLToPath(new URL(`../../fixtures/kubeadm/${v}/kubelet/`, import.meta.url));
  return exact;
};

/** What kubeadm's files may leave in the one warning: settings other helpers are building. */
const PENDING = new Set(['authentication.x509.clientCAFile']);

function startAsSystemd(
  v: string,
  etcDefaultKubelet?: string,
): { argv: string[]; opts: BootletOptions; deprecations: string[] } {
  const dir = fixtures(v);
  const unit = parseServiceUnit(readFileSync(`${dir}10-kubeadm.conf`, 'utf8'));
  const argv = expandExecStart(unit, (p) => {
    if (p === '/var/lib/kubelet/kubeadm-flags.env') return readFileSync(`${dir}kubeadm-flags.env`, 'utf8');
    if (p === '/etc/default/kubelet') return etcDefaultKubelet;
    return undefined;
  });
  expect(argv[0]).toBe('/usr/bin/kubelet');
  const args = argv.slice(1);
  const cmd = parseCommandLine(args);
  if (cmd.kind !== 'run') throw new Error(cmd.kind);
  expect(cmd.flags.get(OPTION_SETTINGS.configFile)?.value).toBe('/var/lib/kubelet/config.yaml');
  // The same command line, with the config file where the test keeps it.
  const local = parseCommandLine(
    args.map((a) => (a === '--config=/var/lib/kubelet/config.yaml' ? `--config=${dir}config.yaml` : a)),
  );
  if (local.kind !== 'run') throw new Error(local.kind);
  return { argv: args, opts: resolveOptions(local.flags, local.deprecations), deprecations: local.deprecations };
}

describe.each(VERSIONS)("kubeadm %s's drop-in, kubeadm-flags.env and config.yaml", (v) => {
  it('start bootlet with the kubelet defaults for every zero value', () => {
    const { argv, opts } = startAsSystemd(v);
    expect(argv).toEqual(
      expect.arrayContaining([
        '--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf',
        '--kubeconfig=/etc/kubernetes/kubelet.conf',
      ]),
    );
    expect(argv).not.toContain('');
    expect(opts).toMatchObject({
      podManifestPath: '/etc/kubernetes/manifests',
      containerRuntimeEndpoint: expect.stringMatching(/^unix:\/\/\/(var\/)?run\/containerd\/containerd\.sock$/),
      kubeconfig: '/etc/kubernetes/kubelet.conf',
      bootstrapKubeconfig: '/etc/kubernetes/bootstrap-kubelet.conf',
      syncFrequencyMs: 60_000,
      fileCheckFrequencyMs: 20_000,
      runtimeRequestTimeoutMs: 120_000,
      nodeStatusUpdateFrequencyMs: 10_000,
      nodeStatusReportFrequencyMs: 300_000,
      nodeLeaseDurationSeconds: 40,
      clusterDNS: ['10.96.0.10'],
      clusterDomain: 'cluster.local',
      healthzPort: 10248,
      healthzBindAddress: '127.0.0.1',
      readOnlyPort: 0,
      rotateCertificates: true,
      cgroupDriver: 'systemd',
      clientCAFile: '/etc/kubernetes/pki/ca.crt',
      authorizationMode: 'Webhook',
      loggingFormat: 'text',
      verbosity: 0,
      podLogsDir: '/var/log/pods',
    });
    expect(['/etc/resolv.conf', '/run/systemd/resolve/resolv.conf']).toContain(opts.resolvConf);
  });

  it('name in the warning only what another part is still building, and no unknown field', () => {
    const { opts } = startAsSystemd(v);
    expect(opts.notes.unknownFields).toEqual([]);
    expect(opts.notes.duplicateFields).toEqual([]);
    expect(opts.notes.notImplemented.filter((n) => !PENDING.has(n))).toEqual([]);
    expect(new Set(opts.notes.notImplemented).size).toBe(opts.notes.notImplemented.length);
  });

  it("take what an operator puts in /etc/default/kubelet's KUBELET_EXTRA_ARGS", () => {
    const extra =
      'KUBELET_EXTRA_ARGS=--node-ip=10.0.0.9 --node-labels=example.com/pool=cp --fail-swap-on=false --max-pods=250 --cgroup-driver=systemd --v=2\n';
    const { opts } = startAsSystemd(v, extra);
    expect(opts).toMatchObject({
      nodeIP: '10.0.0.9',
      nodeLabels: { 'example.com/pool': 'cp' },
      failSwapOn: false,
      maxPods: 250,
      cgroupDriver: 'systemd',
      verbosity: 2,
    });
  });

  it('take an empty KUBELET_EXTRA_ARGS as no arguments at all', () => {
    expect(startAsSystemd(v, 'KUBELET_EXTRA_ARGS=\n').argv).not.toContain('');
    expect(startAsSystemd(v, 'KUBELET_EXTRA_ARGS=""\n').argv).not.toContain('');
  });
});

describe('kubeadm-flags.env with --pod-infra-container-image', () => {
  it('gets the kubelet deprecation line, not an exit', () => {
    const cmd = parseCommandLine([
      '--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock',
      '--pod-infra-container-image=registry.k8s.io/pause:3.9',
    ]);
    expect(cmd.kind === 'run' && cmd.deprecations).toEqual([
      'Flag --pod-infra-container-image has been deprecated, will be removed in 1.35. Image garbage collector will get sandbox image information from CRI.',
    ]);
  });
});

describe('systemd expansion', () => {
  it('splits $VAR into words, drops an empty one, and keeps ${VAR} as one argument', () => {
    const unit = parseServiceUnit(
      '[Service]\nEnvironment="A=--x=1 --y=2" "EMPTY="\nExecStart=/bin/k $A $EMPTY $UNSET ${A}\n',
    );
    expect(expandExecStart(unit, () => undefined)).toEqual(['/bin/k', '--x=1', '--y=2', '--x=1 --y=2']);
  });

  it('lets environment files override Environment= and later files override earlier ones', () => {
    const unit = parseServiceUnit(
      'Environment=A=unit\nEnvironmentFile=-/one\nEnvironmentFile=-/two\nEnvironmentFile=-/missing\nExecStart=/bin/k $A\n',
    );
    expect(expandExecStart(unit, (p) => ({ '/one': 'A="--one"\n', '/two': '# c\nA=--two\n' })[p])).toEqual([
      '/bin/k',
      '--two',
    ]);
  });
});

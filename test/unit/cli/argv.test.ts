import { describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError, type FlagValues } from '../../../src/cli/argv.js';
import { OPTION_SETTINGS } from '../../../src/cli/settings/table.js';
import { SETTING_BY_FLAG } from '../../../src/cli/settings/table.js';

function run(argv: string[]): { flags: FlagValues; deprecations: string[] } {
  const cmd = parseCommandLine(argv);
  if (cmd.kind !== 'run') throw new Error(`not a run: ${cmd.kind}`);
  return cmd;
}

const value = (argv: string[], flag: string): unknown => run(argv).flags.get(SETTING_BY_FLAG.get(flag)!)?.value;

describe('command line, as pflag reads it', () => {
  it('takes --flag=value and --flag value, with the value parsed by the setting', () => {
    const { flags } = run([
      '--pod-manifest-path=/m',
      '--container-runtime-endpoint',
      'unix:///x.sock',
      '--sync-frequency=30s',
      '--node-ip',
      '10.0.0.5',
    ]);
    expect(flags.get(OPTION_SETTINGS.podManifestPath)?.value).toBe('/m');
    expect(flags.get(OPTION_SETTINGS.containerRuntimeEndpoint)?.value).toBe('unix:///x.sock');
    expect(flags.get(OPTION_SETTINGS.syncFrequencyMs)?.value).toBe(30_000);
    expect(flags.get(OPTION_SETTINGS.nodeIP)?.value).toBe('10.0.0.5');
  });

  it('a bool flag alone means true; its value only comes with =', () => {
    expect(value(['--register-node'], 'register-node')).toBe(true);
    expect(value(['--register-node=false'], 'register-node')).toBe(false);
    expect(value(['--fail-swap-on=0'], 'fail-swap-on')).toBe(false);
    expect(value(['--fail-swap-on=True'], 'fail-swap-on')).toBe(true);
    // `--register-node false` leaves "false" as a stray argument, as in the kubelet.
    expect(() => parseCommandLine(['--register-node', 'false'])).toThrow(
      'unexpected argument "false" (a bool flag takes its value as --register-node=false)',
    );
  });

  it('takes -v 2, -v=2, -v2 and --v=2', () => {
    for (const argv of [['-v', '2'], ['-v=2'], ['-v2'], ['--v=2'], ['--v', '2']]) expect(value(argv, 'v')).toBe(2);
  });

  it('reads _ in a flag name as -', () => {
    expect(value(['--pod_manifest_path=/m'], 'pod-manifest-path')).toBe('/m');
  });

  it('a repeated flag replaces its value; list and map flags add to it', () => {
    expect(value(['--sync-frequency=10s', '--sync-frequency=20s'], 'sync-frequency')).toBe(20_000);
    expect(value(['--node-labels=a=1', '--node-labels=b=2,a=3'], 'node-labels')).toEqual({ a: '3', b: '2' });
    expect(value(['--cluster-dns=10.0.0.10', '--cluster-dns=10.0.0.11,10.0.0.12'], 'cluster-dns')).toEqual([
      '10.0.0.10',
      '10.0.0.11',
      '10.0.0.12',
    ]);
    expect(value(['--feature-gates=A=true', '--feature-gates=B=false'], 'feature-gates')).toEqual({
      A: true,
      B: false,
    });
    expect(
      value(['--eviction-hard=memory.available<1Gi', '--eviction-hard=nodefs.available<5%'], 'eviction-hard'),
    ).toEqual({ 'memory.available': '1Gi', 'nodefs.available': '5%' });
    expect(
      value(['--register-with-taints=a=b:NoSchedule', '--register-with-taints=c:NoExecute'], 'register-with-taints'),
    ).toEqual([{ key: 'c', effect: 'NoExecute' }]);
  });

  it('takes the next argument as the value whatever it looks like, as pflag does', () => {
    expect(value(['--hostname-override', '--v=2'], 'hostname-override')).toBe('--v=2');
  });

  it('skips empty arguments (an empty variable in the unit)', () => {
    expect(value(['', '--v=3', ''], 'v')).toBe(3);
  });

  it('prints the kubelet deprecation line for a deprecated flag, once', () => {
    const { deprecations } = run([
      '--pod-infra-container-image=registry.k8s.io/pause:3.9',
      '--pod-infra-container-image=x',
    ]);
    expect(deprecations).toEqual([
      'Flag --pod-infra-container-image has been deprecated, will be removed in 1.35. Image garbage collector will get sandbox image information from CRI.',
    ]);
  });

  it('accepts the flags of kubeadm and of a typical /etc/default/kubelet', () => {
    expect(() =>
      run([
        '--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf',
        '--kubeconfig=/etc/kubernetes/kubelet.conf',
        '--config=/var/lib/kubelet/config.yaml',
        '--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock',
        '--pod-infra-container-image=registry.k8s.io/pause:3.9',
        '--node-ip=10.0.0.7',
        '--hostname-override=cp-1',
        '--cloud-provider=external',
        '--node-labels=example.com/pool=cp',
        '--register-with-taints=node-role.kubernetes.io/control-plane:NoSchedule',
        '--fail-swap-on=false',
        '--cgroup-driver=systemd',
        '--max-pods=250',
        '--rotate-certificates',
        '--v=2',
      ]),
    ).not.toThrow();
  });

  it('answers version and help', () => {
    expect(parseCommandLine(['version'])).toEqual({ kind: 'version', format: 'bootlet' });
    expect(parseCommandLine(['--version'])).toEqual({ kind: 'version', format: 'kubelet' });
    expect(parseCommandLine(['--config=/x', '--version'])).toEqual({ kind: 'version', format: 'kubelet' });
    expect(parseCommandLine(['--version=raw'])).toEqual({ kind: 'version', format: 'raw' });
    expect(parseCommandLine(['--version=false', '--v=1']).kind).toBe('run');
    expect(parseCommandLine(['--help'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['-h'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['run', '--v=1']).kind).toBe('run');
  });

  it.each([
    [['--pod-manifest-pth=/x'], 'unknown flag: --pod-manifest-pth'],
    [['-config=/x'], "unknown shorthand flag: 'c' in -config=/x (did you mean --config=/x?)"],
    [
      ['--node-labels=node-role.kubernetes.io/control-plane='],
      'invalid value "node-role.kubernetes.io/control-plane=" for flag --node-labels',
    ],
    [['--register-with-taints=k=v:Sometimes'], 'invalid value "k=v:Sometimes" for flag --register-with-taints'],
    [['--register-node=maybe'], 'invalid value "maybe" for flag --register-node: must be true or false'],
    [['--v=high'], 'invalid value "high" for flag --v: must be an integer'],
    [['--max-pods=1.5'], 'invalid value "1.5" for flag --max-pods: must be an integer'],
    [['--sync-frequency=soon'], 'invalid value "soon" for flag --sync-frequency: invalid duration "soon"'],
    [['--sync-frequency=10'], 'invalid value "10" for flag --sync-frequency: invalid duration "10"'],
    [['--address=10.0.0'], 'invalid value "10.0.0" for flag --address: is not a valid IP address'],
    [['--feature-gates=A'], 'invalid value "A" for flag --feature-gates: missing bool value for A'],
    [['--root-dir'], 'flag needs an argument: --root-dir'],
    [['stray'], 'unexpected argument "stray"'],
    [['--', 'stray'], 'unexpected argument "stray" after "--"'],
  ])('refuses %j with one clear line', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});

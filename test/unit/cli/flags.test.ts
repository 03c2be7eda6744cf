import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../../src/cli/duration.js';
import { parseCommandLine, UsageError } from '../../../src/cli/flags.js';

describe('command line', () => {
  it('takes kubelet flag names in both --flag=value and --flag value forms', () => {
    const cmd = parseCommandLine(['--pod-manifest-path=/m', '--container-runtime-endpoint', 'unix:///x.sock', '--v=3', '--logging-format=json', '--sync-frequency=30s', '--node-ip', '10.0.0.5']);
    expect(cmd).toEqual({
      kind: 'run',
      flags: { podManifestPath: '/m', containerRuntimeEndpoint: 'unix:///x.sock', verbosity: 3, loggingFormat: 'json', syncFrequencyMs: 30_000, nodeIP: '10.0.0.5' },
    });
  });

  it('takes the API server flags', () => {
    const cmd = parseCommandLine(['--kubeconfig=/etc/kubernetes/kubelet.conf', '--node-labels=env=prod,zone=a', '--register-with-taints=dedicated=cp:NoSchedule', '--register-node=false']);
    expect(cmd).toEqual({
      kind: 'run',
      flags: {
        kubeconfig: '/etc/kubernetes/kubelet.conf',
        nodeLabels: { env: 'prod', zone: 'a' },
        registerWithTaints: [{ key: 'dedicated', value: 'cp', effect: 'NoSchedule' }],
        registerNode: false,
      },
    });
  });

  it('answers version and help', () => {
    expect(parseCommandLine(['version'])).toEqual({ kind: 'version' });
    expect(parseCommandLine(['--version'])).toEqual({ kind: 'version' });
    expect(parseCommandLine(['--help'])).toEqual({ kind: 'help' });
  });

  it.each([
    [['--pod-manifest-pth=/x'], 'unknown flag: --pod-manifest-pth'],
    [['--bootstrap-kubeconfig=/x'], 'flag --bootstrap-kubeconfig is a kubelet flag that bootlet does not support yet'],
    [['--cgroup-driver=systemdd'], 'invalid value "systemdd" for flag --cgroup-driver: must be "cgroupfs" or "systemd"'],
    [['--cgroup-root=kubepods'], 'invalid value "kubepods" for flag --cgroup-root: must be an absolute cgroup path'],
    [['--pod-max-pids=-2'], 'invalid value "-2" for flag --pod-max-pids'],
    [['--node-labels=node-role.kubernetes.io/control-plane='], 'invalid value "node-role.kubernetes.io/control-plane=" for flag --node-labels'],
    [['--register-with-taints=k=v:Sometimes'], 'invalid value "k=v:Sometimes" for flag --register-with-taints'],
    [['--register-node=maybe'], 'invalid value "maybe" for flag --register-node: must be true or false'],
    [['--v=high'], 'invalid value "high" for flag --v: must be a non-negative integer'],
    [['--logging-format=xml'], 'invalid value "xml" for flag --logging-format'],
    [['--sync-frequency=soon'], 'invalid value "soon" for flag --sync-frequency'],
    [['--node-ip=10.0.0'], 'invalid value "10.0.0" for flag --node-ip: not an IP address'],
    [['--root-dir'], 'flag needs an argument: --root-dir'],
    [['stray'], 'unexpected argument "stray"'],
  ])('refuses %j with a clear message', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});

describe('durations', () => {
  it.each([
    ['20s', 20_000],
    ['1m30s', 90_000],
    ['500ms', 500],
    ['1h', 3_600_000],
    ['0', 0],
    ['1.5s', 1500],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', '10', '5 minutes', 's'])('refuses %j', (text) => expect(() => parseDuration(text)).toThrow('invalid duration'));
});

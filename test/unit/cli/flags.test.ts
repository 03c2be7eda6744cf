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

  it('takes the TLS bootstrap flags as kubeadm\'s drop-in passes them, and a bare boolean as pflag does', () => {
    const cmd = parseCommandLine(['--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf', '--kubeconfig=/etc/kubernetes/kubelet.conf', '--rotate-certificates', '--cert-dir', '/var/lib/kubelet/pki']);
    expect(cmd).toEqual({
      kind: 'run',
      flags: { bootstrapKubeconfig: '/etc/kubernetes/bootstrap-kubelet.conf', kubeconfig: '/etc/kubernetes/kubelet.conf', rotateCertificates: true, certDir: '/var/lib/kubelet/pki' },
    });
    expect(parseCommandLine(['--rotate-certificates=false'])).toEqual({ kind: 'run', flags: { rotateCertificates: false } });
    expect(() => parseCommandLine(['--rotate-certificates=maybe'])).toThrow('invalid value "maybe" for flag --rotate-certificates: must be true or false');
  });

  it('answers version and help', () => {
    expect(parseCommandLine(['version'])).toEqual({ kind: 'version' });
    expect(parseCommandLine(['--version'])).toEqual({ kind: 'version' });
    expect(parseCommandLine(['--help'])).toEqual({ kind: 'help' });
  });

  it.each([
    [['--pod-manifest-pth=/x'], 'unknown flag: --pod-manifest-pth'],
    [['--cgroup-driver=systemd'], 'flag --cgroup-driver is a kubelet flag that bootlet does not support yet'],
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

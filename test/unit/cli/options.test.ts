import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/argv.js';
import { ConfigFileError } from '../../../src/cli/kubelet-config.js';
import { resolveArgv, useConfigFiles } from './resolve-argv.js';

const { dir, configFile } = useConfigFiles('bootlet-options-');
const resolve = resolveArgv;

describe('options', () => {
  it("uses the kubelet's defaults, and bootlet's where it differs", () => {
    const o = resolve(['--hostname-override', ' CP-1 ']);
    expect(o).toMatchObject({
      podManifestPath: '/etc/kubernetes/manifests',
      containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
      nodeName: 'cp-1',
      rootDir: '/var/lib/kubelet',
      podLogsDir: '/var/log/pods',
      fileCheckFrequencyMs: 20_000,
      syncFrequencyMs: 60_000,
      runtimeRequestTimeoutMs: 120_000,
      nodeStatusUpdateFrequencyMs: 10_000,
      nodeStatusReportFrequencyMs: 300_000,
      loggingFormat: 'text',
      verbosity: 0,
      readOnlyPort: 0,
      healthzPort: 10248,
      resolvConf: '/etc/resolv.conf',
      maxPods: 110,
      rotateCertificates: false,
      cgroupDriver: 'cgroupfs',
      failSwapOn: true,
    });
    expect(o.kubeconfig).toBeUndefined();
    expect(o.bootstrapKubeconfig).toBeUndefined();
    expect(o.notes.notImplemented).toEqual([]);
  });

  it('roots the pod cgroups at "/" when cgroupsPerQOS is on and cgroupRoot is unset or empty, as the kubelet', () => {
    expect(resolve([]).cgroupRoot).toBe('/');
    expect(resolve([`--config=${configFile('cgroupRoot: ""\ncgroupDriver: systemd\n')}`]).cgroupRoot).toBe('/');
    expect(resolve(['--cgroup-root=/custom']).cgroupRoot).toBe('/custom');
    expect(resolve(['--cgroups-per-qos=false']).cgroupRoot).toBe('');
  });

  it('reads the config file and lets flags win over it', () => {
    const f = configFile(
      'staticPodPath: /from/file\nfileCheckFrequency: 5s\nsyncFrequency: 2m\npodLogsDir: /logs\ncontainerRuntimeEndpoint: unix:///file.sock\nlogging:\n  format: json\n  verbosity: 4\n',
    );
    const o = resolve([`--config=${f}`, '--pod-manifest-path=/from/flag', '-v', '1']);
    expect(o).toMatchObject({
      podManifestPath: '/from/flag',
      fileCheckFrequencyMs: 5000,
      syncFrequencyMs: 120_000,
      podLogsDir: '/logs',
      containerRuntimeEndpoint: 'unix:///file.sock',
      loggingFormat: 'json',
      verbosity: 1,
    });
  });

  it('merges --feature-gates into the file key by key, as the kubelet does', () => {
    const f = configFile('featureGates: {A: true, B: true}\n');
    expect(resolve([`--config=${f}`, '--feature-gates=B=false,C=true']).featureGates).toEqual({
      A: true,
      B: false,
      C: true,
    });
  });

  it('exposes the settings other parts build on: bootstrap kubeconfig, certificate rotation, cgroups, DNS', () => {
    const f = configFile(
      'rotateCertificates: true\ncgroupDriver: systemd\nclusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\nresolvConf: ""\n',
    );
    const o = resolve([`--config=${f}`, '--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf']);
    expect(o).toMatchObject({
      bootstrapKubeconfig: '/etc/kubernetes/bootstrap-kubelet.conf',
      rotateCertificates: true,
      cgroupDriver: 'systemd',
      clusterDNS: ['10.96.0.10'],
      clusterDomain: 'cluster.local',
      resolvConf: '',
    });
  });

  it('reports at the update frequency when a file sets only that (kubelet defaulting)', () => {
    expect(resolve([`--config=${configFile('nodeStatusUpdateFrequency: 4s\n')}`]).nodeStatusReportFrequencyMs).toBe(
      4000,
    );
    expect(
      resolve([`--config=${configFile('nodeStatusUpdateFrequency: 4s\nnodeStatusReportFrequency: 1m\n')}`])
        .nodeStatusReportFrequencyMs,
    ).toBe(60_000);
    expect(resolve(['--node-status-update-frequency=4s']).nodeStatusReportFrequencyMs).toBe(300_000);
  });

  it('turns a negative podPidsLimit into -1, as the kubelet does', () => {
    expect(resolve([`--config=${configFile('podPidsLimit: -5\n')}`]).podPidsLimit).toBe(-1);
  });

  it('skips clusterDNS entries that are not IPs, saying so', () => {
    const o = resolve(['--cluster-dns=10.96.0.10,dns.example']);
    expect(o.clusterDNS).toEqual(['10.96.0.10']);
    expect(o.notes.skipped).toEqual(['clusterDNS "dns.example" is not an IP address']);
  });

  it('names what it does not implement only when set to something other than the default', () => {
    const f = configFile(
      'cgroupDriver: systemd\ncpuManagerPolicy: static\nenableServer: true\nport: 10250\nauthorization: {mode: Webhook}\n',
    );
    const o = resolve([
      `--config=${f}`,
      '--cloud-provider=external',
      '--cert-dir=/var/lib/kubelet/pki',
      '--iptables-drop-bit=3',
    ]);
    expect(o.notes.notImplemented).toEqual(['--cloud-provider', 'cpuManagerPolicy']);
  });

  it('passes on unknown fields and deprecations for the start-up log', () => {
    const o = resolve([`--config=${configFile('fooBar: 1\n')}`, '--pod-infra-container-image=pause']);
    expect(o.notes.unknownFields).toEqual(['fooBar']);
    expect(o.notes.deprecations).toHaveLength(1);
  });

  it('takes --node-ip as the kubelet does, with dual-stack pairs and :: / 0.0.0.0 meaning "detect"', () => {
    expect(resolve(['--node-ip=10.0.0.5,fd00::5']).nodeIP).toBe('10.0.0.5');
    expect(resolve(['--node-ip=0.0.0.0']).nodeIP).not.toBe('0.0.0.0');
    expect(() => resolve(['--node-ip=10.0.0.5,10.0.0.6'])).toThrow(
      'invalid value "10.0.0.5,10.0.0.6" for flag --node-ip: takes at most one IPv4 and one IPv6 address',
    );
  });

  it("applies --tls-cipher-suites and tlsCipherSuites by Go's names and refuses an unknown one at start in the kubelet's words", () => {
    expect(resolve(['--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256']).tlsCipherSuites).toEqual([
      'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
    ]);
    expect(() => resolve(['--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,RC4-SHA'])).toThrow(
      'invalid value "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,RC4-SHA" for flag --tls-cipher-suites: Cipher suite RC4-SHA not supported or doesn\'t exist',
    );
    const f = configFile('tlsCipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_FAKE]\n');
    expect(() => resolve([`--config=${f}`])).toThrow(
      "tlsCipherSuites: Cipher suite TLS_FAKE not supported or doesn't exist",
    );
  });

  it('takes an empty --hostname-override or --node-ip as unset, as the kubelet does', () => {
    const o = resolve(['--hostname-override=', '--node-ip=']);
    expect(o.nodeName).toBe(hostname().trim().toLowerCase());
    expect(o.nodeIP).not.toBe('');
  });

  it.each([
    [['--pod-manifest-path='], UsageError, 'invalid value "" for flag --pod-manifest-path: must not be empty'],
    [['--sync-frequency=0s'], UsageError, 'invalid value "0s" for flag --sync-frequency: must be greater than 0'],
    [
      ['--healthz-port=70000'],
      UsageError,
      'invalid value "70000" for flag --healthz-port: must be between 0 and 65535',
    ],
    [['--port=0'], UsageError, 'invalid value "0" for flag --port: must be between 1 and 65535'],
    [
      ['--cgroup-driver=systemdd'],
      UsageError,
      'invalid value "systemdd" for flag --cgroup-driver: must be one of "cgroupfs", "systemd"',
    ],
    [
      ['--container-runtime-endpoint='],
      UsageError,
      'invalid value "" for flag --container-runtime-endpoint: must not be empty',
    ],
    [['--runonce'], UsageError, 'runOnce mode has been deprecated'],
    [
      ['--allowed-unsafe-sysctls=kernel.msg*,vm.swappiness'],
      UsageError,
      'invalid value "kernel.msg*,vm.swappiness" for flag --allowed-unsafe-sysctls: the sysctl "vm.swappiness" are not known to be namespaced',
    ],
  ])('refuses %j naming the flag', (argv, E, message) => {
    expect(() => resolve(argv)).toThrow(E);
    expect(() => resolve(argv)).toThrow(message);
  });

  it.each([
    ['\nsyncFrequency: -1s\n', ':4: syncFrequency: must be greater than 0'],
    ['containerLogMonitorInterval: 0s\n', ':3: containerLogMonitorInterval: must be at least 3s'],
    ['containerLogMaxFiles: 1\n', ':3: containerLogMaxFiles: must be greater than 1'],
    ['podLogsDir: /var/log/pods/\n', ':3: podLogsDir: pod logs path "/var/log/pods/" must be normalized'],
    ['logging: {format: xml}\n', ':3: logging.format: must be one of "text", "json"'],
    ['authorization: {mode: Maybe}\n', ':3: authorization.mode: must be one of "AlwaysAllow", "Webhook"'],
    ['nodeLeaseDurationSeconds: -1\n', ':3: nodeLeaseDurationSeconds: must be greater than 0'],
    [
      'allowedUnsafeSysctls: [kernel.msg*, "fs.*"]\n',
      ':3: allowedUnsafeSysctls: the sysctls "fs.*" are not known to be namespaced',
    ],
  ])('refuses a bad value in the file naming file, line and field (%#)', (body, message) => {
    const f = configFile(body);
    expect(() => resolve([`--config=${f}`])).toThrow(ConfigFileError);
    expect(() => resolve([`--config=${f}`])).toThrow(f + message);
  });

  it('takes allowedUnsafeSysctls from the flag and the file', () => {
    expect(resolve(['--allowed-unsafe-sysctls=kernel.msg*,net.core.somaxconn']).allowedUnsafeSysctls).toEqual([
      'kernel.msg*',
      'net.core.somaxconn',
    ]);
    expect(resolve([`--config=${configFile('allowedUnsafeSysctls: [kernel.shm*]\n')}`]).allowedUnsafeSysctls).toEqual([
      'kernel.shm*',
    ]);
  });

  it('says when the config file cannot be read', () => {
    expect(() => resolve([`--config=${join(dir, 'missing.yaml')}`])).toThrow(
      `cannot read config file ${join(dir, 'missing.yaml')}: no such file`,
    );
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigFileError, parseKubeletConfig } from '../../../src/cli/kubelet-config.js';
import { resolveOptions } from '../../../src/cli/options.js';

const dir = mkdtempSync(join(tmpdir(), 'bootlet-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(body: string): string {
  const f = join(dir, `c${Math.random().toString(16).slice(2)}.yaml`);
  writeFileSync(f, body);
  return f;
}

const header = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

describe('options', () => {
  it('uses the kubelet defaults', () => {
    const o = resolveOptions({ hostnameOverride: ' CP-1 ' });
    expect(o).toMatchObject({
      podManifestPath: '/etc/kubernetes/manifests',
      containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
      nodeName: 'cp-1',
      rootDir: '/var/lib/kubelet',
      podLogsDir: '/var/log/pods',
      fileCheckFrequencyMs: 20_000,
      syncFrequencyMs: 60_000,
      loggingFormat: 'text',
      verbosity: 0,
    });
  });

  it('reads the config file and lets flags win over it', () => {
    const f = configFile(header + 'staticPodPath: /from/file\nfileCheckFrequency: 5s\nsyncFrequency: 2m\npodLogsDir: /logs\ncontainerRuntimeEndpoint: unix:///file.sock\nlogging:\n  format: json\n  verbosity: 4\n');
    const o = resolveOptions({ config: f, podManifestPath: '/from/flag', verbosity: 1 });
    expect(o.podManifestPath).toBe('/from/flag');
    expect(o.fileCheckFrequencyMs).toBe(5000);
    expect(o.syncFrequencyMs).toBe(120_000);
    expect(o.podLogsDir).toBe('/logs');
    expect(o.containerRuntimeEndpoint).toBe('unix:///file.sock');
    expect(o.loggingFormat).toBe('json');
    expect(o.verbosity).toBe(1);
  });

  it('reads the container log rotation settings', () => {
    const r = parseKubeletConfig('k.yaml', header + 'containerLogMaxSize: 5Mi\ncontainerLogMaxFiles: 3\ncontainerLogMonitorInterval: 30s\n');
    expect(r.values).toMatchObject({ containerLogMaxSizeBytes: 5 * 1024 * 1024, containerLogMaxFiles: 3, containerLogMonitorIntervalMs: 30_000 });
    expect(() => parseKubeletConfig('k.yaml', header + 'containerLogMaxSize: lots\n')).toThrow('containerLogMaxSize: "lots" is not a valid quantity');
    expect(() => parseKubeletConfig('k.yaml', header + 'containerLogMaxFiles: 1\n')).toThrow('containerLogMaxFiles: must be an integer of at least 2');
  });

  it('names the fields of a kubeadm-written file that it ignores', () => {
    const r = parseKubeletConfig('k.yaml', header + 'staticPodPath: /etc/kubernetes/manifests\ncgroupDriver: systemd\nclusterDNS: [10.96.0.10]\nrotateCertificates: true\n');
    expect(r.values.staticPodPath).toBe('/etc/kubernetes/manifests');
    expect(r.ignored).toEqual(['cgroupDriver', 'clusterDNS']);
  });

  it('rotates client certificates when the config or the flag says so, keeping them under <root-dir>/pki', () => {
    expect(resolveOptions({})).toMatchObject({ rotateCertificates: false, certDir: '/var/lib/kubelet/pki', bootstrapKubeconfig: undefined });
    const f = configFile(header + 'rotateCertificates: true\n');
    expect(resolveOptions({ config: f }).rotateCertificates).toBe(true);
    expect(resolveOptions({ config: f, rotateCertificates: false }).rotateCertificates).toBe(false);
    expect(resolveOptions({ rootDir: '/r', bootstrapKubeconfig: 'boot.conf' })).toMatchObject({ certDir: '/r/pki', bootstrapKubeconfig: join(process.cwd(), 'boot.conf') });
    expect(resolveOptions({ rootDir: '/r', certDir: '/certs' }).certDir).toBe('/certs');
    expect(() => parseKubeletConfig('k.yaml', header + 'rotateCertificates: yes please\n')).toThrow('rotateCertificates: must be true or false');
  });

  it.each([
    ['kind: Pod\napiVersion: v1\n', 'kind is "Pod", want "KubeletConfiguration"'],
    ['apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n', 'apiVersion is "kubelet.config.k8s.io/v1"'],
    [header + 'syncFrequency: often\n', 'syncFrequency: invalid duration "often"'],
    [header + 'podLogsDir: logs\n', 'podLogsDir: must be an absolute path'],
    [header + 'logging: {format: xml}\n', 'logging.format: must be "text" or "json"'],
    ['a: [\n', 'c.yaml'],
  ])('refuses a bad config file (%#)', (body, message) => {
    expect(() => parseKubeletConfig('c.yaml', body)).toThrow(ConfigFileError);
    expect(() => parseKubeletConfig('c.yaml', body)).toThrow(message);
  });

  it('says when the config file cannot be read', () => {
    expect(() => resolveOptions({ config: join(dir, 'missing.yaml') })).toThrow(`cannot read config file ${join(dir, 'missing.yaml')}: no such file`);
  });

  it('refuses a zero sync frequency', () => {
    expect(() => resolveOptions({ syncFrequencyMs: 0 })).toThrow('syncFrequency must be greater than 0');
  });
});

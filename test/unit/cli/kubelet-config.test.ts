import { describe, expect, it } from 'vitest';
import { ConfigFileError, parseKubeletConfig, type LoadedKubeletConfig } from '../../../src/cli/kubelet-config.js';
import { SETTING_BY_FIELD } from '../../../src/cli/settings/table.js';

const header = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
const parse = (body: string, file = '/etc/bootlet/config.yaml'): LoadedKubeletConfig =>
  parseKubeletConfig(file, header + body);
const valueOf = (c: LoadedKubeletConfig, field: string): unknown => c.values.get(SETTING_BY_FIELD.get(field)!)?.value;

describe('KubeletConfiguration, decoded as the kubelet decodes it', () => {
  it('reads values with their Go types: durations, quantities, ports, maps, taints, nested fields', () => {
    const c = parse(
      [
        'syncFrequency: 2m',
        'containerLogMaxSize: 5Mi',
        'healthzPort: 10249',
        'featureGates: {A: true}',
        'registerWithTaints: [{key: k, value: v, effect: NoSchedule}]',
        'authentication: {x509: {clientCAFile: /pki/ca.crt}, webhook: {enabled: false}}',
        'logging: {format: json, verbosity: 4}',
      ].join('\n'),
    );
    expect(valueOf(c, 'syncFrequency')).toBe(120_000);
    expect(valueOf(c, 'containerLogMaxSize')).toBe(5 * 1024 * 1024);
    expect(valueOf(c, 'healthzPort')).toBe(10249);
    expect(valueOf(c, 'featureGates')).toEqual({ A: true });
    expect(valueOf(c, 'registerWithTaints')).toEqual([{ key: 'k', value: 'v', effect: 'NoSchedule' }]);
    expect(valueOf(c, 'authentication.x509.clientCAFile')).toBe('/pki/ca.crt');
    expect(valueOf(c, 'authentication.webhook.enabled')).toBe(false);
    expect(valueOf(c, 'logging.format')).toBe('json');
    expect(valueOf(c, 'logging.verbosity')).toBe(4);
  });

  it('leaves zero values of non-pointer fields to the defaults, as kubeadm writes them', () => {
    const c = parse(
      'syncFrequency: 0s\ncontainerRuntimeEndpoint: ""\nmaxPods: 0\nlogging: {flushFrequency: 0, verbosity: 0}\nmemorySwap: {}\ncrashLoopBackOff: {}\nclusterDNS: []\n',
    );
    expect(c.values.size).toBe(0);
    expect(c.unknownFields).toEqual([]);
  });

  it('keeps an explicit zero in a pointer field: healthzPort 0 turns /healthz off, resolvConf "" means no host DNS', () => {
    const c = parse('healthzPort: 0\nresolvConf: ""\nregisterNode: false\n');
    expect(valueOf(c, 'healthzPort')).toBe(0);
    expect(valueOf(c, 'resolvConf')).toBe('');
    expect(valueOf(c, 'registerNode')).toBe(false);
  });

  it('treats null as unset', () => {
    expect(parse('syncFrequency: null\nauthentication: null\n').values.size).toBe(0);
  });

  it('takes relative paths from the file directory where the kubelet does', () => {
    const c = parse('staticPodPath: manifests\nresolvConf: ../resolv.conf\ntlsCertFile: /abs/cert.pem\n');
    expect(valueOf(c, 'staticPodPath')).toBe('/etc/bootlet/manifests');
    expect(valueOf(c, 'resolvConf')).toBe('/etc/resolv.conf');
    expect(valueOf(c, 'tlsCertFile')).toBe('/abs/cert.pem');
  });

  it('reads YAML 1.1 booleans as the kubelet does', () => {
    expect(valueOf(parse('failSwapOn: no\n'), 'failSwapOn')).toBe(false);
    expect(valueOf(parse('rotateCertificates: yes\n'), 'rotateCertificates')).toBe(true);
  });

  it('names unknown fields (typos, newer kubelets) and keeps going, like the kubelet lenient decoding', () => {
    const c = parse(
      'syncFrequncy: 1m\npodHousekeepingPeriod: 2s\nauthentication: {x509: {clientCaFile: /x}}\nstaticPodPath: /m\n',
    );
    expect(c.unknownFields).toEqual(['syncFrequncy', 'podHousekeepingPeriod', 'authentication.x509.clientCaFile']);
    expect(valueOf(c, 'staticPodPath')).toBe('/m');
  });

  it('names fields given twice and keeps the last', () => {
    const c = parse('syncFrequency: 1m\nsyncFrequency: 2m\n');
    expect(valueOf(c, 'syncFrequency')).toBe(120_000);
    expect(c.duplicateFields).toEqual(['syncFrequency (line 4)']);
  });

  it.each([
    ['kind: Pod\napiVersion: v1\n', 'c.yaml: kind is "Pod", want "KubeletConfiguration"'],
    [
      'apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n',
      'c.yaml: apiVersion is "kubelet.config.k8s.io/v1", want "kubelet.config.k8s.io/v1beta1"',
    ],
    [header + 'syncFrequency: often\n', 'c.yaml:3: syncFrequency: invalid duration "often"'],
    [header + 'syncFrequency: 60\n', 'c.yaml:3: syncFrequency: must be a duration string such as "20s", not number 60'],
    [header + 'maxPods: "110"\n', 'c.yaml:3: maxPods: must be an integer, not string "110"'],
    [header + 'healthzPort: 99999999999\n', 'c.yaml:3: healthzPort: is out of range (int32)'],
    [header + 'containerLogMaxSize: lots\n', 'c.yaml:3: containerLogMaxSize: "lots" is not a valid quantity'],
    [
      header + 'registerWithTaints: [{key: a, effect: Sometimes}]\n',
      'c.yaml:3: registerWithTaints: [0] needs a key and an effect',
    ],
    [header + '\n\nauthentication: 7\n', 'c.yaml:5: authentication: must be an object'],
    [header + 'address: 10.0.0\n', 'c.yaml:3: address: "10.0.0" is not a valid IP address'],
    ['a: [\n', 'c.yaml:'],
    ['- 1\n', 'c.yaml: not a KubeletConfiguration object'],
  ])('refuses a bad file naming the file, line and field (%#)', (body, message) => {
    expect(() => parseKubeletConfig('c.yaml', body)).toThrow(ConfigFileError);
    expect(() => parseKubeletConfig('c.yaml', body)).toThrow(message);
  });
});

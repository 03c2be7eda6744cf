// The API server's create-time rules for what a static pod carries, one by one, in its words:
// metadata labels and annotations, env names, probes and hooks, ports, host name, policies.
import { describe, expect, it } from 'vitest';
import { goQuote } from '../../../../src/config/validate/field-errors';
import {
  isDNS1123Label,
  isQualifiedName,
  isRelaxedEnvVarName,
  isValidLabelValue,
  regexError,
} from '../../../../src/config/validate/api-formats';
import { TOTAL_ANNOTATION_SIZE_LIMIT_BYTES } from '../../../../src/config/validate/meta-rules';
import { pod } from '../helpers';
import { c, problems } from './problems';

const withMeta = (metadata: Record<string, unknown>) => pod({}, { name: 'web', ...metadata });

const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const ENV_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='";

describe('Go quoting of bad values', () => {
  it('quotes as strconv.Quote', () => {
    expect(goQuote('a\nb')).toBe('"a\\nb"');
    expect(goQuote('a\u0000b')).toBe('"a\\x00b"');
    expect(goQuote('tab\there "q" \\')).toBe('"tab\\there \\"q\\" \\\\"');
    expect(goQuote('é\u0085\u{1F600}\u200b')).toBe('"é\\u0085\u{1F600}\\u200b"');
    expect(goQuote('\x7f')).toBe('"\\x7f"');
  });
});

describe('value formats', () => {
  it('builds RegexError as apimachinery does', () => {
    expect(regexError('m', 'r')).toBe("m (regex used for validation is 'r')");
    expect(regexError('m', 'r', 'a', 'b')).toBe("m (e.g. 'a',  or 'b', regex used for validation is 'r')");
  });
  it('gives every message, as Go does', () => {
    expect(isDNS1123Label('a.b')).toEqual(['must not contain dots']);
    expect(isDNS1123Label(`${'A'.repeat(64)}`)).toHaveLength(2);
    expect(isQualifiedName('a/b/c')[0]).toMatch(/^a qualified name must consist of/);
    expect(isQualifiedName('/x')).toEqual(['prefix part must be non-empty']);
    expect(isQualifiedName('Example.com/x')[0]).toMatch(/^prefix part a lowercase RFC 1123 subdomain/);
    expect(isQualifiedName('example.com/')).toEqual(['name part must be non-empty', NAME_PART_MSG]);
    expect(isQualifiedName(`${'a'.repeat(64)}`)).toEqual(['name part must be no more than 63 characters']);
    expect(isValidLabelValue('')).toEqual([]);
    expect(isValidLabelValue('-x')).toEqual([LABEL_VALUE_MSG]);
    expect(isRelaxedEnvVarName('1 weird.name-but:ok')).toEqual([]);
    expect(isRelaxedEnvVarName('A=B')).toEqual([ENV_MSG]);
    expect(isRelaxedEnvVarName('É')).toEqual([ENV_MSG]);
  });
});

describe('metadata.labels and metadata.annotations', () => {
  it('refuses a NUL or a newline in a label value, in the API server words', () => {
    expect(problems(withMeta({ labels: { app: 'a\nb' } }))).toEqual([
      `metadata.labels: Invalid value: "a\\nb": ${LABEL_VALUE_MSG}`,
    ]);
    expect(problems(withMeta({ labels: { app: 'a\u0000b' } }))).toEqual([
      `metadata.labels: Invalid value: "a\\x00b": ${LABEL_VALUE_MSG}`,
    ]);
  });
  it('refuses a label value over 63 characters and a bad label key, and accepts an empty value and a prefixed key', () => {
    expect(problems(withMeta({ labels: { app: 'v'.repeat(64) } }))).toEqual([
      `metadata.labels: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
    ]);
    expect(problems(withMeta({ labels: { 'bad key': 'x' } }))).toEqual([
      `metadata.labels: Invalid value: "bad key": ${NAME_PART_MSG}`,
    ]);
    expect(
      problems(withMeta({ labels: { tier: '', 'app.kubernetes.io/name': 'etcd', component: 'kube-apiserver' } })),
    ).toEqual([]);
  });
  it('checks annotation keys in any case, and their total size of 256 KiB', () => {
    expect(problems(withMeta({ annotations: { 'Example.COM/Key': 'v' } }))).toEqual([]);
    expect(problems(withMeta({ annotations: { 'a\nb': 'v' } }))).toEqual([
      `metadata.annotations: Invalid value: "a\\nb": ${NAME_PART_MSG}`,
    ]);
    // bootlet adds its own annotations (config.hash, source, seen) later; the manifest's own are what is checked.
    const big = 'x'.repeat(TOTAL_ANNOTATION_SIZE_LIMIT_BYTES - 1);
    expect(problems(withMeta({ annotations: { k: big } }))).toEqual([]);
    expect(problems(withMeta({ annotations: { k: big, k2: '' } }))).toEqual([
      'metadata.annotations: Too long: must have at most 262144 bytes',
    ]);
  });
});

describe('env and envFrom', () => {
  it('refuses a newline or "=" in an env var name, and an empty one', () => {
    expect(problems(pod({ containers: [c({ env: [{ name: 'A\nB', value: 'x' }] })] }))).toEqual([
      `spec.containers[0].env[0].name: Invalid value: "A\\nB": ${ENV_MSG}`,
    ]);
    expect(problems(pod({ initContainers: [c({ env: [{ name: 'A=B' }] }, 'i')] }))).toEqual([
      `spec.initContainers[0].env[0].name: Invalid value: "A=B": ${ENV_MSG}`,
    ]);
    expect(problems(pod({ containers: [c({ env: [{ name: '' }] })] }))).toEqual([
      'spec.containers[0].env[0].name: Required value',
    ]);
    expect(problems(pod({ containers: [c({ env: [{ name: 'my.env-name', value: 'a\nb' }] })] }))).toEqual([]);
  });
  it('checks an envFrom prefix the same way', () => {
    const p = pod({ volumes: [], containers: [c({ envFrom: [{ prefix: 'P\n', configMapRef: { name: 'cm' } }] })] });
    expect(problems(p)).toContain(`spec.containers[0].envFrom[0].prefix: Invalid value: "P\\n": ${ENV_MSG}`);
  });
});

describe('probes and lifecycle hooks', () => {
  const probe = (p: Record<string, unknown>, kind = 'readinessProbe') => pod({ containers: [c({ [kind]: p })] });
  it('needs exactly one handler', () => {
    expect(problems(probe({}))).toEqual([
      'spec.containers[0].readinessProbe: Required value: must specify a handler type',
    ]);
    expect(problems(probe({ exec: { command: ['true'] }, tcpSocket: { port: 80 } }))).toEqual([
      'spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type',
    ]);
    expect(problems(probe({ exec: {} }))).toEqual(['spec.containers[0].readinessProbe.exec.command: Required value']);
  });
  it('checks ports by number or name, the scheme and header names', () => {
    expect(problems(probe({ httpGet: { port: 0 } }))).toEqual([
      'spec.containers[0].readinessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive',
    ]);
    expect(problems(probe({ httpGet: { port: 'Http' } }))).toEqual([
      'spec.containers[0].readinessProbe.httpGet.port: Invalid value: "Http": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    ]);
    expect(problems(probe({ httpGet: { port: 80, scheme: 'FTP' } }))).toEqual([
      'spec.containers[0].readinessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"',
    ]);
    expect(problems(probe({ httpGet: { port: 80, httpHeaders: [{ name: 'X Bad', value: 'v' }] } }))).toEqual([
      `spec.containers[0].readinessProbe.httpGet.httpHeaders: Invalid value: "X Bad": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')`,
    ]);
    expect(problems(probe({ tcpSocket: { port: 70000 } }))).toEqual([
      'spec.containers[0].readinessProbe.tcpSocket.port: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ]);
    expect(problems(probe({ grpc: { port: 2379 } }))).toEqual([]);
    expect(
      problems(probe({ httpGet: { port: 'healthz', path: '/livez', httpHeaders: [{ name: 'X-Probe', value: '1' }] } })),
    ).toEqual([]);
  });
  it('checks the numbers: not negative, successThreshold 1 for liveness and startup', () => {
    expect(problems(probe({ exec: { command: ['true'] }, periodSeconds: -1 }))).toEqual([
      'spec.containers[0].readinessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0',
    ]);
    expect(problems(probe({ exec: { command: ['true'] }, successThreshold: 2 }, 'livenessProbe'))).toEqual([
      'spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
    ]);
    expect(problems(probe({ exec: { command: ['true'] }, successThreshold: 2 }))).toEqual([]);
    expect(problems(probe({ exec: { command: ['true'] }, terminationGracePeriodSeconds: 5 }))).toEqual([
      'spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes',
    ]);
  });
  it('checks hooks, and refuses probes and hooks on an init container that is not a sidecar', () => {
    expect(problems(pod({ containers: [c({ lifecycle: { preStop: {} } })] }))).toEqual([
      'spec.containers[0].lifecycle.preStop: Required value: must specify a handler type',
    ]);
    expect(problems(pod({ initContainers: [c({ readinessProbe: { exec: { command: ['true'] } } }, 'i')] }))).toEqual([
      'spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
    ]);
    expect(
      problems(
        pod({ initContainers: [c({ restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } }, 'i')] }),
      ),
    ).toEqual([]);
  });
});

describe('other fields', () => {
  it('checks hostname and subdomain as DNS labels, and the pull and termination message policies', () => {
    expect(problems(pod({ hostname: 'My_Host' }))[0]).toMatch(
      /^spec\.hostname: Invalid value: "My_Host": a lowercase RFC 1123 label must consist of .*\(e\.g\. 'my-name',  or '123-abc', regex used/,
    );
    expect(problems(pod({ containers: [c({ imagePullPolicy: 'Sometimes' })] }))).toEqual([
      'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    ]);
    expect(problems(pod({ containers: [c({ terminationMessagePolicy: 'Stdout' })] }))).toEqual([
      'spec.containers[0].terminationMessagePolicy: Unsupported value: "Stdout": supported values: "File", "FallbackToLogsOnError"',
    ]);
  });
  it('checks dnsPolicy, dnsConfig, hostAliases host names, readiness gates', () => {
    expect(problems(pod({ dnsPolicy: 'Cluster' }))).toEqual([
      'spec.dnsPolicy: Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    ]);
    expect(problems(pod({ dnsPolicy: 'None' }))).toEqual([
      'spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None',
    ]);
    expect(problems(pod({ dnsPolicy: 'None', dnsConfig: {} }))).toEqual([
      'spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None',
    ]);
    expect(problems(pod({ dnsConfig: { nameservers: ['1.1.1.1', '1.0.0.1', '8.8.8.8', '8.8.4.4'] } }))).toEqual([
      'spec.dnsConfig.nameservers: Invalid value: []string{"1.1.1.1", "1.0.0.1", "8.8.8.8", "8.8.4.4"}: must not have more than 3 nameservers',
    ]);
    expect(
      problems(pod({ dnsConfig: { searches: ['_sip._tcp.example.com.', '.', 'Bad'], options: [{ value: '1' }] } })),
    ).toEqual([
      `spec.dnsConfig.searches[2]: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')`,
      'spec.dnsConfig.options[0]: Required value: must not be empty',
    ]);
    expect(problems(pod({ hostAliases: [{ ip: '127.0.0.1', hostnames: ['ok.local', 'not ok'] }] }))[0]).toMatch(
      /^spec\.hostAliases\[0\]\.hostnames\[1\]: Invalid value: "not ok": a lowercase RFC 1123 subdomain/,
    );
    expect(
      problems(pod({ readinessGates: [{ conditionType: 'example.com/ready' }, { conditionType: 'no good' }] }))[0],
    ).toMatch(/^spec\.readinessGates\[1\]\.conditionType: Invalid value: "no good": name part must consist/);
  });

  it('on the host network, a hostPort must be the containerPort; the restart policies are listed in the API server order', () => {
    expect(
      problems(pod({ hostNetwork: true, containers: [c({ ports: [{ containerPort: 80, hostPort: 8080 }] })] })),
    ).toEqual([
      'spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true',
    ]);
    expect(problems(pod({ hostNetwork: true, containers: [c({ ports: [{ containerPort: 80 }] })] }))).toEqual([]);
    expect(problems(pod({ restartPolicy: 'Sometimes' }))).toEqual([
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
  });
});

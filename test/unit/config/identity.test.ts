import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/config/manifest';
import { formatRfc3339Nano } from '../../../src/config/identity';
import type { StaticPod } from '../../../src/config/types';
import { WEB_YAML } from './helpers';

const NOW = new Date('2025-01-01T10:00:00.123Z');
const FILE = '/etc/kubernetes/manifests/web.yaml';

function load(text: string, node = 'node-a', file = FILE): StaticPod {
  const r = loadManifest(file, text, node, NOW);
  if ('error' in r) throw new Error(r.error.message);
  return r.pod;
}

describe('static pod identity', () => {
  it('gives a 32 lowercase hex UID, the config hash annotation and the suffixed name', () => {
    const p = load(WEB_YAML);
    expect(p.uid).toMatch(/^[0-9a-f]{32}$/);
    expect(p.pod.metadata).toMatchObject({
      name: 'web-node-a',
      namespace: 'default',
      uid: p.uid,
      labels: { app: 'web' },
      annotations: {
        'kubernetes.io/config.hash': p.uid,
        'kubernetes.io/config.source': 'file',
        'kubernetes.io/config.seen': '2025-01-01T10:00:00.123000000Z',
      },
    });
    expect(p.key).toBe('default/web-node-a');
    expect(p.file).toBe(FILE);
    expect(p.pod.spec).toMatchObject({
      nodeName: 'node-a',
      tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
    });
    expect(p.pod.status).toEqual({ phase: 'Pending' });
  });

  it('matches the worked example of the reference (§1.9) in its defaults', () => {
    const c = load(WEB_YAML).pod.spec!.containers[0];
    expect(c).toMatchObject({
      imagePullPolicy: 'Always',
      ports: [{ containerPort: 80, hostPort: 80, protocol: 'TCP' }],
    });
  });

  it('lowercases the node in the name suffix', () => {
    expect(load(WEB_YAML, 'CP-1').pod.metadata.name).toBe('web-cp-1');
  });

  it('keeps the UID across pure formatting changes: comments, whitespace, key order, YAML vs JSON', () => {
    const base = load(WEB_YAML).uid;
    const reformatted = `# the web server
kind: Pod
apiVersion: v1
spec:
  containers:
    - image: nginx      # no tag
      ports: [ { containerPort: 80 } ]
      name: nginx
  hostNetwork: true
metadata: { labels: { app: web }, name: web }
`;
    const json = JSON.stringify({
      metadata: { name: 'web', labels: { app: 'web' } },
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }] }], hostNetwork: true },
    });
    expect(load(reformatted).uid).toBe(base);
    expect(load(json).uid).toBe(base);
  });

  it('keeps the UID when a default is spelled out (hashing is after defaulting)', () => {
    expect(load(WEB_YAML.replace('    image: nginx\n', '    image: nginx\n    imagePullPolicy: Always\n')).uid).toBe(
      load(WEB_YAML).uid,
    );
  });

  it('keeps the UID when zero, null or empty values are spelled out (kubeadm, kubectl --dry-run output)', () => {
    const base = load(WEB_YAML).uid;
    const spelled = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  name: web
  namespace: ""
  labels: {app: web}
  annotations: {}
spec:
  hostNetwork: true
  hostPID: false
  volumes: []
  nodeSelector: null
  containers:
  - name: nginx
    image: nginx
    resources: {}
    args: []
    env: null
    workingDir: ""
    ports:
    - containerPort: 80
      hostIP: ""
status: {}
`;
    expect(load(spelled).uid).toBe(base);
  });

  it('changes the UID when a pointer field is set to its zero value, since that means something', () => {
    const base = load(WEB_YAML).uid;
    expect(
      load(
        WEB_YAML.replace(
          '    image: nginx\n',
          '    image: nginx\n    securityContext: {allowPrivilegeEscalation: false}\n',
        ),
      ).uid,
    ).not.toBe(base);
    expect(
      load(WEB_YAML.replace('  hostNetwork: true\n', '  hostNetwork: true\n  enableServiceLinks: false\n')).uid,
    ).not.toBe(base);
  });

  it('changes the UID with content, node or path', () => {
    const base = load(WEB_YAML).uid;
    expect(load(WEB_YAML.replace('image: nginx', 'image: nginx:1.25')).uid).not.toBe(base);
    expect(load(WEB_YAML.replace('app: web', 'app: www')).uid).not.toBe(base);
    expect(load(WEB_YAML, 'node-b').uid).not.toBe(base);
    expect(load(WEB_YAML, 'node-a', '/etc/kubernetes/manifests/web2.yaml').uid).not.toBe(base);
  });

  it('hashes before the namespace default: an explicit "default" namespace is another UID, same key', () => {
    const explicit = load(WEB_YAML.replace('  name: web\n', '  name: web\n  namespace: default\n'));
    expect(explicit.uid).not.toBe(load(WEB_YAML).uid);
    expect(explicit.key).toBe('default/web-node-a');
  });

  it('keeps a pinned metadata.uid as the UID and the config hash', () => {
    const p = load(WEB_YAML.replace('  name: web\n', '  name: web\n  uid: abcd2222333344445555666677778888\n'));
    expect(p.uid).toBe('abcd2222333344445555666677778888');
    expect(p.pod.metadata.annotations['kubernetes.io/config.hash']).toBe(p.uid);
  });

  it('does not add a second NoExecute toleration', () => {
    const p = load(WEB_YAML.replace('spec:\n', 'spec:\n  tolerations: [{operator: Exists, effect: NoExecute}]\n'));
    expect(p.pod.spec!.tolerations).toEqual([{ operator: 'Exists', effect: 'NoExecute' }]);
  });

  it('formats config.seen as RFC 3339 with nine fraction digits', () => {
    expect(formatRfc3339Nano(new Date('2021-08-29T01:50:33.334Z'))).toBe('2021-08-29T01:50:33.334000000Z');
  });
});

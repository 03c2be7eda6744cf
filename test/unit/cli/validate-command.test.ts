// `bootlet validate`: the agent's own reading of manifests and KubeletConfiguration, as an
// operator or a CI job sees it: line and column, warnings, ignored names, duplicate pods, the UID
// the agent would give, exit codes, and nothing ever run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runValidateCommand, type ValidateReport } from '../../../src/cli/validate-command.js';
import { loadManifest } from '../../../src/config/manifest.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('validate');
const KUBEADM = path.join(__dirname, '../../fixtures/kubeadm/1.34');

async function validate(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runValidateCommand(
    argv,
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, out, err };
}

function dir(name: string, files: Record<string, string>): string {
  const d = path.join(tmp, name);
  fs.mkdirSync(d, { recursive: true });
  for (const [f, c] of Object.entries(files)) fs.writeFileSync(path.join(d, f), c);
  return d;
}

const POD = (name: string, extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: kube-system
spec:
  hostNetwork: true
  containers:
  - name: main
    image: busybox${extra}
`;

describe('bootlet validate', () => {
  it("accepts kubeadm's manifests and config, with the UID the agent gives them on this node", async () => {
    const r = await validate(
      path.join(KUBEADM, 'manifests'),
      '--config',
      path.join(KUBEADM, 'kubelet/config.yaml'),
      '--hostname-override',
      'cp-1',
      '-o',
      'json',
    );
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as ValidateReport;
    expect(report.config?.result).toBe('accepted');
    expect(report.files.map((f) => f.result)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    const etcd = path.join(KUBEADM, 'manifests/etcd.yaml');
    const agent = loadManifest(etcd, fs.readFileSync(etcd), 'cp-1', new Date());
    expect('pod' in agent).toBe(true);
    const mine = report.files.find((f) => f.file === etcd);
    expect(mine).toMatchObject({
      result: 'accepted',
      pod: 'kube-system/etcd-cp-1',
      uid: 'pod' in agent ? agent.pod.uid : '',
    });
  });

  it('gives line, column and reason of a refused manifest, warns about unknown fields, and exits 1', async () => {
    const d = dir('bad', {
      'broken.yaml':
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: a\n    image: [unclosed\n',
      'typo.yaml': POD('typo').replace('    image: busybox', '    image: busybox\n    imagePullPolicyy: Always'),
      'list.yaml': 'apiVersion: v1\nkind: PodList\nitems: []\n',
    });
    const r = await validate(d);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `${path.join(d, 'broken.yaml')}:9:1: refused: Flow sequence in block collection must be sufficiently indented and end with a ]`,
    );
    expect(r.out).toContain(
      `${path.join(d, 'list.yaml')}: refused: kind is "PodList": expected "Pod" (a file holds exactly one Pod`,
    );
    expect(r.out).toContain(`${path.join(d, 'typo.yaml')}: accepted: pod kube-system/typo-`);
    expect(r.out).toContain(
      `${path.join(d, 'typo.yaml')}: warning: unknown field "spec.containers[0].imagePullPolicyy"`,
    );
    expect(r.out).toMatch(/1 accepted, 2 refused, 0 ignored, 1 warnings\n$/);
  });

  it('says "refused" once for a manifest over a limit, parsed on the loop or off it', async () => {
    const d = dir('limits', {
      'small.yaml': `${POD('small')}x: [${'1,'.repeat(50_001)}1]\n`,
      'deep.json': `{"apiVersion":"v1","kind":"Pod","x":${'['.repeat(100)}${']'.repeat(100)}}`,
    });
    const r = await validate(d);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `${path.join(d, 'small.yaml')}: refused: more than 50000 values (the limit for a manifest)`,
    );
    expect(r.out).toContain(
      `${path.join(d, 'deep.json')}: refused: nested deeper than 64 levels (the limit for a manifest)`,
    );
    expect(r.out).not.toMatch(/refused: refused/);
  });

  it('in a directory, says which files the agent ignores and why, and which pods two files both define', async () => {
    const d = dir('dir', {
      'etcd.yaml': POD('etcd'),
      'etcd.yaml~': POD('etcd', ':old'),
      '.etcd.yaml.swp': 'junk',
      'etcd-copy.yaml': POD('etcd', ':copy'),
    });
    fs.mkdirSync(path.join(d, 'old'), { recursive: true });
    const r = await validate(d, '-o', 'json');
    expect(r.code).toBe(1);
    const byName = new Map((JSON.parse(r.out) as ValidateReport).files.map((f) => [path.basename(f.file), f]));
    expect(byName.get('etcd.yaml~')).toMatchObject({ result: 'ignored', reason: 'editor backup file (ends with "~")' });
    expect(byName.get('.etcd.yaml.swp')).toMatchObject({
      result: 'ignored',
      reason: 'hidden file (name starts with ".")',
    });
    expect(byName.get('old')).toMatchObject({
      result: 'ignored',
      reason: 'sub-directory: the agent does not recurse into it',
    });
    // The first file by name wins, as in the agent.
    expect(byName.get('etcd-copy.yaml')).toMatchObject({ result: 'accepted' });
    expect(byName.get('etcd.yaml')).toMatchObject({ result: 'refused' });
    expect((byName.get('etcd.yaml') as { reason: string }).reason).toContain(
      `is already declared by ${path.join(d, 'etcd-copy.yaml')}`,
    );
  });

  it('checks a file named on its own whatever its name, with a warning that a directory would skip it', async () => {
    const d = dir('named', { 'web.yaml.bak': POD('web') });
    const r = await validate(path.join(d, 'web.yaml.bak'));
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'warning: in a manifest directory the agent would skip this file: temporary or backup file',
    );
  });

  it('refuses a KubeletConfiguration as the agent does, naming file, line and field', async () => {
    const cfg = path.join(tmp, 'bad-config.yaml');
    fs.writeFileSync(
      cfg,
      'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsyncFrequency: soon\nfooBar: 1\n',
    );
    const r = await validate(dir('empty', {}), '--config', cfg);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`refused: ${cfg}:3: syncFrequency:`);
    const ok = path.join(tmp, 'ok-config.yaml');
    fs.writeFileSync(ok, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfooBar: 1\n');
    const r2 = await validate(dir('empty', {}), '--config', ok);
    expect(r2.code).toBe(0);
    expect(r2.out).toContain(`${ok}: warning: unknown field "fooBar"`);
  });

  it('checks the staticPodPath of --config when no path is given', async () => {
    const d = dir('from-config', { 'a.yaml': POD('a') });
    const cfg = path.join(tmp, 'spp.yaml');
    fs.writeFileSync(
      cfg,
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: ${d}\n`,
    );
    const r = await validate('--config', cfg, '--hostname-override', 'n1');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`${path.join(d, 'a.yaml')}: accepted: pod kube-system/a-n1`);
  });

  it('exits 1 on a usage error or a path that does not exist, as the kubelet does', async () => {
    expect((await validate('--frobnicate')).code).toBe(1);
    expect((await validate('-o', 'yaml', tmp)).code).toBe(1);
    const r = await validate(path.join(tmp, 'nope'));
    expect(r.code).toBe(1);
    expect(r.err).toContain('no such file or directory');
  });

  it('never runs anything a manifest names', async () => {
    const marker = path.join(tmp, 'ran');
    const sh = `["sh", "-c", "touch ${marker}"]`;
    const d = dir('hostile', {
      'x.yaml': `apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: c\n    image: busybox\n    command: ${sh}\n    livenessProbe: {exec: {command: ${sh}}}\n    lifecycle: {postStart: {exec: {command: ${sh}}}}\n  initContainers:\n  - name: i\n    image: busybox\n    command: ${sh}\n`,
    });
    expect((await validate(d)).code).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

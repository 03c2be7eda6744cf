// node.k8s.io/v1 RuntimeClasses in the fake API server, through the real kubectl: create from a
// file, get with the server's printer, the handler's validation and immutability, and the
// RuntimeClass admission plugin on pods (unknown class forbidden, overhead set, a different one
// forbidden), in the API server's words. A node may read RuntimeClasses, as system:node may.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { makeTmpDir, removeTmpDir } from '../../support/tmp.js';
import { Kubectl } from './kubectl.js';

let server: FakeApiServer;
let dir: string;
let kubectl: Kubectl;

beforeAll(async () => {
  dir = makeTmpDir('fake-apiserver-runtime-classes');
  server = await startFakeApiServer();
  kubectl = new Kubectl(server.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
});

afterAll(async () => {
  await server?.dispose();
  if (dir) removeTmpDir(dir);
});

function file(name: string, content: string): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

const pod = (name: string, runtimeClassName: string, overhead = ''): string => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  runtimeClassName: ${runtimeClassName}
${overhead}  containers: [{name: c, image: busybox}]
`;

describe('RuntimeClasses', () => {
  it('kubectl create -f makes one; kubectl get prints its handler', async () => {
    const rc = file(
      'gvisor.yaml',
      `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
overhead:
  podFixed: {cpu: 250m, memory: 120Mi}
`,
    );
    expect(await kubectl.ok(['create', '-f', rc])).toBe('runtimeclass.node.k8s.io/gvisor created\n');
    expect(await kubectl.ok(['get', 'runtimeclass'])).toMatch(/^NAME\s+HANDLER\s+AGE\ngvisor\s+runsc\s+\d+s\n$/);
    expect(server.object('runtimeclasses.node.k8s.io', '', 'gvisor')).toMatchObject({ handler: 'runsc' });
  });

  it('refuses a missing or malformed handler, and a changed one', async () => {
    const none = await kubectl.run([
      'create',
      '-f',
      file('none.yaml', 'apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: none}\n'),
    ]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('handler: Required value');
    const bad = await kubectl.run([
      'create',
      '-f',
      file('bad.yaml', 'apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: bad}\nhandler: Run_SC\n'),
    ]);
    expect(bad.stderr).toContain('handler: Invalid value: "Run_SC": a lowercase RFC 1123 label');
    const changed = await kubectl.run(['patch', 'runtimeclass', 'gvisor', '--type=merge', '-p', '{"handler":"kata"}']);
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain('handler: Invalid value: "kata": field is immutable');
  });

  it("admits pods as the RuntimeClass admission plugin: unknown class forbidden, the class's overhead set", async () => {
    const unknown = await kubectl.run(['create', '-f', file('p1.yaml', pod('p1', 'kata'))]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('pods "p1" is forbidden: pod rejected: RuntimeClass "kata" not found');
    await kubectl.ok(['create', '-f', file('p2.yaml', pod('p2', 'gvisor'))]);
    expect(server.object('pods', 'default', 'p2')?.spec).toMatchObject({
      runtimeClassName: 'gvisor',
      overhead: { cpu: '250m', memory: '120Mi' },
    });
    const other = await kubectl.run([
      'create',
      '-f',
      file('p3.yaml', pod('p3', 'gvisor', '  overhead: {cpu: 100m}\n')),
    ]);
    expect(other.stderr).toContain(
      `pods "p3" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`,
    );
  });
});

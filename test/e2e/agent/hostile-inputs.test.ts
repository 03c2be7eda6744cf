// Hostile inputs, round 2 (issue 20), through the packaged agent on a real containerd: its log goes
// to a file, as an operator's `bootlet ... >>/var/log/bootlet.log 2>&1` does. A manifest linked to
// that log once fed the agent its own output, a refusal ten times a second forever; a manifest that
// changes at every read was logged at every read; a NUL or newline in a label value and a newline
// in an env name ran; a host alias IP with a newline went into the pod's /etc/hosts as two lines, a
// negative memory request and a downwardAPI file at "../x" were accepted; a server answering with
// 32 KiB of headers was never ready.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podsSocketPath } from '../../../src/server/socket-path.js';
import { BOOTLET_EXE } from '../../support/agent.js';
import { busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import { freePort } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-hostile';
const h = useAgentHarness('hostile-inputs', NODE);
const run = promisify(execFile);
const logFile = () => path.join(h.dir, 'bootlet.log');

const LABEL_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const ENV_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='";
const IP_MSG = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/** The agent's log records, read from its log file. */
function records(): Record<string, unknown>[] {
  let text = '';
  try {
    text = fs.readFileSync(logFile(), 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
const about = (file: string, msg: string) =>
  records().filter((r) => r.msg === msg && r.file === path.join(h.manifests, file));
const rescans = () => records().filter((r) => r.msg === 'Manifest path rescanned').length;
/** Resolves once the agent has done `n` more full rescans (one a second). */
async function moreRescans(n: number): Promise<void> {
  const target = rescans() + n;
  await waitFor(() => rescans() >= target, { timeoutMs: 60_000, what: `${n} more rescans` });
}

function getPods(): Promise<{
  items: Array<{ metadata: { name: string }; status?: { containerStatuses?: Array<{ ready: boolean }> } }>;
}> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { socketPath: podsSocketPath(h.rootDir), path: '/pods', agent: false, timeout: 5000 },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(JSON.parse(body)));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
  });
}

const withLabel = (name: string, value: string) =>
  busyboxPod(name, SLEEP_LOOP).replace(
    `namespace: kube-system}`,
    `namespace: kube-system, labels: {app: ${JSON.stringify(value)}}}`,
  );
const withEnv = (name: string, env: string) =>
  `${busyboxPod(name, SLEEP_LOOP)}    env: [{name: ${JSON.stringify(env)}, value: x}]\n`;
/** What the API server refuses and the node would otherwise act on: an /etc/hosts line, a cgroup figure, a file outside its volume. */
const MISCHIEF: Record<string, [manifest: string, refusal: string]> = {
  'alias.yaml': [
    busyboxPod(
      'alias',
      SLEEP_LOOP,
      `  hostAliases: [{ip: ${JSON.stringify('1.2.3.4\n5.6.7.8 evil.example')}, hostnames: [ok.example]}]\n`,
    ),
    `spec.hostAliases[0].ip: Invalid value: "1.2.3.4\\n5.6.7.8 evil.example": ${IP_MSG}`,
  ],
  'memory.yaml': [
    `${busyboxPod('memory', SLEEP_LOOP)}    resources: {requests: {memory: -1Gi}}\n`,
    'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0',
  ],
  'downward.yaml': [
    busyboxPod(
      'downward',
      SLEEP_LOOP,
      '  volumes: [{name: info, downwardAPI: {items: [{path: ../x, fieldRef: {fieldPath: metadata.name}}]}}]\n',
    ),
    `spec.volumes[0].downwardAPI.path: Invalid value: "../x": must not contain '..'`,
  ],
};
/** Every pod's /etc/hosts the agent wrote under its root dir. */
function etcHostsFiles(): string[] {
  const pods = path.join(h.rootDir, 'pods');
  if (!fs.existsSync(pods)) return [];
  return fs.readdirSync(pods).flatMap((uid) => {
    const f = path.join(pods, uid, 'etc-hosts');
    return fs.existsSync(f) ? [fs.readFileSync(f, 'utf8')] : [];
  });
}

let server: http.Server;
let serverPort = 0;

beforeAll(async () => {
  serverPort = await freePort();
  // 200 with 32 KiB of headers: Node's default limit (16 KiB) refused it, Go's (10 MiB) takes it.
  server = http.createServer((_req, res) => res.writeHead(200, { 'X-Padding': 'p'.repeat(32 * 1024) }).end('ok'));
  await new Promise<void>((r) => server.listen(serverPort, '127.0.0.1', () => r()));
  fs.writeFileSync(logFile(), '');
  h.launch({
    extraArgs: ['--v=4', '--file-check-frequency=1s'],
    env: { BOOTLET_TEST_LOG: logFile() },
    execWrap: ['sh', '-c', 'exec "$@" >>"$BOOTLET_TEST_LOG" 2>&1', 'sh'],
  });
  h.write('marker.yaml', busyboxPod('marker', SLEEP_LOOP));
  await waitFor(async () => (await h.pods('marker')).some((p) => p.containers.length > 0), {
    timeoutMs: 90_000,
    what: 'marker running',
  });
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

describe('hostile inputs through the packaged agent', () => {
  it('bootlet validate refuses a NUL or newline in a label value and a newline in an env name in the API server words, and says "refused" once', async () => {
    const dir = path.join(h.dir, 'to-validate');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'nul.yaml'), withLabel('nul', 'a\u0000b'));
    fs.writeFileSync(path.join(dir, 'newline.yaml'), withLabel('newline', 'a\nb'));
    fs.writeFileSync(path.join(dir, 'env.yaml'), withEnv('env', 'A\nB'));
    // A limit refusal (it once read "refused: refused: ..."); the depth limit is cheap to reach even on a loaded machine.
    fs.writeFileSync(
      path.join(dir, 'deep.json'),
      `{"apiVersion":"v1","kind":"Pod","x":${'['.repeat(100)}${']'.repeat(100)}}`,
    );
    fs.writeFileSync(path.join(dir, 'good.yaml'), withLabel('good', 'my_value'));
    const r = await run(BOOTLET_EXE, ['validate', dir, '--hostname-override', NODE]).then(
      (ok) => ({ code: 0, stdout: ok.stdout }),
      (e: { code: number; stdout: string }) => e,
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `${path.join(dir, 'nul.yaml')}: refused: metadata.labels: Invalid value: "a\\x00b": ${LABEL_MSG}`,
    );
    expect(r.stdout).toContain(
      `${path.join(dir, 'newline.yaml')}: refused: metadata.labels: Invalid value: "a\\nb": ${LABEL_MSG}`,
    );
    expect(r.stdout).toContain(
      `${path.join(dir, 'env.yaml')}: refused: spec.containers[0].env[0].name: Invalid value: "A\\nB": ${ENV_MSG}`,
    );
    expect(r.stdout).toContain(
      `${path.join(dir, 'deep.json')}: refused: nested deeper than 64 levels (the limit for a manifest)`,
    );
    expect(r.stdout).not.toContain('refused: refused');
    expect(r.stdout).toContain(`${path.join(dir, 'good.yaml')}: accepted: pod kube-system/good-${NODE}`);
  });

  it('the agent refuses those manifests and runs none of them', async () => {
    h.write('nul.yaml', withLabel('nul', 'a\u0000b'));
    h.write('env.yaml', withEnv('env', 'A\nB'));
    await waitFor(() => about('nul.yaml', 'Static pod manifest refused')[0], {
      timeoutMs: 60_000,
      what: 'nul.yaml refused',
    });
    await waitFor(() => about('env.yaml', 'Static pod manifest refused')[0], {
      timeoutMs: 60_000,
      what: 'env.yaml refused',
    });
    expect(String(about('nul.yaml', 'Static pod manifest refused')[0]!.err)).toContain(
      `metadata.labels: Invalid value: "a\\x00b": ${LABEL_MSG}`,
    );
    expect(String(about('env.yaml', 'Static pod manifest refused')[0]!.err)).toContain(
      `spec.containers[0].env[0].name: Invalid value: "A\\nB": ${ENV_MSG}`,
    );
    expect(await h.pods('nul')).toEqual([]);
    expect(await h.pods('env')).toEqual([]);
    h.remove('nul.yaml');
    h.remove('env.yaml');
  });

  it('bootlet validate refuses a host alias IP with a newline, a negative memory request and a downwardAPI path out of its volume, in the API server words', async () => {
    const dir = path.join(h.dir, 'to-validate-mischief');
    fs.mkdirSync(dir, { recursive: true });
    for (const [file, [manifest]] of Object.entries(MISCHIEF)) fs.writeFileSync(path.join(dir, file), manifest);
    const r = await run(BOOTLET_EXE, ['validate', dir, '--hostname-override', NODE]).then(
      (ok) => ({ code: 0, stdout: ok.stdout }),
      (e: { code: number; stdout: string }) => e,
    );
    expect(r.code).toBe(1);
    for (const [file, [, refusal]] of Object.entries(MISCHIEF))
      expect(r.stdout).toContain(`${path.join(dir, file)}: refused: ${refusal}`);
    expect(r.stdout).toContain('0 accepted, 3 refused');
  });

  it('the agent refuses them too: none runs, and no pod gets the injected /etc/hosts line', async () => {
    for (const [file, [manifest]] of Object.entries(MISCHIEF)) h.write(file, manifest);
    for (const [file, [, refusal]] of Object.entries(MISCHIEF)) {
      const refused = await waitFor(() => about(file, 'Static pod manifest refused')[0], {
        timeoutMs: 60_000,
        what: `${file} refused`,
      });
      expect(String(refused.err)).toContain(refusal);
    }
    // Refused for good: later rescans start none of them either.
    await moreRescans(2);
    for (const name of ['alias', 'memory', 'downward']) expect(await h.pods(name)).toEqual([]);
    const hosts = etcHostsFiles();
    expect(hosts.length).toBeGreaterThan(0);
    for (const text of hosts) expect(text).not.toContain('evil.example');
    for (const file of Object.keys(MISCHIEF)) h.remove(file);
  });

  it("refuses a manifest linked to the agent's own log once, and does not read it again as the log grows", async () => {
    fs.symlinkSync(logFile(), path.join(h.manifests, 'self.yaml'));
    const first = await waitFor(() => about('self.yaml', 'Static pod manifest refused')[0], {
      timeoutMs: 60_000,
      what: 'self.yaml refused',
    });
    expect(String(first.err)).toBe(
      "the file is the agent's own standard output and standard error (its log): bootlet never reads its own output as a manifest; remove it from the manifest path",
    );
    // At --v=4 every rescan writes to the log, which is the manifest: five more rescans, no more refusals.
    await moreRescans(5);
    expect(about('self.yaml', 'Static pod manifest refused')).toHaveLength(1);
    expect(about('self.yaml', 'Static pod manifest refused again')).toEqual([]);
    fs.rmSync(path.join(h.manifests, 'self.yaml'));
    expect(h.agent().proc.exitCode).toBeNull();
  });

  it('logs a manifest whose content changes at every read at most 5 times, then one line with the count when it is fixed', async () => {
    const changes = 12;
    for (let i = 0; i < changes; i++) {
      h.write('flappy.yaml', `apiVersion: v1\nkind: Pod${i}\n`);
      await moreRescans(1);
    }
    // Each rescan waits for the look at every file under way: all the contents above have been read.
    expect(about('flappy.yaml', 'Static pod manifest refused')).toHaveLength(5);
    h.write('flappy.yaml', busyboxPod('flappy', SLEEP_LOOP));
    await waitFor(() => about('flappy.yaml', 'Static pod manifest accepted')[0], {
      timeoutMs: 60_000,
      what: 'flappy.yaml accepted',
    });
    const again = about('flappy.yaml', 'Static pod manifest refused again');
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ times: changes - 5, err: `kind is "Pod${changes - 1}": expected "Pod"` });
    h.remove('flappy.yaml');
  });

  it('an httpGet readiness probe of a server answering 200 with 32 KiB of headers makes the container ready', async () => {
    const probe = `    readinessProbe:\n      httpGet: {host: 127.0.0.1, port: ${serverPort}, path: /ready}\n      periodSeconds: 1\n`;
    h.write('headers.yaml', busyboxPod('headers', SLEEP_LOOP) + probe);
    const ready = await waitFor(
      async () => {
        const p = (await getPods()).items.find((x) => x.metadata.name === `headers-${NODE}`);
        return p?.status?.containerStatuses?.[0]?.ready === true ? p : undefined;
      },
      { timeoutMs: 90_000, what: 'headers pod ready' },
    );
    expect(ready.status?.containerStatuses?.[0]?.ready).toBe(true);
    h.remove('headers.yaml');
    expect(h.agent().proc.exitCode).toBeNull();
  });
});

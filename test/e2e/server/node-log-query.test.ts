// The node log query (KEP-2258, GA in 1.36) on the packaged agent, against a real journal: the
// machine's systemd-journald 252 runs alone in a mount namespace with a private /run and /var/log
// (test/support/node-journal.ts), the agent runs in that namespace (so its journalctl, the
// machine's 252, reads that journal and that /var/log, as on a node), and lines are logged as the
// units kubelet.service and containerd.service, journald deriving the unit from the writer's
// cgroup as it does on a systemd node. The real kubectl 1.36 asks through the fake API server's
// node proxy (which sends the kubelet the API server's client certificate) and straight at the
// kubelet. The journal is persistent (/var/log/journal, flushed to) and of this boot only. Not
// covered: a journal of several boots, a real systemd as PID 1 starting the units.
import { request } from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeApiServer } from '../../support/fake-apiserver/index.js';
import { httpsGet } from '../../support/https-get.js';
import { nodeJournalUnavailable, startNodeJournal, type NodeJournal } from '../../support/node-journal.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from '../agent/harness.js';
import { startKubeletApiNode, type KubeletApiNode } from '../agent/kubelet-api-node.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';

const NODE = 'logs-e2e';
const unavailable = nodeJournalUnavailable();
const h = useAgentHarness('node-logs', NODE);
let api: FakeApiServer;
let journal: NodeJournal | undefined;
let kubeletPort: number;
let admin: Kubectl;
let node: KubeletApiNode;
/** A file outside the node's /var/log that a link inside points at. */
const secret = join(h.dir, 'secret.txt');
const logs = (query: string): string => `/api/v1/nodes/${NODE}/proxy/logs/${query}`;
/** journalctl --output=short-precise: "Dec 06 07:56:07.024452 host kubelet[8436]: line". */
const entry = (identifier: string, line: string): RegExp =>
  new RegExp(`^[A-Z][a-z]{2} \\d{2} \\d{2}:\\d{2}:\\d{2}\\.\\d{6} \\S+ ${identifier}\\[\\d+\\]: ${line}$`, 'm');

beforeAll(async () => {
  if (unavailable) return;
  journal = await startNodeJournal();
  journal.writeLogFile('kube-proxy.log', 'kube-proxy: started\n');
  journal.writeLogFile('kube-apiserver/audit.log', '{"audit":1}\n');
  writeFileSync(secret, 'not for /logs/\n');
  journal.symlinkLogFile('escape', secret);
  node = await startKubeletApiNode(h, {
    config: ['enableSystemLogQuery: true', 'featureGates: {NodeLogQuery: true}'],
    authorizerCaches: true,
    agent: { execWrap: journal.enter },
  });
  ({ api, kubeletPort, admin } = node);
  await node.waitServing(() => api.object('nodes', '', NODE) !== undefined);
}, 300_000);

let failed = false;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failed = true;
});
afterAll(async () => {
  if (failed && journal) console.log(`journald said:\n${journal.journaldOutput().slice(-2000)}`);
  await journal?.stop();
  await api?.dispose();
});

describe.skipIf(unavailable !== undefined)(
  `node log query from the journal${unavailable ? ` (${unavailable})` : ''}`,
  () => {
    let mark = '';

    beforeAll(async () => {
      const j = journal!;
      await j.log('kubelet', 'kubelet', ['kubelet first A-1', 'kubelet first A-2']);
      await j.log('containerd', 'containerd', ['containerd says hello']);
      // A whole second between the two batches: journalctl's times have whole seconds.
      const at = Math.floor(Date.now() / 1000) * 1000 + 1000;
      mark = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
      await waitFor(() => Date.now() >= at + 100, { timeoutMs: 5_000, what: 'the next second' });
      await j.log('kubelet', 'kubelet', ['kubelet then B-1', 'kubelet then B-2 error: disk full', 'kubelet then B-3']);
    });

    it('kubectl get --raw /api/v1/nodes/<node>/proxy/logs/?query=kubelet answers from the journal, that unit only', async () => {
      const out = await admin.ok(['get', '--raw', logs('?query=kubelet')]);
      for (const line of ['kubelet first A-1', 'kubelet first A-2', 'kubelet then B-1', 'kubelet then B-3'])
        expect(out).toMatch(entry('kubelet', line));
      expect(out).not.toContain('containerd says hello');
      const both = await admin.ok(['get', '--raw', logs('?query=kubelet&query=containerd')]);
      expect(both).toMatch(entry('containerd', 'containerd says hello'));
      expect(both).toMatch(entry('kubelet', 'kubelet then B-1'));
    });

    it("takes journalctl's options: sinceTime, untilTime, tailLines, pattern, boot", async () => {
      const since = await admin.ok(['get', '--raw', logs(`?query=kubelet&sinceTime=${mark}`)]);
      expect(since).toMatch(entry('kubelet', 'kubelet then B-1'));
      expect(since).not.toContain('first A-');
      const until = await admin.ok(['get', '--raw', logs(`?query=kubelet&untilTime=${mark}`)]);
      expect(until).toMatch(entry('kubelet', 'kubelet first A-2'));
      expect(until).not.toContain('then B-');
      const tail = await admin.ok(['get', '--raw', logs('?query=kubelet&tailLines=2')]);
      expect(tail.trim().split('\n')).toEqual([
        expect.stringMatching(entry('kubelet', 'kubelet then B-2 error: disk full')),
        expect.stringMatching(entry('kubelet', 'kubelet then B-3')),
      ]);
      const grep = await admin.ok([
        'get',
        '--raw',
        logs(`?query=kubelet&pattern=${encodeURIComponent('error: \\w+ full$')}`),
      ]);
      expect(grep.trim().split('\n')).toEqual([
        expect.stringMatching(entry('kubelet', 'kubelet then B-2 error: disk full')),
      ]);
      expect(await admin.ok(['get', '--raw', logs('?query=kubelet&boot=0')])).toMatch(
        entry('kubelet', 'kubelet then B-3'),
      );
      // This journal has no earlier boot: journalctl says so itself (its stderr), in the 200 answer.
      expect(await admin.ok(['get', '--raw', logs('?query=kubelet&boot=-1')])).toBe(
        'Data from the specified boot (-1) is not available: No such boot ID in journal\n',
      );
    });

    it("finds a service that logs to /var/log, says when a unit is nowhere, and serves /var/log's files", async () => {
      expect(await admin.ok(['get', '--raw', logs('?query=kube-proxy')])).toBe('kube-proxy: started\n');
      expect(await admin.ok(['get', '--raw', logs('?query=nosuchunit')])).toBe('\nlog not found for nosuchunit\n');
      expect(await admin.ok(['get', '--raw', logs('?query=/kube-apiserver/audit.log')])).toBe('{"audit":1}\n');
      expect(await admin.ok(['get', '--raw', logs('kube-proxy.log')])).toBe('kube-proxy: started\n');
      const listing = await admin.ok(['get', '--raw', logs('')]);
      expect(listing).toContain('<a href="journal/">journal/</a>');
      expect(listing).toContain('<a href="kube-proxy.log">kube-proxy.log</a>');
    });

    it("refuses in the kubelet's words, and reads nothing outside /var/log", async () => {
      const bad = await admin.run(['get', '--raw', logs('?query=kubelet&boot=1')]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('boot: Invalid value: 1: must be less than 1');
      // The pattern is checked by Go's regexp syntax (re2js, an asset of the executable).
      const pattern = await admin.run(['get', '--raw', logs('?query=kubelet&pattern=%28%3F%3Dx%29')]);
      expect(pattern.stderr).toContain(
        'pattern: Invalid value: "(?=x)": error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
      );
      const unsafe = await admin.run(['get', '--raw', logs('?query=kubelet%3Bid')]);
      expect(unsafe.stderr).toContain('query: Invalid value: "kubelet;id": input contains unsupported characters');
      const outside = await admin.run(['get', '--raw', logs('?query=/escape')]);
      // securejoin reads the link as if /var/log were the root: it names a file that is not there.
      expect(outside.stderr).toContain(
        `query: Invalid value: []string{"/escape"}: stat /var/log${secret}: no such file or directory`,
      );
      const direct = await admin.run(['get', '--raw', logs('escape')]);
      expect(direct.code).not.toBe(0);
      expect(direct.stderr).toContain('Forbidden');
      expect(direct.stdout + direct.stderr).not.toContain('not for /logs/');
    });

    it('asks nodes/log: a user with only that reads the journal straight from the kubelet, one with nodes/pods is refused', async () => {
      api.grant('log-reader', 'nodes/log', ['get']);
      const reader = node.atKubelet('log-reader', 'log-reader-token', []);
      expect(await reader.ok(['get', '--raw', '/logs/?query=kubelet&tailLines=1'])).toMatch(
        entry('kubelet', 'kubelet then B-3'),
      );
      expect((await reader.run(['get', '--raw', '/pods'])).code).not.toBe(0);
      api.grant('pods-only', 'nodes/pods', ['get']);
      const c = api.issueClientCert('pods-only', []);
      expect(
        await httpsGet(`https://127.0.0.1:${kubeletPort}/logs/?query=kubelet`, { cert: c.certPem, key: c.keyPem }),
      ).toMatchObject({
        status: 403,
        body: 'Forbidden (user=pods-only, verb=get, resource=nodes, subresource(s)=[log])\n',
      });
    });

    it('gzips the journal answer for a client that asks for gzip (as the Go client kubectl uses does)', async () => {
      const cert = api.kubeletClientCert;
      const r = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        request(
          `https://127.0.0.1:${kubeletPort}/logs/?query=kubelet`,
          {
            cert: cert.certPem,
            key: cert.keyPem,
            rejectUnauthorized: false,
            headers: { 'Accept-Encoding': 'gzip' },
            agent: false,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
          },
        )
          .on('error', reject)
          .end();
      });
      expect(r.encoding).toBe('gzip');
      expect(gunzipSync(r.body).toString()).toMatch(entry('kubelet', 'kubelet then B-1'));
    });
  },
);

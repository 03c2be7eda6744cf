// /logs/ through the kubelet API's request pipeline, on a log directory of the test's own and a
// stand-in journalctl: the endpoint switches, the file server, and the node log query's modes,
// codes and words (the kubelet's logServer in kubelet.go and journalServer).
import { chmodSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import type { RuntimeService } from '../../../../src/cri/cri-types.js';
import { nullLogger } from '../../../../src/log/logger.js';
import { RequestAuthenticator } from '../../../../src/server/auth/authenticator.js';
import { alwaysAllow } from '../../../../src/server/auth/subject-access-review.js';
import { KubeletHandler } from '../../../../src/server/kubelet/kubelet-handler.js';
import type { StatsProvider } from '../../../../src/server/stats/stats-provider.js';
import { useTmpDir } from '../../../support/tmp.js';

const tmp = useTmpDir('node-log-handler');
const logDir = join(tmp, 'var-log');
mkdirSync(join(logDir, 'pods', 'ns_p_uid', 'c'), { recursive: true });
mkdirSync(join(logDir, 'containers'));
mkdirSync(join(logDir, 'www'));
writeFileSync(join(logDir, 'syslog'), 'line one\nline two\n');
writeFileSync(join(logDir, 'kube-proxy.log'), 'proxy started\n');
writeFileSync(join(logDir, 'binary.dat'), Buffer.from([0, 1, 2, 3]));
writeFileSync(join(logDir, 'a <b>&"c\'?.txt'), 'odd name\n');
writeFileSync(join(logDir, 'www', 'index.html'), '<p>index</p>\n');
writeFileSync(join(logDir, 'pods', 'ns_p_uid', 'c', '0.log'), 'pod log\n');
symlinkSync(join(logDir, 'pods', 'ns_p_uid', 'c', '0.log'), join(logDir, 'containers', 'p_ns_c-1.log'));
writeFileSync(join(tmp, 'secret'), 'secret\n');
symlinkSync(join(tmp, 'secret'), join(logDir, 'escape'));
utimesSync(join(logDir, 'syslog'), new Date('2026-01-02T03:04:05Z'), new Date('2026-01-02T03:04:05Z'));

// A journalctl that knows the units kubelet and containerd and prints the arguments it was given.
const journalctl = join(tmp, 'journalctl');
writeFileSync(
  journalctl,
  `#!/bin/sh
if [ "$1" = "--field" ]; then printf 'containerd.service\\nkubelet.service\\n'; exit 0; fi
echo "journal entries for: $*"
echo "journalctl: a warning" >&2
`,
);
chmodSync(journalctl, 0o755);

const servers: Server[] = [];
afterAll(() => servers.forEach((s) => s.close()));

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  raw: Buffer;
}

async function serve(o: {
  handler?: boolean;
  query?: boolean;
  debugging?: boolean;
  journal?: string;
}): Promise<(path: string, headers?: Record<string, string>, method?: string) => Promise<Answer>> {
  const handler = new KubeletHandler({
    source: { statuses: () => [], sinceLastRelistMs: () => 0 },
    runtime: {} as RuntimeService,
    podLogsDir: join(logDir, 'pods'),
    stats: {} as StatsProvider,
    configz: () => ({ kubeletconfig: {} }),
    metrics: () => '',
    checks: [],
    enableDebuggingHandlers: o.debugging ?? true,
    nodeLogs: {
      logDir,
      enableSystemLogHandler: o.handler ?? true,
      enableSystemLogQuery: o.query ?? true,
      journalctl: o.journal ?? journalctl,
    },
    authenticator: new RequestAuthenticator({ x509: false, tokens: undefined, anonymous: true }),
    authorizer: alwaysAllow,
    logger: nullLogger,
  });
  const server = createServer((req, res) => void handler.request(req, res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return (path, headers = {}, method = 'GET') =>
    new Promise((resolve, reject) => {
      request({ host: '127.0.0.1', port, path, headers, method, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: raw.toString(), raw });
        });
      })
        .on('error', reject)
        .end();
    });
}

describe('the /logs/ endpoint switches', () => {
  it('answers 405 when the debugging handlers or the system log handler are off', async () => {
    expect(await serve({ debugging: false }).then((get) => get('/logs/'))).toMatchObject({
      status: 405,
      body: 'Debug endpoints are disabled.\n',
    });
    expect(await serve({ handler: false }).then((get) => get('/logs/syslog'))).toMatchObject({
      status: 405,
      body: 'logs endpoint is disabled.\n',
    });
  });

  it('without the query mode, serves the directory and ignores a query', async () => {
    const get = await serve({ query: false });
    expect((await get('/logs/?query=kubelet')).body).toContain('<a href="syslog">syslog</a>');
    expect(await get('/logs/syslog?query=kubelet&boot=7')).toMatchObject({ status: 200, body: 'line one\nline two\n' });
  });
});

describe('the log directory, as net/http FileServer serves it', () => {
  it('lists a directory in Go markup: sorted, directories with a slash, names escaped', async () => {
    const get = await serve({});
    const r = await get('/logs/');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.body).toBe(
      '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n' +
        '<a href="a%20%3Cb%3E&%22c%27%3F.txt">a &lt;b&gt;&amp;&#34;c&#39;?.txt</a>\n' +
        '<a href="binary.dat">binary.dat</a>\n' +
        '<a href="containers/">containers/</a>\n' +
        '<a href="escape">escape</a>\n' +
        '<a href="kube-proxy.log">kube-proxy.log</a>\n' +
        '<a href="pods/">pods/</a>\n' +
        '<a href="syslog">syslog</a>\n' +
        '<a href="www/">www/</a>\n' +
        '</pre>\n',
    );
  });

  it('sends a file with its type, length and modification time, and 304 when unchanged', async () => {
    const get = await serve({});
    const r = await get('/logs/syslog');
    expect(r).toMatchObject({ status: 200, body: 'line one\nline two\n' });
    expect(r.headers).toMatchObject({
      'content-type': 'text/plain; charset=utf-8',
      'content-length': '18',
      'last-modified': 'Fri, 02 Jan 2026 03:04:05 GMT',
    });
    expect((await get('/logs/syslog', { 'If-Modified-Since': 'Fri, 02 Jan 2026 03:04:05 GMT' })).status).toBe(304);
    expect((await get('/logs/binary.dat')).headers['content-type']).toBe('application/octet-stream');
    expect(await get('/logs/containers/p_ns_c-1.log')).toMatchObject({ status: 200, body: 'pod log\n' });
  });

  it("redirects as Go does: a directory to its slash, a file's slash away, index.html to ./; serves a directory's index.html", async () => {
    const get = await serve({});
    expect(await get('/logs/pods')).toMatchObject({ status: 301, headers: { location: 'pods/' } });
    expect(await get('/logs/syslog/')).toMatchObject({ status: 301, headers: { location: '../syslog' } });
    expect(await get('/logs/www/index.html')).toMatchObject({ status: 301, headers: { location: './' } });
    expect(await get('/logs/www/')).toMatchObject({ status: 200, body: '<p>index</p>\n' });
    expect(await get('/logs')).toMatchObject({ status: 301, headers: { location: '/logs/' } });
  });

  it('answers 404 for what is not there or not a clean path, and 403 for a link that leads out of the directory', async () => {
    const get = await serve({});
    expect(await get('/logs/nope')).toMatchObject({ status: 404, body: '404 page not found\n' });
    expect((await get('/logs/../secret')).status).toBe(404);
    expect((await get('/logs/pods%2F..%2F..%2Fsecret')).status).toBe(404);
    expect(await get('/logs/escape')).toMatchObject({ status: 403, body: '403 Forbidden\n' });
  });
});

describe('the node log query (enableSystemLogQuery)', () => {
  it('answers from the journal for a unit it knows, journalctl output and errors as they come', async () => {
    const get = await serve({});
    const r = await get('/logs/?query=kubelet&tailLines=5&sinceTime=2026-01-02T03:04:05Z');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain;charset=UTF-8');
    expect(r.body).toBe(
      'journal entries for: --utc --no-pager --output=short-precise --since=2026-1-2 3:4:5 UTC --pager-end --lines=5 --unit=kubelet\n' +
        'journalctl: a warning\n',
    );
  });

  it('gzips the answer when asked exactly for gzip', async () => {
    const get = await serve({});
    const r = await get('/logs/?query=kubelet&query=containerd', { 'Accept-Encoding': 'gzip' });
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(r.raw).toString()).toContain('--unit=kubelet --unit=containerd\n');
  });

  it("looks for a service the journal does not know in /var/log, and says when there is none (the kubelet's heuristics)", async () => {
    const get = await serve({});
    expect(await get('/logs/?query=kube-proxy')).toMatchObject({ status: 200, body: 'proxy started\n' });
    expect(await get('/logs/?query=nosuchunit')).toMatchObject({
      status: 200,
      body: '\nlog not found for nosuchunit\n',
    });
    expect(await get('/logs/?query=kube-proxy&tailLines=2')).toMatchObject({
      status: 200,
      body: '\noptions present and query resolved to log files for [kube-proxy]\ntry without specifying options\n',
    });
    expect(await get('/logs/?query=kubelet&query=kube-proxy')).toMatchObject({
      body: 'journal entries for: --utc --no-pager --output=short-precise --unit=kubelet\njournalctl: a warning\nproxy started\n',
    });
  });

  it('without a journal, every service is looked for as a file; a journalctl that cannot run is said', async () => {
    const get = await serve({ journal: join(tmp, 'no-journalctl') });
    expect((await get('/logs/?query=kubelet')).body).toBe('\nlog not found for kubelet\n');
  });

  it('serves the one file a query names, inside the log directory only', async () => {
    const get = await serve({});
    expect(await get('/logs/?query=/syslog')).toMatchObject({ status: 200, body: 'line one\nline two\n' });
    expect(await get('/logs/?query=/containers/p_ns_c-1.log')).toMatchObject({
      status: 406,
      body: `query: Invalid value: []string{"/containers/p_ns_c-1.log"}: stat ${join(logDir, logDir, 'pods/ns_p_uid/c/0.log')}: no such file or directory\n`,
    });
    expect(await get('/logs/?query=../../etc/passwd')).toMatchObject({
      status: 406,
      body: `query: Invalid value: []string{"../../etc/passwd"}: stat ${join(logDir, 'etc/passwd')}: no such file or directory\n`,
    });
    expect(await get('/logs/?query=/escape')).toMatchObject({ status: 406 });
  });

  it("refuses in the kubelet's codes and words: 400 unreadable, 406 not runnable", async () => {
    const get = await serve({});
    expect(await get('/logs/?query=kubelet&tailLines=ten')).toMatchObject({
      status: 400,
      body: 'tailLines: Invalid value: "ten": strconv.Atoi: parsing "ten": invalid syntax\n',
    });
    expect(await get('/logs/syslog?query=kubelet')).toMatchObject({
      status: 406,
      body: 'path not allowed in query mode\n',
    });
    expect(await get('/logs/?query=kubelet%3Breboot')).toMatchObject({
      status: 406,
      body: 'query: Invalid value: "kubelet;reboot": input contains unsupported characters\n',
    });
    expect(
      await get('/logs/?query=kubelet&sinceTime=2026-01-02T00:00:00Z&untilTime=2026-01-01T00:00:00Z'),
    ).toMatchObject({
      status: 406,
      body: 'untilTime: Invalid value: 2026-01-01 00:00:00 +0000 UTC: must be after `sinceTime`\n',
    });
    expect(await get('/logs/?query=kubelet&boot=1&pattern=(')).toMatchObject({
      status: 406,
      body: '[boot: Invalid value: 1: must be less than 1, pattern: Invalid value: "(": error parsing regexp: missing closing ): `(`]\n',
    });
  });
});

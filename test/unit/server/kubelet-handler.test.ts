import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod, PodStatus } from 'kubernetes-types/core/v1';
import { nullLogger } from '../../../src/log/logger.js';
import type { RuntimeService } from '../../../src/cri/cri-types.js';
import { RequestAuthenticator } from '../../../src/server/auth/authenticator.js';
import { alwaysAllow, type Authorizer } from '../../../src/server/auth/subject-access-review.js';
import { TokenReviewAuthenticator } from '../../../src/server/auth/token-review.js';
import { pingCheck } from '../../../src/server/healthz.js';
import { KubeletHandler } from '../../../src/server/kubelet/kubelet-handler.js';
import type { StatsProvider } from '../../../src/server/stats/stats-provider.js';
import type { PodStatusEntry } from '../../../src/status/status-manager.js';

const pod: Pod = {
  metadata: { name: 'etcd-n1', namespace: 'kube-system', uid: 'u1' },
  spec: { containers: [{ name: 'etcd' }] },
};
const status: PodStatus = {
  containerStatuses: [
    {
      name: 'etcd',
      ready: true,
      restartCount: 0,
      image: 'etcd',
      imageID: '',
      state: { waiting: { reason: 'ContainerCreating' } },
    },
  ],
};
const entries: PodStatusEntry[] = [
  { uid: 'u1', key: 'kube-system/etcd-n1', pod: pod as PodStatusEntry['pod'], status },
];

let server: Server | undefined;
const agents: Agent[] = [];
afterEach(() => {
  for (const a of agents.splice(0)) a.destroy();
  server?.close();
  server = undefined;
});

interface Answer {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
  /** Resolves once the server has ended the connection (a keep-alive client keeps it otherwise). */
  closed: Promise<void>;
}

async function serve(o: {
  anonymous: boolean;
  debugging: boolean;
  authorizer?: Authorizer;
  tokens?: TokenReviewAuthenticator;
}): Promise<(path: string, headers?: Record<string, string>) => Promise<Answer>> {
  const handler = new KubeletHandler({
    source: { statuses: () => entries, sinceLastRelistMs: () => 0 },
    runtime: {} as RuntimeService,
    podLogsDir: '/var/log/pods',
    stats: {} as StatsProvider,
    configz: () => ({ kubeletconfig: {} }),
    metrics: () => 'kubelet_running_pods 1\n',
    checks: [pingCheck],
    enableDebuggingHandlers: o.debugging,
    nodeLogs: {
      logDir: '/nonexistent',
      enableSystemLogHandler: true,
      enableSystemLogQuery: false,
      journalctl: 'false',
    },
    authenticator: new RequestAuthenticator({ x509: false, tokens: o.tokens, anonymous: o.anonymous }),
    authorizer: o.authorizer ?? alwaysAllow,
    logger: nullLogger,
  });
  server = createServer((req, res) => void handler.request(req, res));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return (path, headers = {}) =>
    new Promise((resolve, reject) => {
      // A keep-alive agent of one socket: the answer says whether the server closed it.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
        let body = '';
        const socket = res.socket;
        const closed = new Promise<void>((done) => (socket.destroyed ? done() : socket.once('close', () => done())));
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          // Keep-alive sockets are pooled, not closed: the agent goes once the server has closed it, or the test ends.
          void closed.then(() => agent.destroy());
          agents.push(agent);
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers, closed });
        });
      })
        .on('error', reject)
        .end();
    });
}

describe('the kubelet API handler', () => {
  it('answers 401 to an anonymous caller unless anonymous auth is enabled', async () => {
    const get = await serve({ anonymous: false, debugging: true });
    expect(await get('/pods')).toMatchObject({ status: 401, body: 'Unauthorized' });
  });

  it('answers 401 to a token TokenReview rejects even with anonymous auth on (never system:anonymous), and closes the connection', async () => {
    const asked: string[] = [];
    const get = await serve({
      anonymous: true,
      debugging: true,
      tokens: new TokenReviewAuthenticator(
        {
          create: async <T>(_path: string, body: T): Promise<T> => {
            const token = (body as { spec: { token: string } }).spec.token;
            const status =
              token === 'good' ? { authenticated: true, user: { username: 'bob' } } : { authenticated: false };
            return { ...(body as object), status } as T;
          },
        },
        60_000,
      ),
      authorizer: { authorize: async (u) => (asked.push(u.name), true) },
    });
    const rejected = await get('/healthz', { authorization: 'Bearer forged' });
    expect(rejected).toMatchObject({ status: 401, body: 'Unauthorized' });
    expect(rejected.headers.connection).toBe('close');
    await rejected.closed;
    expect((await get('/healthz', { authorization: 'Bearer good' })).status).toBe(200);
    expect((await get('/healthz')).headers.connection).toBe('keep-alive');
    expect(asked).toEqual(['bob', 'system:anonymous']);
  });

  it('lets system:anonymous through when enabled, and then asks the authorizer as that user', async () => {
    const asked: string[] = [];
    const get = await serve({
      anonymous: true,
      debugging: true,
      authorizer: {
        authorize: async (u, a) => (
          asked.push(`${u.name}:${u.groups.join(',')}:${a.subresource}`),
          a.subresource === 'healthz'
        ),
      },
    });
    expect(await get('/healthz')).toMatchObject({ status: 200, body: 'ok' });
    expect(asked).toEqual(['system:anonymous:system:unauthenticated:healthz']);
    expect((await get('/pods')).status).toBe(403);
  });

  it('answers 405 on the debugging paths when enableDebuggingHandlers is false', async () => {
    const get = await serve({ anonymous: true, debugging: false });
    expect(await get('/containerLogs/kube-system/etcd-n1/etcd')).toMatchObject({
      status: 405,
      body: 'Debug endpoints are disabled.\n',
    });
    expect((await get('/exec/kube-system/etcd-n1/etcd?command=true&output=1')).status).toBe(405);
    expect((await get('/pods')).status).toBe(200);
  });

  it("answers the kubelet's reasons: a container waiting to start has no log yet", async () => {
    const get = await serve({ anonymous: true, debugging: true });
    expect(await get('/containerLogs/kube-system/etcd-n1/etcd')).toMatchObject({
      status: 400,
      body: 'container "etcd" in pod "etcd-n1" is waiting to start: ContainerCreating',
    });
    expect(await get('/containerLogs/kube-system/etcd-n1/etcd?previous=true')).toMatchObject({
      status: 400,
      body: 'previous terminated container "etcd" in pod "etcd-n1" not found',
    });
    expect(await get('/exec/kube-system/etcd-n1/etcd?command=true&output=1')).toMatchObject({
      status: 400,
      body: 'Upgrade request required\n',
    });
    expect(JSON.parse((await get('/pods')).body).items[0].metadata.name).toBe('etcd-n1');
    expect(await get('/metrics')).toMatchObject({ status: 200, body: 'kubelet_running_pods 1\n' });
  });
});

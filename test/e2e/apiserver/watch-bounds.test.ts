// The node's pods list+watch (the shared reflector, as the mirror pod cache and the API pod source hear it) against a fake API server whose watches misbehave as a broken proxy
// would: ending or cutting every stream right after its first event, or sending one endless line.
// The agent must neither spin (a LIST storm) nor buffer without bound.
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/apiserver/client/api-error.js';
import { ApiClient } from '../../../src/apiserver/client/client.js';
import { Connectivity } from '../../../src/apiserver/client/connectivity.js';
import { loadKubeconfig } from '../../../src/apiserver/client/kubeconfig.js';
import { MirrorPodCache } from '../../../src/apiserver/pods/mirror-pod-cache.js';
import { nodePodsReflector } from '../../../src/apiserver/pods/node-pods.js';
import type { Reflector } from '../../../src/informer/reflector.js';
import type { Pod } from 'kubernetes-types/core/v1';
import { MAX_WATCH_EVENT_BYTES, RESPONSE_TOO_LARGE } from '../../../src/apiserver/client/response-body.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { startFakeApiServer, type FakeApiServer, type RequestRecord } from '../../support/fake-apiserver/index.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

const NODE = 'cp-1';
const MiB = 1024 * 1024;
const dir = useTmpDir('watch-bounds');
let api: FakeApiServer;
let kubeconfig: string;
const running: { pods?: Reflector<Pod>; conn?: Connectivity; client?: ApiClient }[] = [];

beforeAll(async () => {
  api = await startFakeApiServer();
  kubeconfig = api.writeKubeconfig(join(dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
});

afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.pods?.stop();
    r.conn?.stop();
    r.client?.close();
  }
  api.faultWatches(undefined);
});

afterAll(async () => {
  await api?.dispose();
});

function startCache(verbosity = 2) {
  const log = memoryLogger(verbosity);
  const client = new ApiClient(loadKubeconfig(kubeconfig), { timeoutMs: 5000 });
  const conn = new Connectivity(client, log.logger);
  const pods = nodePodsReflector(client, conn, NODE, log.logger);
  const cache = new MirrorPodCache(pods, NODE);
  running.push({ pods, conn, client });
  pods.start();
  return { cache, client, log };
}

function podWatches(): RequestRecord[] {
  return api.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/pods' && /(^|&)watch=/.test(r.query));
}

function podLists(): RequestRecord[] {
  return api.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/pods' && !/(^|&)watch=/.test(r.query));
}

describe('watch streams that end right after their first event', () => {
  for (const fault of ['end-after-first-event', 'cut-after-first-event'] as const) {
    it(`${fault}: watches again from the BOOKMARK's resourceVersion a growing back-off apart, with no LIST after the first`, async () => {
      api.faultWatches(fault);
      const before = podLists().length;
      const watchesBefore = podWatches().length;
      startCache();
      // It does reconnect: the first watch and three more, each after a stream that ended.
      await waitFor(() => podWatches().length - watchesBefore >= 4, { timeoutMs: 60_000, what: 'four watches' });
      const watches = podWatches().slice(watchesBefore, watchesBefore + 4);
      const gaps = watches.slice(1).map((r, i) => r.receivedAt - watches[i]!.receivedAt);
      console.log(`${fault}: gaps between watches ${gaps.map((g) => g.toFixed(0)).join(', ')} ms`);
      // Floor 1 s, doubling (jitter only adds): at least 1, 2 and 4 s apart. Before the back-off
      // they came a few ms apart.
      expect(gaps[0]).toBeGreaterThanOrEqual(1000 - 50);
      expect(gaps[1]).toBeGreaterThanOrEqual(2000 - 50);
      expect(gaps[2]).toBeGreaterThanOrEqual(4000 - 50);
      // The bookmark each stream sent before it ended is where the next one starts.
      const rv = String(api.store.currentRv);
      for (const w of watches.slice(1)) expect(new URLSearchParams(w.query).get('resourceVersion')).toBe(rv);
      expect(podLists().length - before).toBe(1);
    });
  }
});

describe('a watch line that never ends', () => {
  it('is refused past the cap with a clear error, having read a bounded amount', async () => {
    api.faultWatches('huge-line', 100 * MiB);
    const sentBefore = api.hugeLineBytesSent;
    const client = new ApiClient(loadKubeconfig(kubeconfig), { timeoutMs: 5000 });
    running.push({ client });
    const h = client.watch('/api/v1/pods', { fieldSelector: `spec.nodeName=${NODE}` }, () => {});
    let deadline: NodeJS.Timeout | undefined;
    const err = await Promise.race([
      h.done.then(
        () => new Error('the watch ended cleanly'),
        (e: unknown) => e,
      ),
      new Promise<Error>(
        (r) =>
          (deadline = setTimeout(
            () => r(new Error('no error within 60 s: the client is still reading the line')),
            60_000,
          )),
      ),
    ]);
    clearTimeout(deadline);
    h.stop();
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).reason).toBe(RESPONSE_TOO_LARGE);
    expect((err as ApiError).message).toMatch(/watch \/api\/v1\/pods: a watch event is larger than 8 MiB/);
    // The server could only write what the client read plus what the sockets buffer, far from 100 MiB.
    const sent = api.hugeLineBytesSent - sentBefore;
    console.log(
      `huge line: ${(sent / MiB).toFixed(1)} MiB written before the client dropped it (cap ${MAX_WATCH_EVENT_BYTES / MiB} MiB)`,
    );
    expect(sent).toBeGreaterThanOrEqual(MAX_WATCH_EVENT_BYTES);
    expect(sent).toBeLessThan(MAX_WATCH_EVENT_BYTES + 16 * MiB);
  });

  it('the pods watch logs it as a warning and relists after a back-off', async () => {
    api.faultWatches('huge-line', 100 * MiB);
    const { log } = startCache();
    const warning = 'Watch refused an oversized answer; listing again after back-off';
    const line = await waitFor(() => log.lines.find((l) => l.includes(warning)), {
      timeoutMs: 60_000,
      what: 'the oversized-watch warning',
    });
    expect(JSON.parse(line)).toMatchObject({
      severity: 'warning',
      err: expect.stringMatching(/ResponseTooLarge: watch \/api\/v1\/pods: a watch event is larger than 8 MiB/),
    });
    expect(JSON.parse(line).retryIn).toMatch(/^\d+ms$/);
  });
});

describe('a response body over the cap', () => {
  it('is refused with a clear error, and the server still counts as reachable', async () => {
    api.seedObject('pods', {
      metadata: { name: 'big', namespace: 'default', annotations: { filler: 'y'.repeat(4096) } },
      spec: { nodeName: NODE, containers: [{ name: 'c', image: 'i' }] },
    });
    const log = memoryLogger(2);
    const client = new ApiClient(loadKubeconfig(kubeconfig), { timeoutMs: 5000, maxResponseBytes: 1024 });
    const conn = new Connectivity(client, log.logger);
    running.push({ conn, client });
    const err = await client.list('/api/v1/pods', { fieldSelector: `spec.nodeName=${NODE}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      reason: RESPONSE_TOO_LARGE,
      message: 'GET /api/v1/pods: the response is larger than 1 KiB; refused',
    });
    expect(conn.current).toBe('up');
  });
});

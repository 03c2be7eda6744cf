import type { TokenRequest } from 'kubernetes-types/authentication/v1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiPodObjects } from '../../../../src/apiserver/pod-objects/api-pod-objects.js';
import { nullLogger } from '../../../../src/log/logger.js';
import { PodObjectUnavailableError, type PodRef, type TokenRequestFor } from '../../../../src/node/pod-objects.js';
import { FakeGate } from '../client/gate.js';
import { FakeObjectServer } from './fake-object-server.js';

const POD: PodRef = {
  metadata: { uid: 'uid-1', name: 'kube-proxy-x', namespace: 'kube-system' },
  spec: { containers: [{ name: 'c' }], serviceAccountName: 'kube-proxy' },
};
const REQ: TokenRequestFor = { pod: POD, serviceAccountName: 'kube-proxy', expirationSeconds: 3600 };
const TOKEN_PATH = '/api/v1/namespaces/kube-system/serviceaccounts/kube-proxy/token';
const HOUR = 3600_000;

function setup() {
  const gate = new FakeGate();
  const server = new FakeObjectServer();
  let issued = 0;
  let failing: Error | undefined;
  // The server gives what was asked for, from its clock; each token is a new string.
  server.tokenAnswer = (_path, body) => {
    if (failing) throw failing;
    const life = body.spec.expirationSeconds ?? 3600;
    return {
      ...body,
      status: { token: `token-${++issued}`, expirationTimestamp: new Date(Date.now() + life * 1000).toISOString() },
    } satisfies TokenRequest;
  };
  const objects = new ApiPodObjects({ client: server.client, gate, logger: nullLogger, random: () => 0 });
  const changes: string[][] = [];
  objects.onChange((uids) => changes.push([...uids]));
  return { gate, server, objects, changes, fail: (e: Error | undefined) => (failing = e) };
}

describe('service account token manager', () => {
  beforeEach(() => vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') }));
  afterEach(() => vi.useRealTimers());

  it('asks TokenRequest bound to the pod, with audience and expiration, once per (pod, service account, audience, expiration)', async () => {
    const { server, objects } = setup();
    objects.registerPod(POD);
    const t = await objects.getServiceAccountToken(REQ);
    expect(t.token).toBe('token-1');
    expect(t.expiresAt.getTime()).toBe(Date.now() + HOUR);
    const post = server.calls.find((c) => c.verb === 'create');
    expect(post?.path).toBe(TOKEN_PATH);
    expect(post?.body).toEqual({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        audiences: [],
        expirationSeconds: 3600,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'kube-proxy-x', uid: 'uid-1' },
      },
    });
    expect((await objects.getServiceAccountToken(REQ)).token).toBe('token-1');
    // Two reads at once: one request.
    await Promise.all([
      objects.getServiceAccountToken({ ...REQ, audience: 'vault' }),
      objects.getServiceAccountToken({ ...REQ, audience: 'vault' }),
    ]);
    expect(server.count('create')).toBe(2);
    expect((server.calls.at(-1)?.body as TokenRequest).spec.audiences).toEqual(['vault']);
    await objects.getServiceAccountToken({ ...REQ, expirationSeconds: 7200 });
    expect(server.count('create')).toBe(3);
    await objects.stop();
  });

  it("renews a registered pod's token at 80 % of its life and tells the pod", async () => {
    const { server, objects, changes } = setup();
    objects.registerPod(POD);
    await objects.getServiceAccountToken(REQ);
    await vi.advanceTimersByTimeAsync(0.8 * HOUR - 1);
    expect(server.count('create')).toBe(1);
    expect(changes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(server.count('create')).toBe(2);
    expect(changes).toEqual([['uid-1']]);
    expect((await objects.getServiceAccountToken(REQ)).token).toBe('token-2');
    await objects.stop();
  });

  it('renews a long-lived token after 24 h', async () => {
    const { server, objects } = setup();
    objects.registerPod(POD);
    await objects.getServiceAccountToken({ ...REQ, expirationSeconds: 7 * 24 * 3600 });
    await vi.advanceTimersByTimeAsync(24 * HOUR);
    expect(server.count('create')).toBe(2);
    await objects.stop();
  });

  it('keeps the old token while renewal fails and it is valid, then fails; the next success is told', async () => {
    const { server, objects, changes, fail } = setup();
    objects.registerPod(POD);
    await objects.getServiceAccountToken(REQ);
    fail(new Error('etcd is slow'));
    await vi.advanceTimersByTimeAsync(0.8 * HOUR + 5000);
    expect(server.count('create')).toBeGreaterThan(2);
    // A read due for renewal asks again, fails, and gets the old token.
    expect((await objects.getServiceAccountToken(REQ)).token).toBe('token-1');
    expect(changes).toEqual([]);
    await vi.advanceTimersByTimeAsync(0.2 * HOUR);
    await expect(objects.getServiceAccountToken(REQ)).rejects.toThrow(PodObjectUnavailableError);
    fail(undefined);
    await vi.advanceTimersByTimeAsync(60_000 * 1.2);
    expect(changes).toEqual([['uid-1']]);
    expect((await objects.getServiceAccountToken(REQ)).token).toMatch(/^token-\d+$/);
    await objects.stop();
  });

  it('while the server is away the old token is kept without asking; the renewal goes when it is back', async () => {
    const { server, objects, changes, gate } = setup();
    objects.registerPod(POD);
    await objects.getServiceAccountToken(REQ);
    gate.down();
    await vi.advanceTimersByTimeAsync(0.9 * HOUR);
    expect(server.count('create')).toBe(1);
    expect((await objects.getServiceAccountToken(REQ)).token).toBe('token-1');
    gate.up();
    await vi.advanceTimersByTimeAsync(0);
    expect(server.count('create')).toBe(2);
    expect(changes).toEqual([['uid-1']]);
    await objects.stop();
  });

  it("forgets an unregistered pod's tokens: no renewal, a new request if asked again", async () => {
    const { server, objects, changes } = setup();
    objects.registerPod(POD);
    await objects.getServiceAccountToken(REQ);
    objects.unregisterPod('uid-1');
    expect(objects.tokens.size).toBe(0);
    await vi.advanceTimersByTimeAsync(HOUR);
    expect(server.count('create')).toBe(1);
    expect(changes).toEqual([]);
    await objects.stop();
  });

  it('a first request that fails is an unavailable object naming the service account and pod', async () => {
    const { objects, fail } = setup();
    objects.registerPod(POD);
    fail(new Error('serviceaccounts "kube-proxy" not found'));
    await expect(objects.getServiceAccountToken(REQ)).rejects.toThrow(
      /serviceaccount kube-system\/kube-proxy of pod kube-system\/kube-proxy-x.*not found/,
    );
    await objects.stop();
  });
});

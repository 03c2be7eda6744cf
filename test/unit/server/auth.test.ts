import { describe, expect, it } from 'vitest';
import { authorizeRequest } from '../../../src/server/auth/authorize-request.js';
import { requestAttributes } from '../../../src/server/auth/request-attributes.js';
import type { ReviewClient } from '../../../src/server/auth/review-client.js';
import { WebhookAuthorizer, type Authorizer, type NodeAccess } from '../../../src/server/auth/subject-access-review.js';
import { TokenReviewAuthenticator } from '../../../src/server/auth/token-review.js';
import { TtlCache } from '../../../src/server/auth/ttl-cache.js';
import type { UserInfo } from '../../../src/server/auth/user.js';

const alice: UserInfo = { name: 'alice', groups: ['devs', 'system:authenticated'] };

describe('request attributes (pkg/kubelet/server/auth.go, fine-grained authorization)', () => {
  it('maps paths to nodes subresources, with proxy as the fallback where the kubelet has one', () => {
    expect(requestAttributes('GET', '/pods')).toEqual({ verb: 'get', subresources: ['pods', 'proxy'] });
    expect(requestAttributes('GET', '/healthz/syncloop')).toEqual({ verb: 'get', subresources: ['healthz', 'proxy'] });
    expect(requestAttributes('GET', '/configz')).toEqual({ verb: 'get', subresources: ['configz', 'proxy'] });
    expect(requestAttributes('GET', '/stats/summary')).toEqual({ verb: 'get', subresources: ['stats'] });
    expect(requestAttributes('GET', '/metrics/resource')).toEqual({ verb: 'get', subresources: ['metrics'] });
    expect(requestAttributes('GET', '/logs/syslog')).toEqual({ verb: 'get', subresources: ['log'] });
    expect(requestAttributes('POST', '/exec/ns/p/c')).toEqual({ verb: 'create', subresources: ['proxy'] });
    expect(requestAttributes('GET', '/containerLogs/ns/p/c')).toEqual({ verb: 'get', subresources: ['proxy'] });
    expect(requestAttributes('GET', '/podsx')).toEqual({ verb: 'get', subresources: ['proxy'] });
    expect(requestAttributes('HEAD', '/pods').verb).toBe('');
  });

  it('asks create for exec, attach, port-forward and run whatever the method (a WebSocket upgrade is a GET), percent-encoded or not', () => {
    for (const path of ['/exec/ns/p/c', '/attach/ns/p/c', '/portForward/ns/p', '/run/ns/p/c', '/%65xec/ns/p/c'])
      for (const method of ['GET', 'POST', 'HEAD'])
        expect(requestAttributes(method, path)).toEqual({ verb: 'create', subresources: ['proxy'] });
    expect(requestAttributes('GET', '/execute/ns/p/c').verb).toBe('get');
    expect(requestAttributes('GET', '/%73tats/summary')).toEqual({ verb: 'get', subresources: ['stats'] });
  });
});

describe('authorizing a request', () => {
  const by = (allowed: (a: NodeAccess) => boolean | Error): Authorizer & { asked: NodeAccess[] } => {
    const asked: NodeAccess[] = [];
    return {
      asked,
      authorize: async (_u, a) => {
        asked.push(a);
        const r = allowed(a);
        if (r instanceof Error) throw r;
        return r;
      },
    };
  };

  it('tries each subresource in turn and stops at the first allow', async () => {
    const a = by((x) => x.subresource === 'proxy');
    expect(await authorizeRequest(a, alice, 'GET', '/pods')).toEqual({ allowed: true });
    expect(a.asked.map((x) => x.subresource)).toEqual(['pods', 'proxy']);
  });

  it('answers 403 with the kubelet message when every subresource is denied', async () => {
    expect(
      await authorizeRequest(
        by(() => false),
        alice,
        'GET',
        '/pods',
      ),
    ).toEqual({
      allowed: false,
      statusCode: 403,
      message: 'Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[pods proxy])\n',
    });
  });

  it('never allows when a decision cannot be made: 500 Authorization error', async () => {
    const r = await authorizeRequest(
      by(() => new Error('connection refused')),
      alice,
      'POST',
      '/exec/ns/p/c',
    );
    expect(r).toMatchObject({
      allowed: false,
      statusCode: 500,
      message: 'Authorization error (user=alice, verb=create, resource=nodes, subresource=proxy)',
    });
  });
});

describe('webhook caches', () => {
  function reviews(
    answer: (body: { spec: Record<string, unknown> }) => Record<string, unknown>,
  ): ReviewClient & { calls: number; fail: boolean } {
    const c = {
      calls: 0,
      fail: false,
      create: async <T>(_path: string, body: T): Promise<T> => {
        c.calls++;
        if (c.fail) throw new Error('server away');
        return { ...(body as object), status: answer(body as { spec: Record<string, unknown> }) } as T;
      },
    };
    return c;
  }

  it('SubjectAccessReview answers are cached for their TTL, allowed and denied apart; failures are not cached', async () => {
    let now = 0;
    const client = reviews((b) => ({
      allowed: (b.spec.resourceAttributes as { subresource: string }).subresource === 'stats',
    }));
    const authz = new WebhookAuthorizer(client, {
      nodeName: 'n1',
      authorizedTtlMs: 300_000,
      unauthorizedTtlMs: 30_000,
      now: () => now,
    });
    expect(await authz.authorize(alice, { verb: 'get', subresource: 'stats' })).toBe(true);
    expect(await authz.authorize(alice, { verb: 'get', subresource: 'proxy' })).toBe(false);
    expect(client.calls).toBe(2);
    client.fail = true;
    now = 29_000;
    expect(await authz.authorize(alice, { verb: 'get', subresource: 'stats' })).toBe(true);
    expect(await authz.authorize(alice, { verb: 'get', subresource: 'proxy' })).toBe(false);
    now = 31_000;
    await expect(authz.authorize(alice, { verb: 'get', subresource: 'proxy' })).rejects.toThrow('server away');
    expect(await authz.authorize(alice, { verb: 'get', subresource: 'stats' })).toBe(true);
    now = 301_000;
    await expect(authz.authorize(alice, { verb: 'get', subresource: 'stats' })).rejects.toThrow('server away');
  });

  it('TokenReview answers are cached by a hash of the token; an unknown token is cached as unknown', async () => {
    let now = 0;
    const client = reviews((b) =>
      b.spec.token === 'good'
        ? { authenticated: true, user: { username: 'bob', groups: ['g'] } }
        : { authenticated: false },
    );
    const tokens = new TokenReviewAuthenticator(client, 120_000, () => now);
    expect(await tokens.authenticate('good')).toEqual({ name: 'bob', groups: ['g'], uid: undefined, extra: undefined });
    expect(await tokens.authenticate('bad')).toBeUndefined();
    client.fail = true;
    expect((await tokens.authenticate('good'))?.name).toBe('bob');
    expect(await tokens.authenticate('bad')).toBeUndefined();
    now = 121_000;
    await expect(tokens.authenticate('good')).rejects.toThrow();
  });

  it('TtlCache is bounded and drops the least recently used entry', () => {
    const c = new TtlCache<number>(2, () => 0);
    c.set('a', 1, 10);
    c.set('b', 2, 10);
    expect(c.get('a')).toBe(1);
    c.set('c', 3, 10);
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe(1);
    expect(c.size).toBe(2);
  });
});

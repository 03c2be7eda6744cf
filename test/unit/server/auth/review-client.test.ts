import { describe, expect, it } from 'vitest';
import { NodeReviewClient, NoApiConnectionError } from '../../../../src/server/auth/review-client.js';

describe('NodeReviewClient', () => {
  it('sends reviews on the API side’s own client once it is connected, opening no connection of its own', async () => {
    const sent: Array<[string, unknown]> = [];
    let connectionAsked = 0;
    const shared = {
      create: <T>(path: string, body: T): Promise<T> => {
        sent.push([path, body]);
        return Promise.resolve({ ...body, status: { allowed: true } } as T);
      },
    };
    const reviews = new NodeReviewClient(
      () => {
        connectionAsked++;
        return undefined;
      },
      () => shared,
    );
    const answer = await reviews.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      kind: 'SubjectAccessReview',
    });
    expect(answer).toEqual({ kind: 'SubjectAccessReview', status: { allowed: true } });
    expect(sent.map(([p]) => p)).toEqual(['/apis/authorization.k8s.io/v1/subjectaccessreviews']);
    expect(connectionAsked).toBe(0);
  });

  it('fails a review, never allows it, while the node has neither a shared client nor credentials', async () => {
    const reviews = new NodeReviewClient(
      () => undefined,
      () => undefined,
    );
    await expect(reviews.create('/apis/authentication.k8s.io/v1/tokenreviews', {})).rejects.toBeInstanceOf(
      NoApiConnectionError,
    );
  });
});

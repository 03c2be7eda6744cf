import { describe, expect, it } from 'vitest';
import {
  ApiError,
  isAlreadyExists,
  isConflict,
  isRetryable,
  TransportError,
} from '../../../../src/apiserver/client/api-error.js';

describe('ApiError.fromResponse', () => {
  it('reads a Status: code, reason, message', () => {
    const e = ApiError.fromResponse(
      409,
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'pods "x" already exists',
        reason: 'AlreadyExists',
        code: 409,
      }),
      undefined,
    );
    expect([e.code, e.reason, e.message]).toEqual([409, 'AlreadyExists', 'pods "x" already exists']);
    expect(isAlreadyExists(e)).toBe(true);
    expect(isConflict(e)).toBe(false);
  });

  it('takes Retry-After from the header, else from details', () => {
    expect(
      ApiError.fromResponse(
        429,
        JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }),
        '3',
      ).retryAfterSeconds,
    ).toBe(3);
    expect(
      ApiError.fromResponse(
        503,
        JSON.stringify({ kind: 'Status', code: 503, details: { retryAfterSeconds: 5 } }),
        undefined,
      ).retryAfterSeconds,
    ).toBe(5);
  });

  it('copes with a body that is not a Status', () => {
    const e = ApiError.fromResponse(502, '<html>Bad Gateway</html>', undefined);
    expect([e.code, e.reason, e.message]).toEqual([502, '', '<html>Bad Gateway</html>']);
  });
});

describe('what is worth retrying', () => {
  it('no answer, 5xx and 429 are; 4xx are not', () => {
    expect(
      isRetryable(TransportError.from(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))),
    ).toBe(true);
    expect(isRetryable(new ApiError(503, 'ServiceUnavailable', 'x'))).toBe(true);
    expect(isRetryable(new ApiError(429, 'TooManyRequests', 'x', 1))).toBe(true);
    for (const code of [400, 403, 404, 409, 422]) expect(isRetryable(new ApiError(code, '', 'x'))).toBe(false);
  });

  it('classifies transport failures', () => {
    const kind = (code: string, message = 'x'): string =>
      TransportError.from(Object.assign(new Error(message), { code })).kind;
    expect(kind('ECONNREFUSED')).toBe('refused');
    expect(kind('ECONNRESET')).toBe('reset');
    expect(kind('DEPTH_ZERO_SELF_SIGNED_CERT')).toBe('tls');
    expect(kind('ERR_TLS_CERT_ALTNAME_INVALID')).toBe('tls');
    expect(kind('ENOTFOUND')).toBe('dns');
  });
});

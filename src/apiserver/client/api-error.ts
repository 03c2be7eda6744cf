// The two ways a request fails: the server answered with a Status (ApiError), or there was no
// answer at all (TransportError). Which of them are worth retrying is decided here, once.
import type { Status } from 'kubernetes-types/meta/v1';
import { errorMessage } from '../../util/error-message.js';

/** A Status failure the API server returned (404 NotFound, 409 Conflict/AlreadyExists, 422 Invalid...). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    /** From the Retry-After header or `details.retryAfterSeconds`. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  /** From a response: a Status body if there is one, else the status line. */
  static fromResponse(code: number, body: string, retryAfterHeader: string | undefined): ApiError {
    let status: Status | undefined;
    try {
      const parsed = JSON.parse(body) as unknown;
      if (typeof parsed === 'object' && parsed !== null && (parsed as Status).kind === 'Status')
        status = parsed as Status;
    } catch {
      // not JSON: a proxy or a half-started server; the code says enough
    }
    const header =
      retryAfterHeader !== undefined && /^\d+$/.test(retryAfterHeader.trim()) ? Number(retryAfterHeader) : undefined;
    const retryAfter = header ?? status?.details?.retryAfterSeconds;
    const message = status?.message || body.trim().slice(0, 200) || `HTTP ${code}`;
    return new ApiError(status?.code ?? code, status?.reason ?? '', message, retryAfter);
  }
}

export type TransportFailure = 'refused' | 'reset' | 'timeout' | 'tls' | 'dns' | 'other';

/** No usable answer: connection refused or cut, deadline passed, TLS handshake or verification failed. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    readonly kind: TransportFailure,
    message: string,
  ) {
    super(message);
  }

  static from(e: unknown): TransportError {
    if (e instanceof TransportError) return e;
    const err = e as NodeJS.ErrnoException;
    const code = err?.code ?? '';
    const msg = `${code ? code + ': ' : ''}${err?.message ?? String(e)}`;
    if (code === 'ECONNREFUSED') return new TransportError('refused', msg);
    if (
      ['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'EHOSTUNREACH', 'ENETUNREACH'].includes(
        code,
      )
    )
      return new TransportError('reset', msg);
    // HTTP/2: a stream reset, a session that failed or went away under the request.
    if (code.startsWith('ERR_HTTP2_')) return new TransportError('reset', msg);
    if (code === 'ETIMEDOUT') return new TransportError('timeout', msg);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new TransportError('dns', msg);
    if (
      code.startsWith('ERR_TLS') ||
      code.startsWith('ERR_SSL') ||
      /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO|HOSTNAME|ALTNAME/.test(code) ||
      /certificate|ssl|tls/i.test(err?.message ?? '')
    )
      return new TransportError('tls', msg);
    return new TransportError('other', msg);
  }
}

/** Whether trying again later can help: no answer, a server error, or being told to slow down. */
export function isRetryable(e: unknown): boolean {
  if (e instanceof TransportError) return true;
  if (e instanceof ApiError) return e.code >= 500 || e.code === 429;
  return false;
}

/** Whether the failure says "the API server is not (properly) there", as opposed to "this request is wrong". */
export function isUnavailable(e: unknown): boolean {
  return isRetryable(e);
}

/** The server said no to this request as made (bad request, not authenticated, forbidden, invalid): retrying soon cannot help. */
export function isRefused(e: unknown): boolean {
  return e instanceof ApiError && [400, 401, 403, 405, 415, 422].includes(e.code);
}

export function isNotFound(e: unknown): boolean {
  return e instanceof ApiError && e.code === 404;
}

export function isConflict(e: unknown): boolean {
  return e instanceof ApiError && e.code === 409 && e.reason !== 'AlreadyExists';
}

export function isAlreadyExists(e: unknown): boolean {
  return e instanceof ApiError && e.code === 409 && e.reason === 'AlreadyExists';
}

/** One line for logs. */
export function describeError(e: unknown): string {
  if (e instanceof ApiError) return `${e.code}${e.reason ? ' ' + e.reason : ''}: ${e.message}`;
  if (e instanceof TransportError) return `${e.kind}: ${e.message}`;
  return errorMessage(e);
}

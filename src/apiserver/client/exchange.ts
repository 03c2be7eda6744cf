// A request and its answer as the client sees them, whichever protocol carries them: the HTTP/2
// session (api-connection.ts) and the HTTP/1.1 pools (http1-pools.ts) both speak these.
import type { EventEmitter } from 'node:events';
import type { SecureContext } from 'node:tls';

export type Protocol = 'h2' | 'http/1.1';

/** What a response body is read through: an IncomingMessage (HTTP/1.1) or an HTTP/2 stream. */
export interface BodyStream extends EventEmitter {
  destroy(): void;
}

export interface ApiResponse {
  readonly status: number;
  header(name: string): string | undefined;
  readonly body: BodyStream;
  /** The whole body arrived (not cut). */
  readonly complete: boolean;
}

export interface ApiExchange {
  /** The response headers; rejects with a TransportError when no answer came. */
  readonly response: Promise<ApiResponse>;
  /** Ends it now (deadline, given up, watch stopped): the stream is reset, the connection stays. */
  cancel(): void;
}

export interface SendOptions {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** Open a new connection for this one (the current one drains). */
  fresh?: boolean;
  /** A watch: over HTTP/1.1 it holds a connection for minutes, so it goes on the watches' pool. */
  watch?: boolean;
}

export interface ConnectionTls {
  secureContext: SecureContext;
  /** tls-server-name of the kubeconfig, if any. */
  servername?: string;
}

/** A header's one value (Node gives a repeated header as an array). */
export function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

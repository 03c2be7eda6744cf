// Caps on what the API server (or whatever answers in its place) can make the agent hold: a
// response body, and one line of a watch stream. Past a cap the response is dropped with an error
// that says which cap, instead of growing a buffer until the process dies.
import type { BodyStream } from './exchange.js';
import { ApiError, TransportError } from './api-error.js';

const MiB = 1024 * 1024;

/**
 * One response body. The largest this agent asks for is the list of pods bound to its node; etcd
 * refuses objects over 1.5 MiB, so even 110 pods near that size fit with room to spare.
 */
export const MAX_RESPONSE_BYTES = 64 * MiB;

/** One watch event (one object, as JSON, on one line): a few times etcd's 1.5 MiB object limit. */
export const MAX_WATCH_EVENT_BYTES = 8 * MiB;

export const RESPONSE_TOO_LARGE = 'ResponseTooLarge';

function size(n: number): string {
  const round = (x: number): number => Math.round(x * 10) / 10;
  return n >= MiB ? `${round(n / MiB)} MiB` : n >= 1024 ? `${round(n / 1024)} KiB` : `${n} bytes`;
}

export interface Body {
  text: string;
  /** More than the cap was sent; `text` is its first `limit` bytes and the response was dropped. */
  truncated: boolean;
}

/** Reads a body up to `limit` bytes; past that the response is destroyed and what was read is returned, marked truncated. */
export function readBody(res: BodyStream, limit: number = MAX_RESPONSE_BYTES): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const done = (truncated: boolean): void => {
      if (settled) return;
      settled = true;
      resolve({ text: Buffer.concat(chunks).toString('utf8'), truncated });
    };
    res.on('data', (c: Buffer) => {
      if (settled) return;
      if (size + c.length > limit) {
        chunks.push(c.subarray(0, limit - size));
        size = limit;
        done(true);
        res.destroy();
        return;
      }
      chunks.push(c);
      size += c.length;
    });
    const fail = (e: Error): void => {
      if (settled) return;
      settled = true;
      reject(e);
    };
    res.on('end', () => done(false));
    res.on('error', fail);
    res.on('aborted', () => fail(new TransportError('reset', 'response cut')));
    // An HTTP/2 stream reset before its end says only 'close'.
    res.on('close', () => fail(new TransportError('reset', 'response cut')));
  });
}

/** The error for a successful response whose body was over the cap: the server answered, but not usably. */
export function responseTooLarge(what: string, limit: number): ApiError {
  return new ApiError(200, RESPONSE_TOO_LARGE, `${what}: the response is larger than ${size(limit)}; refused`);
}

/**
 * Splits a watch stream into lines without ever holding more than `maxLineBytes` of one line. The
 * search for a newline looks only at the new chunk, so a long line costs linear, not quadratic, time.
 */
export class WatchLineSplitter {
  private pieces: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly what: string,
    private readonly maxLineBytes: number = MAX_WATCH_EVENT_BYTES,
  ) {}

  /** The lines this chunk completes. Throws ApiError ResponseTooLarge once a line passes the cap. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      const length = this.size + nl - start;
      if (length > this.maxLineBytes) throw this.tooLong();
      if (this.size === 0) lines.push(chunk.toString('utf8', start, nl));
      else {
        this.pieces.push(chunk.subarray(start, nl));
        lines.push(Buffer.concat(this.pieces, length).toString('utf8'));
        this.pieces = [];
        this.size = 0;
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.size += chunk.length - start;
      if (this.size > this.maxLineBytes) throw this.tooLong();
      this.pieces.push(chunk.subarray(start));
    }
    return lines;
  }

  private tooLong(): ApiError {
    this.pieces = [];
    this.size = 0;
    return new ApiError(
      200,
      RESPONSE_TOO_LARGE,
      `${this.what}: a watch event is larger than ${size(this.maxLineBytes)} (no newline within it); closing the stream`,
    );
  }
}

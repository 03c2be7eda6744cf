// Caps on what the API server can make the agent hold: a body, and one line of a watch stream.
import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../../src/apiserver/client/api-error.js';
import { readBody, RESPONSE_TOO_LARGE, WatchLineSplitter } from '../../../../src/apiserver/client/response-body.js';

function response(): PassThrough & IncomingMessage {
  return new PassThrough() as PassThrough & IncomingMessage;
}

describe('readBody', () => {
  it('returns a body within the cap whole', async () => {
    const res = response();
    const body = readBody(res, 10);
    res.end(Buffer.from('0123456789'));
    expect(await body).toEqual({ text: '0123456789', truncated: false });
  });

  it('stops at the cap, drops the response and says so', async () => {
    const res = response();
    const body = readBody(res, 10);
    res.write(Buffer.from('01234567'));
    res.write(Buffer.from('89abcdef'));
    expect(await body).toEqual({ text: '0123456789', truncated: true });
    expect(res.destroyed).toBe(true);
  });
});

describe('WatchLineSplitter', () => {
  it('splits lines across chunks, multi-byte characters included', () => {
    const s = new WatchLineSplitter('watch /x', 100);
    const euro = Buffer.from('€');
    expect(s.push(Buffer.from('{"a":1}\n{"b":"'))).toEqual(['{"a":1}']);
    expect(s.push(euro.subarray(0, 1))).toEqual([]);
    expect(s.push(Buffer.concat([euro.subarray(1), Buffer.from('"}\n\n{"c"')]))).toEqual(['{"b":"€"}', '']);
    expect(s.push(Buffer.from(':3}\n'))).toEqual(['{"c":3}']);
  });

  it('refuses a line longer than the cap, inside one chunk or across many, and holds no more than the cap', () => {
    const one = new WatchLineSplitter('watch /x', 8);
    expect(() => one.push(Buffer.from('123456789\n'))).toThrow(/watch \/x: a watch event is larger than 8 bytes/);
    const many = new WatchLineSplitter('watch /api/v1/pods', 1024 * 1024);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let thrown: unknown;
    let pushed = 0;
    try {
      for (; pushed < 1600; pushed++) many.push(chunk); // 100 MiB offered
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).reason).toBe(RESPONSE_TOO_LARGE);
    expect((thrown as ApiError).message).toBe(
      'watch /api/v1/pods: a watch event is larger than 1 MiB (no newline within it); closing the stream',
    );
    expect(pushed).toBe(16); // refused with the chunk that crossed 1 MiB
  });

  it('a line exactly at the cap passes', () => {
    const s = new WatchLineSplitter('watch /x', 4);
    expect(s.push(Buffer.from('abcd\nefgh\n'))).toEqual(['abcd', 'efgh']);
  });
});

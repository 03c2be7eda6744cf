// Copies a readable into the answer without ending it (several sources share one answer), with
// back-pressure, until the source ends, fails or the query's deadline passes.
import type { Readable, Writable } from 'node:stream';

export type CopyEnd = 'ended' | 'aborted' | 'failed';

export function copyInto(source: Readable, out: Writable, signal: AbortSignal): Promise<CopyEnd> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      source.destroy();
      return resolve('aborted');
    }
    const done = (end: CopyEnd): void => {
      signal.removeEventListener('abort', onAbort);
      source.unpipe(out);
      resolve(end);
    };
    const onAbort = (): void => {
      source.destroy();
      done('aborted');
    };
    signal.addEventListener('abort', onAbort, { once: true });
    source.once('end', () => done('ended'));
    source.once('error', () => done(signal.aborted ? 'aborted' : 'failed'));
    source.pipe(out, { end: false });
  });
}

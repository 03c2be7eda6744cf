// The stream sink writes the lines of one task in one write (a flood logs thousands of lines, one
// system call each was most of its removal's time on the event loop), in order, and drops and counts
// lines once the stream broke.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { droppedLogLines, streamSink } from '../../../src/log/logger.js';

function recorder(fail = false): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      writes.push(chunk.toString('utf8'));
      done(fail ? new Error('EPIPE') : null);
    },
  });
  return { stream, writes };
}

const settled = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('streamSink', () => {
  it("writes one task's lines together and in order, and a later task's in a write of its own", async () => {
    const { stream, writes } = recorder();
    const sink = streamSink(stream);
    for (let i = 0; i < 40; i++) sink.write(`line ${i}`);
    expect(writes).toEqual([]);
    await settled();
    sink.write('later');
    await settled();
    expect(writes).toEqual([Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join(''), 'later\n']);
  });

  it('does not hold more than a bounded number of lines', () => {
    const { stream, writes } = recorder();
    const sink = streamSink(stream);
    for (let i = 0; i < 1000; i++) sink.write('x');
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.join('').length).toBeGreaterThan(1000);
  });

  it('drops and counts lines once the stream broke', async () => {
    const { stream } = recorder(true);
    const sink = streamSink(stream);
    sink.write('first');
    await settled();
    await settled();
    const before = droppedLogLines();
    sink.write('a');
    sink.write('b');
    await settled();
    expect(droppedLogLines() - before).toBe(2);
  });
});

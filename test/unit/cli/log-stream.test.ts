// `bootlet logs` rendering of a CRI log: what kubectl logs prints, byte for byte.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { streamLog } from '../../../src/cli/log-stream.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('cli-log-stream');

async function render(content: Buffer | string, timestamps = false): Promise<string> {
  const file = path.join(tmp, `${Math.random().toString(36).slice(2)}.log`);
  fs.writeFileSync(file, content);
  let out = '';
  await streamLog({ file, restart: 0, follow: false, timestamps, write: (s) => (out += s), notice: () => undefined });
  return out;
}

describe('bootlet logs rendering', () => {
  it('joins a character that the runtime split across two partial lines', async () => {
    const e = Buffer.from('é');
    const log = Buffer.concat([
      Buffer.from('2026-01-01T00:00:01Z stdout P a'),
      e.subarray(0, 1),
      Buffer.from('\n2026-01-01T00:00:01Z stdout F '),
      e.subarray(1),
      Buffer.from('b\n'),
    ]);
    expect(await render(log)).toBe('aéb\n');
  });

  it('shows a line that is not CRI format as it is, and adds no newline the file does not have', async () => {
    expect(await render('not a CRI line\n2026-01-01T00:00:01Z stdout F last')).toBe('not a CRI line\nlast');
  });

  it('prints times in the fixed nine-digit form, as the kubelet API does', async () => {
    expect(await render('2026-01-01T00:00:01.5Z stderr F x\n', true)).toBe('2026-01-01T00:00:01.500000000Z x\n');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { createManifestDecoder, type ManifestDecoder } from '../../../src/config/decode/decode-off-thread';
import { WEB_YAML } from './helpers';

let decoder: ManifestDecoder | undefined;
afterEach(async () => {
  await decoder?.close();
  decoder = undefined;
});

/** Counts event-loop turns while `p` runs: a parse on the loop itself allows none. */
async function turnsDuring<T>(p: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let on = true;
  const tick = (): void => {
    if (!on) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await p();
  on = false;
  return { value, turns };
}

describe('manifest decoder', () => {
  it('decodes a small file on the event loop', async () => {
    decoder = createManifestDecoder();
    const r = await decoder.decode(Buffer.from(WEB_YAML));
    expect(r.ok && r.pod.metadata?.name).toBe('web');
  });

  it('decodes a big file in a worker thread while the event loop keeps turning', async () => {
    decoder = createManifestDecoder({ inlineMaxBytes: 1024 });
    const padding = `# ${'x'.repeat(100)}\n`.repeat(40_000); // ~4 MiB of comments
    const { value, turns } = await turnsDuring(() => decoder!.decode(Buffer.from(WEB_YAML + padding)));
    expect(value.ok && value.pod.metadata?.name).toBe('web');
    expect(turns).toBeGreaterThan(0);
  });

  it('refuses a hostile big file with the limit it crossed, and keeps working after', async () => {
    decoder = createManifestDecoder({ inlineMaxBytes: 1024 });
    const hostile = `apiVersion: v1\nkind: Pod\nx: [${'1,'.repeat(2 * 1024 * 1024)}1]\n`;
    const r = await decoder.decode(Buffer.from(hostile));
    expect(!r.ok && r.message).toBe('refused: more than 50000 values (the limit for a manifest)');
    const again = await decoder.decode(Buffer.from(WEB_YAML + ' '.repeat(2048)));
    expect(again.ok).toBe(true);
  });

  it('refuses a file that takes longer than the deadline, and the next one still decodes', async () => {
    decoder = createManifestDecoder({ inlineMaxBytes: 1024, deadlineMs: 1 });
    const r = await decoder.decode(Buffer.from(WEB_YAML + ' '.repeat(1024 * 1024)));
    expect(!r.ok && r.message).toBe('refused: parsing took longer than 0.001 s');
    await decoder.close();
    decoder = createManifestDecoder({ inlineMaxBytes: 1024 });
    expect((await decoder.decode(Buffer.from(WEB_YAML + ' '.repeat(2048)))).ok).toBe(true);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import {
  createManifestDecoder,
  decodesInline,
  type ManifestDecoder,
} from '../../../src/config/decode/decode-off-thread';
import { loadManifest } from '../../../src/config/manifest';
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

  it('sends a small file with thousands of values to the worker: parsing costs per value, not per byte', async () => {
    const head = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c, image: i}]\n';
    // 15,000 values in 30 KiB once held the event loop for 250 ms.
    const flow = Buffer.from(`${head}x: [${'1,'.repeat(15_000)}1]\n`);
    expect(flow.length).toBeLessThan(32 * 1024);
    expect(decodesInline(flow)).toBe(false);
    expect(decodesInline(Buffer.from(`${head}x:\n${'- 1\n'.repeat(4000)}`))).toBe(false);
    // What kubeadm writes stays on the event loop, with room to spare; so does a long comment.
    for (const f of ['kube-apiserver', 'etcd', 'kube-controller-manager', 'kube-scheduler']) {
      expect(
        decodesInline(readFileSync(new URL(`../../fixtures/kubeadm/1.34/manifests/${f}.yaml`, import.meta.url))),
        f,
      ).toBe(true);
    }
    expect(decodesInline(Buffer.from(`${WEB_YAML}# ${'x'.repeat(20_000)}\n`))).toBe(true);
    decoder = createManifestDecoder();
    const { value, turns } = await turnsDuring(() => decoder!.decode(flow));
    expect(value.ok).toBe(true);
    expect(turns).toBeGreaterThan(0);
  });

  it('loads a costly file whole in the worker: the same static pod as on the event loop, the loop free meanwhile', async () => {
    // 15,000 env entries: defaults, rules and the UID hash cost 40-60 ms on the loop.
    const env = Array.from({ length: 15_000 }, (_, i) => ({ name: `E${i}`, value: 'v'.repeat(20) }));
    const bytes = Buffer.from(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'big' },
        spec: { containers: [{ name: 'c', image: 'i', env }] },
      }),
    );
    const now = new Date('2025-01-02T03:04:05.678Z');
    decoder = createManifestDecoder();
    const { value, turns } = await turnsDuring(() => decoder!.load('/m/big.json', bytes, 'node-a', now));
    expect(turns).toBeGreaterThan(0);
    expect(value).toEqual(loadManifest('/m/big.json', bytes, 'node-a', now));
    expect('pod' in value && value.pod.key).toBe('default/big-node-a');
    // Refusals name the file, wherever they come from.
    const refused = await decoder.load(
      '/m/bad.yaml',
      Buffer.from(`apiVersion: v1\nkind: Pod\nx: [${'1,'.repeat(60_000)}1]\n`),
      'node-a',
      now,
    );
    expect(refused).toEqual({
      error: { file: '/m/bad.yaml', message: 'more than 50000 values (the limit for a manifest)', limit: true },
    });
  });

  it('refuses a hostile big file with the limit it crossed, and keeps working after', async () => {
    decoder = createManifestDecoder({ inlineMaxBytes: 1024 });
    const hostile = `apiVersion: v1\nkind: Pod\nx: [${'1,'.repeat(2 * 1024 * 1024)}1]\n`;
    const r = await decoder.decode(Buffer.from(hostile));
    expect(!r.ok && r.message).toBe('more than 50000 values (the limit for a manifest)');
    const again = await decoder.decode(Buffer.from(WEB_YAML + ' '.repeat(2048)));
    expect(again.ok).toBe(true);
  });

  it("the thread's start has its own deadline: a thread not ready in time refuses the file, and a new decoder still decodes", async () => {
    // A file's deadline starts once the thread is ready (from source tsx compiles the worker first,
    // seconds on a loaded machine), so the start is bounded apart; no thread starts in 1 ms.
    decoder = createManifestDecoder({ inlineMaxBytes: 1024, startDeadlineMs: 1 });
    const r = await decoder.decode(Buffer.from(WEB_YAML + ' '.repeat(2048)));
    expect(!r.ok && r.message).toBe('could not start the manifest parser thread: not ready after 0.001 s');
    await decoder.close();
    decoder = createManifestDecoder({ inlineMaxBytes: 1024 });
    expect((await decoder.decode(Buffer.from(WEB_YAML + ' '.repeat(2048)))).ok).toBe(true);
  });

  it('refuses a file that takes longer than the deadline, and the next one still decodes', async () => {
    decoder = createManifestDecoder({ inlineMaxBytes: 1024, deadlineMs: 1 });
    const r = await decoder.decode(Buffer.from(WEB_YAML + ' '.repeat(1024 * 1024)));
    expect(!r.ok && r.message).toBe('parsing took longer than 0.001 s');
    await decoder.close();
    decoder = createManifestDecoder({ inlineMaxBytes: 1024 });
    expect((await decoder.decode(Buffer.from(WEB_YAML + ' '.repeat(2048)))).ok).toBe(true);
  });
});

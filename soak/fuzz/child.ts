// Runs generated manifests through bootlet's loader as the agent does (small files on the event
// loop, big ones through the off-thread decoder, over 10 MiB refused by the reader), in a process of
// its own so that a V8 abort is counted, not fatal to the soak. Reports one JSON line per event on
// stdout: progress, each crash, and the totals.
//   node --max-opt=1 --import tsx soak/fuzz/child.ts <seed> <count> <start>
import { createManifestDecoder, decodesInline } from '../../src/config/decode/decode-off-thread.js';
import { MAX_MANIFEST_BYTES } from '../../src/config/read-manifest.js';
import { generateManifests, type ManifestClass } from './arbitraries.js';

export interface FuzzTotals {
  readonly processed: number;
  readonly byClass: Record<ManifestClass, { total: number; accepted: number }>;
  readonly crashes: number;
  /** The longest time the event loop was held by one manifest, ms. */
  /** The longest time loading one manifest held the event loop itself (cheap files, loaded on the loop), ms. */
  readonly longestBlockMs: number;
  readonly longestBlockShape: string;
  /**
   * How late the event loop ran at worst while a costly file was in the worker: the hand-over and
   * the result's arrival, plus any time the main thread waited for a CPU the worker was using.
   */
  readonly longestLatenessMs: number;
  /** Which file, and how much of it was the hand-over (the synchronous part of the call). */
  readonly longestLatenessShape: string;
  /** The 99th percentile of the same, ms. */
  readonly p99BlockMs: number;
  readonly p99LatenessMs: number;
  /** The five longest, for a look: index, shape, bytes, ms. */
  readonly topBlocks: { index: number; shape: string; bytes: number; ms: number }[];
  readonly offThread: number;
  readonly peakRssBytes: number;
  readonly startRssBytes: number;
  readonly biggestBytes: number;
  /** Wall time per class of input, ms (the worker's time included). */
  readonly msByShape: Record<string, number>;
}

export type FuzzMessage =
  | { readonly type: 'at'; readonly index: number; readonly shape: string }
  | { readonly type: 'crash'; readonly index: number; readonly shape: string; readonly error: string }
  | { readonly type: 'done'; readonly totals: FuzzTotals };

const p99 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(xs.length * 0.99) - 1)] ?? 0;

const send = (m: FuzzMessage): void => void process.stdout.write(`${JSON.stringify(m)}\n`);

/**
 * Measures how late timers fire while it runs: a block of the event loop shows as lateness. Used
 * while a big manifest is in the worker thread (its result arrives as a message the loop decodes).
 */
class LatenessProbe {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  max = 0;
  start(): void {
    this.last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      this.max = Math.max(this.max, now - this.last - 1);
      this.last = now;
    }, 1);
  }
  stop(): number {
    clearInterval(this.timer);
    const late = Math.max(this.max, performance.now() - this.last - 1);
    this.max = 0;
    return late;
  }
}

async function main(): Promise<void> {
  const [seed, count, start] = process.argv.slice(2).map(Number) as [number, number, number];
  const all = generateManifests(seed, count);
  const decoder = createManifestDecoder();
  // Warm up (the first parse compiles the parser's code), as an agent that has read its manifests.
  for (const g of generateManifests(seed ^ 0x5eed, 20)) {
    const b = g.make();
    if (b.length <= MAX_MANIFEST_BYTES) await decoder.load('/warm-up.yaml', b, 'soak-node', new Date());
  }
  const probe = new LatenessProbe();
  const file = '/etc/kubernetes/manifests/generated.yaml';
  const byClass: FuzzTotals['byClass'] = {
    valid: { total: 0, accepted: 0 },
    invalid: { total: 0, accepted: 0 },
    hostile: { total: 0, accepted: 0 },
  };
  let crashes = 0;
  let longest = 0;
  let longestShape = '';
  let offThread = 0;
  let biggest = 0;
  const startRss = process.memoryUsage().rss;
  const msByShape: Record<string, number> = {};
  const blocks: number[] = [];
  const lateness: number[] = [];
  let latenessShape = '';
  const top: FuzzTotals['topBlocks'] = [];
  for (let i = start; i < all.length; i++) {
    const g = all[i]!;
    send({ type: 'at', index: i, shape: g.shape });
    const bytes = g.make();
    biggest = Math.max(biggest, bytes.length);
    byClass[g.class].total++;
    let blocked = 0;
    let late = -1;
    const began = performance.now();
    try {
      let accepted = false;
      if (bytes.length > MAX_MANIFEST_BYTES) {
        accepted = false; // the reader refuses it before any parsing
      } else {
        // As the file source does it: a cheap file is loaded at once, on the event loop (all of
        // it happens inside the call); a costly one in the decoder's worker thread, while a probe
        // measures how late the loop runs (the result's arrival is a turn of its own).
        if (!decodesInline(bytes)) offThread++;
        const t0 = performance.now();
        const pending = decoder.load(file, bytes, 'soak-node', new Date());
        const handOver = performance.now() - t0;
        probe.start();
        const loaded = await pending;
        const waited = probe.stop();
        if (decodesInline(bytes)) blocked = handOver;
        else {
          late = Math.max(handOver, waited);
          if (late > Math.max(0, ...lateness))
            latenessShape = `${g.shape} (${bytes.length} bytes; hand-over ${handOver.toFixed(1)} ms)`;
        }
        accepted = 'pod' in loaded;
      }
      if (accepted) byClass[g.class].accepted++;
    } catch (err) {
      crashes++;
      send({
        type: 'crash',
        index: i,
        shape: g.shape,
        error: err instanceof Error ? (err.stack ?? err.message).slice(0, 800) : String(err),
      });
    }
    msByShape[g.shape] = (msByShape[g.shape] ?? 0) + performance.now() - began;
    if (late >= 0) lateness.push(late);
    else blocks.push(blocked);
    top.push({ index: i, shape: g.shape, bytes: bytes.length, ms: blocked });
    top.sort((a, b) => b.ms - a.ms);
    top.length = Math.min(top.length, 5);
    if (blocked > longest) {
      longest = blocked;
      longestShape = `${g.shape} (${bytes.length} bytes)`;
    }
    // Let timers and the worker's messages run between manifests, as between two files in the agent.
    await new Promise((r) => setImmediate(r));
  }
  await decoder.close();
  send({
    type: 'done',
    totals: {
      processed: all.length - start,
      byClass,
      crashes,
      longestBlockMs: longest,
      longestBlockShape: longestShape,
      p99BlockMs: p99(blocks),
      longestLatenessMs: Math.max(0, ...lateness),
      longestLatenessShape: latenessShape,
      p99LatenessMs: p99(lateness),
      topBlocks: top,
      offThread,
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      startRssBytes: startRss,
      biggestBytes: biggest,
      msByShape,
    },
  });
}

main().catch((err: unknown) => {
  send({
    type: 'crash',
    index: -1,
    shape: 'the fuzz child itself',
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  process.exit(1);
});

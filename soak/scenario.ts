// What a scenario gets from the runner, and the small helpers every scenario uses.
import type { DuplicateWatch } from './census.js';
import type { SoakNode } from './node.js';
import type { Figures } from './table.js';

export interface ScenarioContext {
  readonly node: SoakNode;
  readonly short: boolean;
  readonly figures: Figures;
  readonly watch: DuplicateWatch;
  readonly random: () => number;
  /** A progress line on stderr (the table goes to stdout). */
  log(msg: string): void;
}

export interface Scenario {
  readonly name: string;
  /** One line for --list. */
  readonly about: string;
  /** False for the scenarios that run in process only (no containerd needed). */
  readonly needsNode: boolean;
  /**
   * In --short, runs at the same time as the other scenarios marked so (their durations are fixed:
   * a minute of flapping, two of soak), to keep CI's run within a few minutes.
   */
  readonly besideOthersInShort?: boolean;
  run(ctx: ScenarioContext): Promise<void>;
}

/** A small seeded generator (mulberry32), so a run can be repeated with --seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const pick = <T>(random: () => number, xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

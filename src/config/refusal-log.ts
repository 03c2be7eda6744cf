// How refused manifests are logged: once per file and reason, and then only counted. A file whose
// content changes at every read (a log file linked in, a generator gone wrong) is refused at every
// read, for a new reason each time as often as not; logging each of those turned one bad file into
// a flood. So each file gets a small budget of full lines (a burst, refilled slowly); a refusal for
// a reason already logged, or beyond the budget, is counted, and the count is told in one line
// "Static pod manifest refused again" (times, since, the latest reason) at most every few minutes,
// and when the file is accepted or goes away.
import type { Logger } from '../log/logger';
import type { ManifestError } from './types';
import { isoTime } from '../util/iso-time.js';

export interface RefusalLogOptions {
  /** ms since the epoch. */
  readonly now?: () => number;
  /** Full lines a file may log at once (an operator fixing a file sees each new reason). */
  readonly burst?: number;
  /** One more full line is allowed per this long. */
  readonly refillMs?: number;
  /** The count of refusals not logged is told at most this often. */
  readonly summaryEveryMs?: number;
}

/** Reasons remembered per file; a file refused for more distinct reasons repeats the oldest. */
const MAX_REASONS_PER_FILE = 16;

interface FileRefusals {
  readonly reasons: Set<string>;
  tokens: number;
  tokensAt: number;
  /** Refusals not logged since the last line about this file. */
  unlogged: number;
  unloggedSince: number;
  latest: string;
  /** When the count was last told (or the first line logged): it is told at most every summaryEveryMs. */
  countToldAt: number;
}

export class RefusalLog {
  private readonly files = new Map<string, FileRefusals>();
  private readonly now: () => number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly summaryEveryMs: number;

  constructor(
    private readonly log: Logger,
    opts: RefusalLogOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.burst = opts.burst ?? 5;
    this.refillMs = opts.refillMs ?? 60_000;
    this.summaryEveryMs = opts.summaryEveryMs ?? 5 * 60_000;
  }

  /** The file was refused: one line now, or one more in the count. */
  refused(e: ManifestError): void {
    const t = this.now();
    let f = this.files.get(e.file);
    if (!f) {
      f = {
        reasons: new Set(),
        tokens: this.burst,
        tokensAt: t,
        unlogged: 0,
        unloggedSince: t,
        latest: e.message,
        countToldAt: t,
      };
      this.files.set(e.file, f);
    }
    const refill = Math.floor((t - f.tokensAt) / this.refillMs);
    if (refill > 0) {
      f.tokens = Math.min(this.burst, f.tokens + refill);
      f.tokensAt += refill * this.refillMs;
    }
    f.latest = e.message;
    if (!f.reasons.has(e.message) && f.tokens >= 1) {
      f.tokens--;
      if (f.reasons.size >= MAX_REASONS_PER_FILE) f.reasons.delete(f.reasons.values().next().value as string);
      f.reasons.add(e.message);
      this.log.error('Static pod manifest refused', {
        file: e.file,
        ...(e.podKey ? { pod: e.podKey } : {}),
        err: e.message,
      });
      return;
    }
    if (f.unlogged === 0) f.unloggedSince = t;
    f.unlogged++;
    if (t - f.countToldAt >= this.summaryEveryMs) this.tellCount(e.file, f, t);
  }

  /** The file is accepted now, or gone: the count not yet told is told, and its next refusal is logged. */
  settled(file: string): void {
    const f = this.files.get(file);
    if (!f) return;
    this.files.delete(file);
    if (f.unlogged > 0) this.tellCount(file, f, this.now());
  }

  private tellCount(file: string, f: FileRefusals, t: number): void {
    this.log.error('Static pod manifest refused again', {
      file,
      times: f.unlogged,
      since: isoTime(f.unloggedSince),
      err: f.latest,
    });
    f.unlogged = 0;
    f.countToldAt = t;
  }
}

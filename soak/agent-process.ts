// The packaged agent as the soak runs it: the arguments the e2e tests give it (test/support/agent.ts),
// log lines parsed once as they arrive and kept in a bounded window (a run can last an hour at
// --v=2), and every exit we did not ask for remembered as a crash.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { agentArgs, BOOTLET_EXE, type AgentOptions } from '../test/support/agent.js';

export type LogRecord = Record<string, unknown> & { readonly seq: number };

export interface AgentExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** True when the soak itself stopped it. */
  readonly expected: boolean;
  /** The last lines it wrote (non-JSON lines included: a V8 abort is not JSON). */
  readonly tail: string[];
}

/** Agents not yet exited: killed when the soak itself ends, however it ends, so none outlives it. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

const KEEP_RECORDS = 50_000;
const KEEP_RAW = 40;

export class AgentProcess {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<AgentExit>;
  /** How many lines said "BUG:" (an unhandled rejection or uncaught exception, survived). */
  bugLines = 0;
  private records: LogRecord[] = [];
  private raw: string[] = [];
  private seq = 0;
  private stopping = false;
  private exit: AgentExit | undefined;
  private readonly listeners = new Set<(r: LogRecord) => void>();

  private readonly logFile: WriteStream | undefined;

  /** `logFile`: every line is also written there, for a look after the run. */
  constructor(o: AgentOptions, logFile?: string) {
    if (!existsSync(BOOTLET_EXE)) throw new Error(`${BOOTLET_EXE} is missing: run npm run build first`);
    this.proc = spawn(BOOTLET_EXE, agentArgs(o), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.logFile = logFile === undefined ? undefined : createWriteStream(logFile, { flags: 'a' });
    if (!this.proc.pid) throw new Error('could not start build/bootlet');
    this.pid = this.proc.pid;
    live.add(this.proc);
    const carry = { out: '', err: '' };
    const onData = (which: 'out' | 'err') => (chunk: Buffer) => {
      const parts = (carry[which] + chunk.toString('utf8')).split('\n');
      carry[which] = parts.pop() ?? '';
      for (const l of parts) if (l.trim()) this.line(l);
    };
    this.proc.stdout?.on('data', onData('out'));
    this.proc.stderr?.on('data', onData('err'));
    this.exited = new Promise((resolve) =>
      this.proc.once('exit', (code, signal) => {
        live.delete(this.proc);
        this.exit = { code, signal, expected: this.stopping, tail: [...this.raw] };
        this.logFile?.end(`--- exit code ${code} signal ${signal}${this.stopping ? ' (stopped by the soak)' : ''}\n`);
        resolve(this.exit);
      }),
    );
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** Sequence number of the next line: `since` for waitFor and find. */
  get mark(): number {
    return this.seq;
  }

  private line(l: string): void {
    this.logFile?.write(`${l}\n`);
    this.raw.push(l.length > 2000 ? `${l.slice(0, 2000)}…` : l);
    if (this.raw.length > KEEP_RAW) this.raw.shift();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(l) as Record<string, unknown>;
    } catch {
      return;
    }
    const r = { ...parsed, seq: this.seq++ } as LogRecord;
    if (typeof r.msg === 'string' && r.msg.startsWith('BUG:')) this.bugLines++;
    this.records.push(r);
    if (this.records.length > KEEP_RECORDS * 2) this.records = this.records.slice(-KEEP_RECORDS);
    for (const fn of this.listeners) fn(r);
  }

  /** Records (still kept) from `since` on that match. */
  find(pred: (r: LogRecord) => boolean, since = 0): LogRecord[] {
    return this.records.filter((r) => r.seq >= since && pred(r));
  }

  /** Calls `fn` for every record from now on; returns the unsubscribe. */
  on(fn: (r: LogRecord) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The first record from `since` on that matches, waiting up to `timeoutMs`. */
  waitFor(pred: (r: LogRecord) => boolean, what: string, timeoutMs: number, since = 0): Promise<LogRecord> {
    const seen = this.find(pred, since)[0];
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const off = this.on((r) => {
        if (!pred(r)) return;
        done();
        resolve(r);
      });
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for the agent to log ${what}`));
      }, timeoutMs);
      const done = (): void => {
        off();
        clearTimeout(timer);
      };
    });
  }

  /** Stops it on purpose (a signal the soak chose), and waits for the exit. */
  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<AgentExit> {
    this.stopping = true;
    if (this.exit) return this.exit;
    this.proc.kill(signal);
    return this.exited;
  }
}

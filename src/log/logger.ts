// Structured logging in the kubelet's two formats: klog text (the default) and JSON
// (`--logging-format=json`), with klog-style verbosity (`--v`). One line per event.

export type LogFormat = 'text' | 'json';
export type Severity = 'I' | 'W' | 'E';
export type LogFields = Record<string, string | number | boolean | undefined | null>;

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Verbose output, printed only when `--v` is at least `level`. */
  v(level: number): { info(msg: string, fields?: LogFields): void; enabled: boolean };
  /** A logger that adds `fields` to every line (e.g. the component or the pod). */
  with(fields: LogFields): Logger;
}

export interface LogSink {
  write(line: string): void;
}

export interface LoggerOptions {
  format: LogFormat;
  verbosity: number;
  /**
   * stderr is the systemd journal: each line starts with its syslog priority (`<3>` error,
   * `<4>` warning, `<6>` info, `<7>` verbose), which journald takes as the entry's priority and
   * strips, so that `journalctl -p err` finds the errors.
   */
  journal?: boolean;
  sink?: LogSink;
  now?: () => Date;
}

let droppedLines = 0;

/** Log lines dropped because stderr was broken (the metric's value). */
export function droppedLogLines(): number {
  return droppedLines;
}

/** Lines held for one write are written sooner than the end of the task once there are this many. */
const MAX_BATCH_LINES = 256;

/** Sinks holding lines not yet written: written at exit, so process.exit loses none. */
const unwritten = new Set<() => void>();
let exitHookSet = false;

/**
 * A sink on a stream that may break: a closed pipe or a journal socket that went away. Without an
 * error listener the EPIPE is an uncaught exception, whose log line fails again: a loop that held
 * a core. Once broken, lines are dropped and counted; the agent goes on without its log, as it
 * would go on without its API server.
 *
 * The lines of one task are written together when it ends (a microtask): a write to a pipe or the
 * journal is a system call that wakes the reader, and a flood logs thousands of lines in tasks of
 * 32 pods each, one write per line being most of the time the removal spent on the event loop.
 */
export function streamSink(stream: NodeJS.WritableStream): LogSink {
  let broken = false;
  let pending: string[] = [];
  const flush = (): void => {
    unwritten.delete(flush);
    if (pending.length === 0) return;
    const lines = pending;
    pending = [];
    if (broken) {
      droppedLines += lines.length;
      return;
    }
    try {
      stream.write(lines.join('\n') + '\n');
    } catch {
      broken = true;
      droppedLines += lines.length;
    }
  };
  stream.on('error', () => {
    broken = true;
  });
  return {
    write(line) {
      if (broken) {
        droppedLines++;
        return;
      }
      pending.push(line);
      if (pending.length >= MAX_BATCH_LINES) return flush();
      if (unwritten.has(flush)) return;
      unwritten.add(flush);
      if (!exitHookSet) {
        exitHookSet = true;
        process.on('exit', () => {
          for (const f of [...unwritten]) f();
        });
      }
      queueMicrotask(flush);
    },
  };
}

let stderrSinkOnce: LogSink | undefined;
const stderrSink: LogSink = { write: (line) => (stderrSinkOnce ??= streamSink(process.stderr)).write(line) };

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function klogHeader(sev: Severity, d: Date): string {
  const micros = pad(d.getUTCMilliseconds(), 3) + '000';
  return `${sev}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${micros} ${String(process.pid).padStart(7)}`;
}

function quote(value: string): string {
  return JSON.stringify(value);
}

function formatText(sev: Severity, d: Date, msg: string, fields: LogFields): string {
  let line = `${klogHeader(sev, d)}] ${quote(msg)}`;
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    line += ` ${k}=${typeof v === 'string' ? quote(v) : String(v)}`;
  }
  return line;
}

function formatJson(sev: Severity, d: Date, verbosity: number, msg: string, fields: LogFields): string {
  const record: Record<string, unknown> = { ts: d.getTime() / 1000, v: verbosity, msg };
  if (sev === 'E') record.err = fields.err ?? msg;
  // err is a field like any other on info and warning lines; only an error line defaults it to msg.
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && !(k === 'err' && sev === 'E')) record[k] = v;
  if (sev === 'W') record.severity = 'warning';
  return JSON.stringify(record);
}

/** sd-daemon(3) priorities: err, warning, info, debug (klog's verbose lines). */
function syslogPriority(sev: Severity, level: number): number {
  if (sev === 'E') return 3;
  if (sev === 'W') return 4;
  return level > 0 ? 7 : 6;
}

export function createLogger(opts: LoggerOptions, base: LogFields = {}): Logger {
  const sink = opts.sink ?? stderrSink;
  const now = opts.now ?? (() => new Date());
  const emit = (sev: Severity, level: number, msg: string, fields: LogFields = {}): void => {
    const all = { ...base, ...fields };
    const d = now();
    const line = opts.format === 'json' ? formatJson(sev, d, level, msg, all) : formatText(sev, d, msg, all);
    sink.write(opts.journal ? `<${syslogPriority(sev, level)}>${line}` : line);
  };
  return {
    info: (msg, fields) => emit('I', 0, msg, fields),
    warn: (msg, fields) => emit('W', 0, msg, fields),
    error: (msg, fields) => emit('E', 0, msg, fields),
    v(level) {
      const enabled = opts.verbosity >= level;
      return { enabled, info: (msg, fields) => (enabled ? emit('I', level, msg, fields) : undefined) };
    },
    with: (fields) => createLogger(opts, { ...base, ...fields }),
  };
}

/** A logger that drops everything; for unit tests of parts that log. */
export const nullLogger: Logger = createLogger({ format: 'text', verbosity: -1, sink: { write: () => {} } });

/** Collects lines in memory; for tests that assert what was logged. */
export function memoryLogger(verbosity = 10): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger({ format: 'json', verbosity, sink: { write: (l) => lines.push(l) } }), lines };
}

// One line of a container log file in the CRI format the runtime writes
// (`<RFC3339Nano time> <stdout|stderr> <P|F> <content>`): P marks a partial line that the next
// line continues, F a full one.

export interface CriLogLine {
  readonly time: string;
  readonly stream: 'stdout' | 'stderr';
  readonly partial: boolean;
  readonly content: string;
}

const LINE = /^(\S+) (stdout|stderr) ([PF])(?:\S*)? ?(.*)$/s;

/** The parsed line, or undefined when it is not in the CRI format (then it is shown as it is). */
export function parseCriLogLine(line: string): CriLogLine | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  return { time: m[1]!, stream: m[2] as 'stdout' | 'stderr', partial: m[3] === 'P', content: m[4]! };
}

/** What `kubectl logs` prints for a line: its content, with a newline unless it is partial. */
export function renderCriLogLine(line: string, timestamps: boolean): string {
  const l = parseCriLogLine(line);
  if (!l) return `${line}\n`;
  return `${timestamps ? `${l.time} ` : ''}${l.content}${l.partial ? '' : '\n'}`;
}

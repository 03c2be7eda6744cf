// Line and column of an offset in the text, for error messages.

export interface Position {
  readonly line: number;
  readonly column: number;
}

/** 1-based line and column of a character offset. */
export function lineColumnAt(text: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: end - lineStart + 1 };
}

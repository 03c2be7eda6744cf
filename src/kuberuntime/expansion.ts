// Kubernetes $(VAR) references in env values, command and args: `$(NAME)` becomes the value of
// NAME if it is defined and stays as written otherwise; `$$` is a literal `$`; any other `$` is
// kept as is. An unterminated `$(` is kept too.

export function expandVars(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i++;
      continue;
    }
    const next = input[i + 1]!;
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close === -1) {
        out += '$(';
        i += 2;
      } else {
        const name = input.slice(i + 2, close);
        out += lookup(name) ?? `$(${name})`;
        i = close + 1;
      }
    } else {
      out += '$' + next;
      i += 2;
    }
  }
  return out;
}

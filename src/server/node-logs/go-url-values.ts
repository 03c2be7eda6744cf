// A request's query as the kubelet's Go server reads it (net/url ParseQuery, through URL.Query()):
// pairs split on `&` only, a pair holding `;` dropped, `+` a space, a pair with a bad `%` escape
// dropped. URLSearchParams differs on all three, and which parameters exist decides the mode of
// /logs/, so the node log query reads its parameters this way.

export type GoUrlValues = ReadonlyMap<string, readonly string[]>;

function unescape(s: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '+') bytes.push(0x20);
    else if (c === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

export function parseGoQuery(rawQuery: string): GoUrlValues {
  const values = new Map<string, string[]>();
  for (const pair of rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    const k = unescape(eq < 0 ? pair : pair.slice(0, eq));
    const v = unescape(eq < 0 ? '' : pair.slice(eq + 1));
    if (k === undefined || v === undefined) continue;
    const list = values.get(k);
    if (list) list.push(v);
    else values.set(k, [v]);
  }
  return values;
}

/** url.Values.Get: the first value, or '' when the key is absent. */
export function firstValue(values: GoUrlValues, key: string): string {
  return values.get(key)?.[0] ?? '';
}

// A certificate's subject as node:crypto's X509Certificate prints it: one `NAME=value` a line.

/** `O=system:nodes\nO=b\nCN=system:node:n1` → { O: ['system:nodes', 'b'], CN: ['system:node:n1'] }. */
export function subjectFields(subject: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of subject.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) (out[line.slice(0, eq)] ??= []).push(line.slice(eq + 1));
  }
  return out;
}

// The kubelet checks a node log query's pattern with Go's regexp/syntax (Perl flags) before it
// gives it to journalctl --grep; re2js is RE2's parser in JavaScript and refuses the same patterns
// in the same words. Imported on the first pattern (the bundle evaluates it then), so the agent
// never pays for it otherwise.

/** Go's syntax.Parse(pattern, syntax.Perl) error text, or undefined when Go accepts the pattern. */
export async function goRegexpProblem(pattern: string): Promise<string | undefined> {
  if (pattern === '') return undefined;
  const { RE2JS } = await import('re2js');
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // Go prints the (empty) expression of this one too: "...: ``".
    return /trailing backslash at end of expression$/.test(message) ? `${message}: \`\`` : message;
  }
}

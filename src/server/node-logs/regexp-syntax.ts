// The kubelet checks a node log query's pattern with Go's regexp/syntax (Perl flags) before it
// gives it to journalctl --grep; re2js is RE2's parser in JavaScript and refuses the same patterns
// in the same words. The executable carries it as an asset beside its bundle (build/build.mjs),
// compiled the first time a query has a pattern: an agent never asked pays nothing for it.
import { getAsset, isSea } from 'node:sea';

type Re2js = typeof import('re2js');

/** The asset's name in the executable (build/build.mjs writes it). */
export const RE2JS_ASSET = 're2js.cjs';

let loading: Promise<Re2js> | undefined;

async function load(): Promise<Re2js> {
  // From source (tests, tsx): the package itself.
  if (!isSea()) return import('re2js');
  const { runInThisContext } = await import('node:vm');
  const module = { exports: {} };
  const wrapped = runInThisContext(`(function (module, exports) {${getAsset(RE2JS_ASSET, 'utf8')}\n})`, {
    filename: RE2JS_ASSET,
  }) as (m: typeof module, e: object) => void;
  wrapped(module, module.exports);
  return module.exports as Re2js;
}

/** Go's syntax.Parse(pattern, syntax.Perl) error text, or undefined when Go accepts the pattern. */
export async function goRegexpProblem(pattern: string): Promise<string | undefined> {
  if (pattern === '') return undefined;
  const { RE2JS } = await (loading ??= load());
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // Go prints the (empty) expression of this one too: "...: ``".
    return /trailing backslash at end of expression$/.test(message) ? `${message}: \`\`` : message;
  }
}

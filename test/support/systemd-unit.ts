// What systemd makes of a service unit's ExecStart, for tests that start bootlet the way kubeadm's
// drop-in starts the kubelet: Environment= lines, then EnvironmentFile= files (which override them,
// later files overriding earlier ones), then `$VAR` split at whitespace into zero or more arguments
// and `${VAR}` kept as exactly one (systemd.service(5), "Command lines").

export interface ServiceUnit {
  environment: [string, string][];
  environmentFiles: { path: string; optional: boolean }[];
  execStart: string;
}

/** Splits on whitespace, keeping double- or single-quoted parts together (quotes removed). */
function words(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | undefined;
  let any = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\' && quote === '"' && i + 1 < text.length) cur += text[++i];
      else if (c === quote) quote = undefined;
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      any = true;
    } else if (/\s/.test(c)) {
      if (any || cur !== '') out.push(cur);
      cur = '';
      any = false;
    } else cur += c;
  }
  if (any || cur !== '') out.push(cur);
  return out;
}

export function parseServiceUnit(text: string): ServiceUnit {
  const unit: ServiceUnit = { environment: [], environmentFiles: [], execStart: '' };
  for (const line of text.replace(/\\\n/g, ' ').split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#') || t.startsWith(';') || t.startsWith('[')) continue;
    const eq = t.indexOf('=');
    const key = t.slice(0, eq).trim();
    const value = t.slice(eq + 1).trim();
    if (key === 'Environment') {
      for (const w of words(value)) {
        const i = w.indexOf('=');
        unit.environment.push([w.slice(0, i), w.slice(i + 1)]);
      }
    } else if (key === 'EnvironmentFile') {
      unit.environmentFiles.push(
        value.startsWith('-') ? { path: value.slice(1), optional: true } : { path: value, optional: false },
      );
    } else if (key === 'ExecStart') {
      unit.execStart = value; // an empty ExecStart= resets the list; the last one is the command
    }
  }
  return unit;
}

/** KEY=VALUE lines of an EnvironmentFile, with systemd's quoting and comments. */
export function parseEnvironmentFile(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#') || t.startsWith(';')) continue;
    const eq = t.indexOf('=');
    if (eq < 0) continue;
    const raw = t.slice(eq + 1).trim();
    out.push([t.slice(0, eq).trim(), /^["']/.test(raw) ? (words(raw)[0] ?? '') : raw]);
  }
  return out;
}

/**
 * The argv systemd runs. `readFile` gives an environment file's text, or undefined when it does
 * not exist (an error unless the unit marks the file optional with "-").
 */
export function expandExecStart(unit: ServiceUnit, readFile: (path: string) => string | undefined): string[] {
  const env = new Map(unit.environment);
  for (const f of unit.environmentFiles) {
    const text = readFile(f.path);
    if (text === undefined) {
      if (f.optional) continue;
      throw new Error(`EnvironmentFile ${f.path} is missing`);
    }
    for (const [k, v] of parseEnvironmentFile(text)) env.set(k, v);
  }
  return words(unit.execStart).flatMap((w) => {
    const whole = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(w);
    if (whole) return (env.get(whole[1]!) ?? '').split(/\s+/).filter((x) => x !== '');
    return [w.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env.get(name) ?? '')];
  });
}

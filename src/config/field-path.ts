// Field paths written as the API server writes them: `spec.containers[0].ports[1].containerPort`.

export type PathPart = string | number;

export function formatPath(parts: readonly PathPart[]): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? p : `.${p}`;
  }
  return out;
}

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

/** ajv's JSON Pointer instance path (`/spec/containers/0/name`) as a field path. */
export function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  const parts = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s): PathPart => (/^\d+$/.test(s) ? Number(s) : s));
  return formatPath(parts);
}

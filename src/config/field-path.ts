// Field paths written as the API server writes them: `spec.containers[0].ports[1].containerPort`,
// and a map key as field.Path.Key writes it, unquoted: `resources.limits[cpu]`.

export type PathPart = string | number | { readonly key: string };

/** A map key in a path (field.Path.Key). */
export const key = (k: string): PathPart => ({ key: k });

export function formatPath(parts: readonly PathPart[]): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (typeof p === 'object') out += `[${p.key}]`;
    else out += out === '' ? p : `.${p}`;
  }
  return out;
}

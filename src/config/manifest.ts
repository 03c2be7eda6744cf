// One manifest's bytes -> a static pod or the reason it was refused:
// parse -> schema -> defaults -> semantic rules -> identity.
import type { Pod } from 'kubernetes-types/core/v1';
import type { ManifestError, StaticPod } from './types';
import { parseManifest } from './parse';
import { validateSchema } from './validate-schema';
import { applySchemeDefaults } from './defaults';
import { validateSemantic } from './validate-semantic';
import { applyIdentity, staticPodName } from './identity';

export type LoadResult = { readonly pod: StaticPod; readonly warnings: string[] } | { readonly error: ManifestError };

export function loadManifest(file: string, bytes: Buffer | string, nodeName: string, now: Date): LoadResult {
  const parsed = parseManifest(bytes);
  if (!parsed.ok) return { error: { file, ...parsed.error } };
  const schema = validateSchema(parsed.object);
  if (schema.errors.length > 0) return { error: { file, message: schema.errors.join('; ') } };
  // The schema check above is what makes this cast true.
  const defaulted = applySchemeDefaults(parsed.object as unknown as Pod);
  const name = defaulted.metadata?.name;
  const problems = validateSemantic(defaulted, name ? staticPodName(name, nodeName) : undefined);
  if (problems.length > 0) return { error: { file, message: problems.join('; ') } };
  return { pod: applyIdentity({ defaulted, nodeName, file, seen: now }), warnings: schema.warnings };
}

// What the manifest loader (or the API pod source) says of a pod: defaulted, then validated.
import type { Pod } from 'kubernetes-types/core/v1';
import { applySchemeDefaults } from '../../../../src/k8s/defaults.js';
import { validateSemantic, type PodKind } from '../../../../src/config/validate-semantic';

export const problems = (p: Pod, kind: PodKind = 'static'): string[] =>
  validateSemantic(
    applySchemeDefaults(p),
    kind === 'static' ? `${p.metadata?.name ?? 'web'}-node-a` : p.metadata?.name,
    kind,
  );

/** A container named `name` with busybox and `extra` fields. */
export const c = (extra: Record<string, unknown> = {}, name = 'c') => ({ name, image: 'busybox:1.36', ...extra });

// Pod affinity and anti-affinity as the API server checks them (validatePodAffinity,
// validatePodAntiAffinity, validatePodAffinityTerm, validateWeightedPodAffinityTerms): valid label
// and namespace selectors, namespaces that are namespace names, match/mismatch label keys, a
// topology key, and a weight of 1 to 100 for a preferred term. bootlet does not schedule, but a pod
// with a malformed term is one the API server would not have taken.
import type { Affinity, PodAffinityTerm, WeightedPodAffinityTerm } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { isDNS1123Label } from './api-formats';
import { invalid, required } from './field-errors';
import { validateLabelName, validateLabelSelector, validateMatchLabelKeys } from './label-selector-rules';

function term(t: PodAffinityTerm, p: readonly PathPart[], out: string[]): void {
  validateLabelSelector(t.labelSelector, [...p, 'labelSelector'], out);
  validateLabelSelector(t.namespaceSelector, [...p, 'namespaceSelector'], out);
  // The API server names the list `namespace`, without the index.
  for (const ns of t.namespaces ?? [])
    for (const m of isDNS1123Label(ns)) out.push(invalid([...p, 'namespace'], ns, m));
  validateMatchLabelKeys(p, t.matchLabelKeys ?? [], t.mismatchLabelKeys ?? [], t.labelSelector, out);
  if (!t.topologyKey) out.push(required([...p, 'topologyKey'], 'can not be empty'));
  validateLabelName(t.topologyKey ?? '', [...p, 'topologyKey'], out);
}

function terms(
  required_: readonly PodAffinityTerm[] | undefined,
  preferred: readonly WeightedPodAffinityTerm[] | undefined,
  p: readonly PathPart[],
  out: string[],
): void {
  (required_ ?? []).forEach((t, i) => term(t, [...p, 'requiredDuringSchedulingIgnoredDuringExecution', i], out));
  (preferred ?? []).forEach((w, i) => {
    const wp = [...p, 'preferredDuringSchedulingIgnoredDuringExecution', i];
    const weight = w.weight ?? 0;
    if (weight <= 0 || weight > 100) out.push(invalid([...wp, 'weight'], weight, 'must be in the range 1-100'));
    term(w.podAffinityTerm ?? { topologyKey: '' }, [...wp, 'podAffinityTerm'], out);
  });
}

export function validatePodAffinities(affinity: Affinity | undefined, out: string[]): void {
  for (const k of ['podAffinity', 'podAntiAffinity'] as const) {
    const a = affinity?.[k];
    if (!a) continue;
    terms(
      a.requiredDuringSchedulingIgnoredDuringExecution,
      a.preferredDuringSchedulingIgnoredDuringExecution,
      ['spec', 'affinity', k],
      out,
    );
  }
}

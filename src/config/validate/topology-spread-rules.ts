// Topology spread constraints as the API server checks them (validateTopologySpreadConstraints):
// a positive maxSkew, a topology key, a known whenUnsatisfiable, each {topologyKey,
// whenUnsatisfiable} pair once, minDomains positive and only with DoNotSchedule, known node
// inclusion policies, a valid label selector, and matchLabelKeys as
// ValidateMatchLabelKeysAndMismatchLabelKeys has them (MatchLabelKeysInPodTopologySpread and
// MatchLabelKeysInPodTopologySpreadSelectorMerge, both on in 1.36).
import type { PodSpec, TopologySpreadConstraint } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { duplicate, invalid, required, unsupported } from './field-errors';
import { validateLabelSelector, validateMatchLabelKeys } from './label-selector-rules';

/** Sorted, as the API server lists them. */
const SCHEDULE_ACTIONS = ['DoNotSchedule', 'ScheduleAnyway'] as const;
const NODE_INCLUSION_POLICIES = ['Honor', 'Ignore'] as const;

function constraint(
  c: TopologySpreadConstraint,
  rest: readonly TopologySpreadConstraint[],
  p: readonly PathPart[],
  out: string[],
): void {
  const maxSkew = c.maxSkew ?? 0;
  if (maxSkew <= 0) out.push(invalid([...p, 'maxSkew'], maxSkew, 'must be greater than zero'));
  if (!c.topologyKey) out.push(required([...p, 'topologyKey'], 'can not be empty'));
  const action = c.whenUnsatisfiable ?? '';
  if (!(SCHEDULE_ACTIONS as readonly string[]).includes(action))
    out.push(unsupported([...p, 'whenUnsatisfiable'], action, SCHEDULE_ACTIONS));
  if (rest.some((r) => r.topologyKey === c.topologyKey && (r.whenUnsatisfiable ?? '') === action))
    out.push(duplicate([...p, '{topologyKey, whenUnsatisfiable}'], `{${c.topologyKey ?? ''}, ${action}}`));
  if (c.minDomains !== undefined && c.minDomains !== null) {
    if (c.minDomains <= 0) out.push(invalid([...p, 'minDomains'], c.minDomains, 'must be greater than zero'));
    if (action !== 'DoNotSchedule')
      out.push(
        invalid(
          [...p, 'minDomains'],
          c.minDomains,
          `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${action}`,
        ),
      );
  }
  for (const k of ['nodeAffinityPolicy', 'nodeTaintsPolicy'] as const) {
    const policy = c[k];
    if (policy !== undefined && policy !== null && !(NODE_INCLUSION_POLICIES as readonly string[]).includes(policy))
      out.push(unsupported([...p, k], policy, NODE_INCLUSION_POLICIES));
  }
  validateMatchLabelKeys(p, c.matchLabelKeys ?? [], [], c.labelSelector, out);
  validateLabelSelector(c.labelSelector, [...p, 'labelSelector'], out);
}

export function validateTopologySpreadConstraints(spec: PodSpec, out: string[]): void {
  const all = spec.topologySpreadConstraints ?? [];
  all.forEach((c, i) => constraint(c, all.slice(i + 1), ['spec', 'topologySpreadConstraints', i], out));
}

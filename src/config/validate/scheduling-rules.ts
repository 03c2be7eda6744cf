// What a pod says about where it may run, as the API server checks it (ValidateTolerations,
// validateTaintEffect, ValidateNodeSelector and its terms, the nodeSelector's labels, and the pod
// (anti-)affinity terms of pod-affinity-rules.ts): admission
// (src/admission) matches these against the node, so a malformed one must not get that far.
import type { NodeAffinity, NodeSelectorRequirement, PodSpec, Toleration } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from './api-formats';
import { invalid, required, unsupported } from './field-errors';
import { validateSelectorRequirement } from './label-selector-rules';
import { validateLabels } from './meta-rules';
import { validatePodAffinities } from './pod-affinity-rules';

const TOLERATION_OPERATORS = ['Equal', 'Exists'] as const;
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

function toleration(t: Toleration, p: readonly PathPart[], out: string[]): void {
  if (t.key) for (const m of isQualifiedName(t.key)) out.push(invalid([...p, 'key'], t.key, m));
  const operator = t.operator ?? '';
  if (!t.key && operator !== 'Exists')
    out.push(
      invalid(
        [...p, 'operator'],
        operator,
        'operator must be Exists when `key` is empty, which means "match all values and all keys"',
      ),
    );
  if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute')
    out.push(invalid([...p, 'effect'], t.effect ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"));
  const value = t.value ?? '';
  if (operator === 'Equal' || operator === '') {
    const errs = isValidLabelValue(value);
    if (errs.length > 0) out.push(invalid([...p, 'operator'], value, errs.join(';')));
  } else if (operator === 'Exists') {
    if (value !== '') out.push(invalid([...p, 'operator'], value, "value must be empty when `operator` is 'Exists'"));
  } else if (operator === 'Lt' || operator === 'Gt') {
    // TaintTolerationComparisonOperators is alpha (off) in 1.36; the API server then lists all four.
    out.push(unsupported([...p, 'operator'], operator, [...TOLERATION_OPERATORS, 'Lt', 'Gt']));
  } else out.push(unsupported([...p, 'operator'], operator, TOLERATION_OPERATORS));
  if (t.effect && !(TAINT_EFFECTS as readonly string[]).includes(t.effect))
    out.push(unsupported([...p, 'effect'], t.effect, TAINT_EFFECTS));
}

/** ValidateTolerations, for spec.tolerations and for the tolerations annotation. */
export function validateTolerations(
  tolerations: readonly Toleration[] | undefined,
  p: readonly PathPart[],
  out: string[],
): void {
  (tolerations ?? []).forEach((t, i) => toleration(t, [...p, i], out));
}

function fieldRequirement(r: NodeSelectorRequirement, p: readonly PathPart[], out: string[]): void {
  if (r.operator !== 'In' && r.operator !== 'NotIn')
    out.push(invalid([...p, 'operator'], r.operator ?? '', 'not a valid selector operator'));
  else if ((r.values?.length ?? 0) !== 1)
    out.push(
      required([...p, 'values'], "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"),
    );
  if (r.key !== 'metadata.name')
    return void out.push(invalid([...p, 'key'], r.key ?? '', 'not a valid field selector key'));
  (r.values ?? []).forEach((v, i) => {
    for (const m of isDNS1123Subdomain(v)) out.push(invalid([...p, 'values', i], v, m));
  });
}

function term(
  t: { matchExpressions?: NodeSelectorRequirement[]; matchFields?: NodeSelectorRequirement[] },
  p: readonly PathPart[],
  checkValues: boolean,
  out: string[],
): void {
  (t.matchExpressions ?? []).forEach((r, j) =>
    validateSelectorRequirement(r, [...p, 'matchExpressions', j], { numeric: true, checkValues }, out),
  );
  (t.matchFields ?? []).forEach((r, j) => fieldRequirement(r, [...p, 'matchFields', j], out));
}

function nodeAffinity(na: NodeAffinity, checkRequiredValues: boolean, out: string[]): void {
  const p: PathPart[] = ['spec', 'affinity', 'nodeAffinity'];
  const req = na.requiredDuringSchedulingIgnoredDuringExecution;
  if (req) {
    const tp = [...p, 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'];
    if ((req.nodeSelectorTerms ?? []).length === 0) out.push(required(tp, 'must have at least one node selector term'));
    else req.nodeSelectorTerms.forEach((t, i) => term(t, [...tp, i], checkRequiredValues, out));
  }
  (na.preferredDuringSchedulingIgnoredDuringExecution ?? []).forEach((pt, i) => {
    const pp = [...p, 'preferredDuringSchedulingIgnoredDuringExecution', i];
    if (!(pt.weight > 0 && pt.weight <= 100))
      out.push(invalid([...pp, 'weight'], pt.weight ?? 0, 'must be in the range 1-100'));
    // A preferred term may name label values that are not valid (it may still match on one node).
    term(pt.preference ?? {}, [...pp, 'preference'], false, out);
  });
}

/**
 * nodeSelector, tolerations and node affinity. `newPod`: the rules of a pod being created (a
 * static pod); an API pod created before required node affinity had to name valid label values
 * keeps them.
 */
export function validateScheduling(spec: PodSpec, newPod: boolean): string[] {
  const out = validateLabels(spec.nodeSelector, ['spec', 'nodeSelector']);
  if (spec.affinity?.nodeAffinity) nodeAffinity(spec.affinity.nodeAffinity, newPod, out);
  validatePodAffinities(spec.affinity, out);
  validateTolerations(spec.tolerations, ['spec', 'tolerations'], out);
  return out;
}

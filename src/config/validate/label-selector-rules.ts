// Label selectors and label keys as apimachinery checks them (metav1validation.ValidateLabelSelector,
// ValidateLabelSelectorRequirement, ValidateLabelName), with invalid label values refused, as for
// any pod being created: pod (anti-)affinity terms, topology spread constraints, a claim template's
// selector and a cluster trust bundle's.
import type { LabelSelector } from 'kubernetes-types/meta/v1';
import type { PathPart } from '../field-path';
import { isQualifiedName, isValidLabelValue } from './api-formats';
import { forbidden, invalid, required } from './field-errors';
import { validateLabels } from './meta-rules';

/** ValidateLabelName: a qualified name, each of its problems an Invalid at `p`. */
export function validateLabelName(name: string, p: readonly PathPart[], out: string[]): void {
  for (const m of isQualifiedName(name)) out.push(invalid(p, name, m));
}

/** The parts of a selector requirement that a label selector and a node selector's matchExpressions share. */
interface SelectorRequirement {
  readonly key?: string;
  readonly operator?: string;
  readonly values?: readonly string[];
}

/**
 * ValidateLabelSelectorRequirement and validateNodeSelectorRequirement (its matchExpressions): the
 * operator and its values, the key a label name, and (with `checkValues`) each value a label value.
 * `numeric`: Gt and Lt with a single value, which only a node selector knows.
 */
export function validateSelectorRequirement(
  r: SelectorRequirement,
  p: readonly PathPart[],
  rules: { readonly numeric: boolean; readonly checkValues: boolean },
  out: string[],
): void {
  const n = r.values?.length ?? 0;
  const op = r.operator;
  if (op === 'In' || op === 'NotIn') {
    if (n === 0) out.push(required([...p, 'values'], "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (op === 'Exists' || op === 'DoesNotExist') {
    if (n > 0)
      out.push(forbidden([...p, 'values'], "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  } else if (rules.numeric && (op === 'Gt' || op === 'Lt')) {
    if (n !== 1) out.push(required([...p, 'values'], "must be specified single value when `operator` is 'Lt' or 'Gt'"));
  } else out.push(invalid([...p, 'operator'], op ?? '', 'not a valid selector operator'));
  validateLabelName(r.key ?? '', [...p, 'key'], out);
  if (!rules.checkValues) return;
  (r.values ?? []).forEach((v, i) => {
    for (const m of isValidLabelValue(v)) out.push(invalid([...p, 'values', i], v, m));
  });
}

/** ValidateLabelSelector (a nil selector is valid). */
export function validateLabelSelector(s: LabelSelector | undefined, p: readonly PathPart[], out: string[]): void {
  if (!s) return;
  out.push(...validateLabels(s.matchLabels, [...p, 'matchLabels']));
  (s.matchExpressions ?? []).forEach((r, i) =>
    validateSelectorRequirement(r, [...p, 'matchExpressions', i], { numeric: false, checkValues: true }, out),
  );
}

/** validateLabelKeys: matchLabelKeys or mismatchLabelKeys need a selector, and are label names. */
function labelKeys(
  keys: readonly string[],
  selector: LabelSelector | undefined,
  p: readonly PathPart[],
  out: string[],
) {
  if (keys.length === 0) return;
  if (!selector) return void out.push(forbidden(p, 'must not be specified when labelSelector is not set'));
  keys.forEach((k, i) => validateLabelName(k, [...p, i], out));
}

/**
 * ValidateMatchLabelKeysAndMismatchLabelKeys, for a pod (anti-)affinity term and (with
 * MatchLabelKeysInPodTopologySpreadSelectorMerge, on in 1.36) a topology spread constraint. A key
 * of matchLabelKeys may not also be in both the selector's matchLabels (or an earlier expression)
 * and one of its expressions; the API server names that at `p[i]`, the index of the key.
 */
export function validateMatchLabelKeys(
  p: readonly PathPart[],
  matchLabelKeys: readonly string[],
  mismatchLabelKeys: readonly string[],
  selector: LabelSelector | undefined,
  out: string[],
): void {
  labelKeys(matchLabelKeys, selector, [...p, 'matchLabelKeys'], out);
  labelKeys(mismatchLabelKeys, selector, [...p, 'mismatchLabelKeys'], out);
  if (selector) {
    const indexOf = new Map(matchLabelKeys.map((k, i) => [k, i]));
    const seen = new Set(Object.keys(selector.matchLabels ?? {}));
    for (const e of selector.matchExpressions ?? []) {
      const i = indexOf.get(e.key);
      if (i !== undefined && seen.has(e.key))
        out.push(invalid([...p, i], e.key, 'exists in both matchLabelKeys and labelSelector'));
      seen.add(e.key);
    }
  }
  const mismatch = new Set(mismatchLabelKeys);
  matchLabelKeys.forEach((k, i) => {
    if (mismatch.has(k))
      out.push(invalid([...p, 'matchLabelKeys', i], k, 'exists in both matchLabelKeys and mismatchLabelKeys'));
  });
}

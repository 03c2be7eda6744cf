// The one taint check the kubelet makes at admission: a NoExecute taint of the node that the pod
// does not tolerate (static pods are exempt; the caller decides).
import type { Taint, Toleration } from 'kubernetes-types/core/v1';

/** ToleratesTaint: the toleration matches the taint's effect, key and value. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (
    (t.operator === undefined || t.operator === '' || t.operator === 'Equal') && (t.value ?? '') === (taint.value ?? '')
  );
}

export function untoleratedNoExecuteTaint(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
): Taint | undefined {
  return taints.find((taint) => taint.effect === 'NoExecute' && !tolerations.some((t) => tolerates(t, taint)));
}

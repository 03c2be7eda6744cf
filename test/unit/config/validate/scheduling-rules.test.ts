// nodeSelector, tolerations and node affinity as the API server checks them, in its words:
// admission matches them against the node, so a malformed one is refused with the manifest.
import { describe, expect, it } from 'vitest';
import { pod } from '../helpers';
import { problems } from './problems';

const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('nodeSelector', () => {
  it('checks keys and values as labels (a NUL in a value)', () => {
    expect(problems(pod({ nodeSelector: { 'kubernetes.io/os': 'lin\u0000ux' } }))).toEqual([
      `spec.nodeSelector: Invalid value: "lin\\x00ux": ${LABEL_VALUE_MSG}`,
    ]);
    expect(problems(pod({ nodeSelector: { 'bad key': 'x' } }))).toEqual([
      `spec.nodeSelector: Invalid value: "bad key": ${NAME_PART_MSG}`,
    ]);
    expect(problems(pod({ nodeSelector: { 'node-role.kubernetes.io/control-plane': '' } }))).toEqual([]);
  });
});

describe('tolerations', () => {
  const tol = (t: Record<string, unknown>) => pod({ tolerations: [t] });
  it('the key is a qualified name (no newline)', () => {
    expect(problems(tol({ key: 'node.kubernetes.io/not\nready', operator: 'Exists' }))).toEqual([
      `spec.tolerations[0].key: Invalid value: "node.kubernetes.io/not\\nready": ${NAME_PART_MSG}`,
    ]);
  });
  it('operator rules: Exists without a key or a value, Equal with a label value, nothing else', () => {
    expect(problems(tol({ operator: 'Equal', value: 'x' }))).toEqual([
      'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
    ]);
    expect(problems(tol({ key: 'k', operator: 'Exists', value: 'v' }))).toEqual([
      'spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'',
    ]);
    expect(problems(tol({ key: 'k', value: 'a b' }))).toEqual([
      `spec.tolerations[0].operator: Invalid value: "a b": ${LABEL_VALUE_MSG}`,
    ]);
    expect(problems(tol({ key: 'k', operator: 'In', value: 'v' }))).toEqual([
      'spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
    ]);
  });
  it('effect is a taint effect; tolerationSeconds only with NoExecute', () => {
    expect(problems(tol({ key: 'k', operator: 'Exists', effect: 'NoAdmit' }))).toEqual([
      'spec.tolerations[0].effect: Unsupported value: "NoAdmit": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ]);
    expect(problems(tol({ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 30 }))).toEqual([
      'spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set',
    ]);
    expect(problems(tol({ operator: 'Exists' }))).toEqual([]);
    expect(
      problems(
        tol({ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }),
      ),
    ).toEqual([]);
  });
});

describe('node affinity', () => {
  const required = (terms: unknown[]) =>
    pod({
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
    });
  const RP = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms';
  it('needs a term, known operators with the values they take, label keys and values', () => {
    expect(problems(required([]))).toEqual([`${RP}: Required value: must have at least one node selector term`]);
    expect(
      problems(
        required([
          {
            matchExpressions: [
              { key: 'k', operator: 'Equals', values: ['a'] },
              { key: 'k', operator: 'In' },
            ],
          },
        ]),
      ),
    ).toEqual([
      `${RP}[0].matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator`,
      `${RP}[0].matchExpressions[1].values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`,
    ]);
    expect(
      problems(
        required([
          {
            matchExpressions: [
              { key: 'k', operator: 'Exists', values: ['a'] },
              { key: 'k', operator: 'Gt', values: ['1', '2'] },
            ],
          },
        ]),
      ),
    ).toEqual([
      `${RP}[0].matchExpressions[0].values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`,
      `${RP}[0].matchExpressions[1].values: Required value: must be specified single value when \`operator\` is 'Lt' or 'Gt'`,
    ]);
    expect(problems(required([{ matchExpressions: [{ key: 'k', operator: 'In', values: ['a\nb'] }] }]))).toEqual([
      `${RP}[0].matchExpressions[0].values[0]: Invalid value: "a\\nb": ${LABEL_VALUE_MSG}`,
    ]);
  });
  it('a field term names metadata.name with one node name', () => {
    expect(problems(required([{ matchFields: [{ key: 'metadata.uid', operator: 'In', values: ['a'] }] }]))).toEqual([
      `${RP}[0].matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key`,
    ]);
    expect(
      problems(required([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }] }])),
    ).toEqual([
      `${RP}[0].matchFields[0].values: Required value: must be only one value when \`operator\` is 'In' or 'NotIn' for node field selector`,
    ]);
    expect(
      problems(required([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] }])),
    ).toEqual([]);
  });
  it('preferred terms weigh 1 to 100 and may name any label value; an API pod keeps invalid required values', () => {
    const preferred = pod({
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 0, preference: { matchExpressions: [{ key: 'k', operator: 'In', values: ['a b'] }] } },
          ],
        },
      },
    });
    expect(problems(preferred)).toEqual([
      'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100',
    ]);
    const old = required([{ matchExpressions: [{ key: 'k', operator: 'In', values: ['a b'] }] }]);
    expect(problems({ ...old, spec: { ...old.spec!, nodeName: 'node-a' } }, 'api')).toEqual([]);
  });
});

// A container's own restartPolicy and restartPolicyRules as the API server of 1.36 checks them
// (validateContainerRestartPolicy, with ContainerRestartRules and RestartAllContainersOnContainerExits
// on, as they are by default there): the same for regular, init and sidecar containers. The rules
// need the container's own policy beside them; at most 20 rules, each with a known action and an
// exitCodes of a known operator with at most 255 values. An ephemeral container may have neither
// (ephemeral-container-rules.ts).
import type { Container } from 'kubernetes-types/core/v1';
import {
  CONTAINER_RESTART_POLICIES,
  MAX_RESTART_RULES,
  MAX_RULE_EXIT_CODES,
  RESTART_ALL_CONTAINERS_ACTION,
  RESTART_RULE_ACTION,
  RESTART_RULE_OPERATORS,
} from '../../k8s/restart.js';
import type { PathPart } from '../field-path';
import { required, tooMany, unsupported } from './field-errors';

/** The actions the API server accepts with RestartAllContainersOnContainerExits on (sorted, as it lists them). */
const ACTIONS = [RESTART_RULE_ACTION, RESTART_ALL_CONTAINERS_ACTION] as const;

export function validateRestartPolicy(c: Container, path: readonly PathPart[], out: string[]): void {
  const rules = c.restartPolicyRules ?? [];
  if (c.restartPolicy === undefined) {
    if (rules.length === 0) return;
    out.push(required([...path, 'restartPolicy'], 'must specify restartPolicy when restart rules are used'));
  } else if (!(CONTAINER_RESTART_POLICIES as readonly string[]).includes(c.restartPolicy)) {
    out.push(unsupported([...path, 'restartPolicy'], c.restartPolicy, CONTAINER_RESTART_POLICIES));
  }
  if (rules.length > MAX_RESTART_RULES)
    out.push(tooMany([...path, 'restartPolicyRules'], rules.length, MAX_RESTART_RULES));
  rules.forEach((rule, i) => {
    const rp = [...path, 'restartPolicyRules', i];
    if (!(ACTIONS as readonly string[]).includes(rule.action))
      out.push(unsupported([...rp, 'action'], rule.action, ACTIONS));
    const codes = rule.exitCodes;
    if (!codes) {
      out.push(required([...rp, 'exitCodes'], 'must be specified'));
      return;
    }
    if (!(RESTART_RULE_OPERATORS as readonly string[]).includes(codes.operator))
      out.push(unsupported([...rp, 'exitCodes', 'operator'], codes.operator, RESTART_RULE_OPERATORS));
    const values = codes.values ?? [];
    if (values.length > MAX_RULE_EXIT_CODES)
      out.push(tooMany([...rp, 'exitCodes', 'values'], values.length, MAX_RULE_EXIT_CODES));
  });
}

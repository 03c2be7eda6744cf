// env and envFrom as the API server checks them (ValidateEnv, validateEnvVarValueFrom,
// ValidateEnvFrom, with the relaxed names of v1.34): a name is needed, and it and an envFrom
// prefix are printable ASCII without '='. A newline in a name would otherwise reach the runtime as
// a second variable. A valueFrom names exactly one source (fileKeyRef one of them), not beside a value; a fieldRef or
// resourceFieldRef one the downward API gives an env var; a key reference a valid name and key.
import type { ConfigMapKeySelector, EnvFromSource, EnvVar, EnvVarSource } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { isConfigMapKey, isDNS1123Subdomain, isDNS1123SubdomainPrefix, isRelaxedEnvVarName } from './api-formats';
import { ENV_FIELD_PATHS, validateFieldRef, validateResourceFieldRef } from './downward-api-rules';
import { invalid, required } from './field-errors';

function keySelector(s: ConfigMapKeySelector, p: readonly PathPart[], out: string[]): void {
  for (const m of isDNS1123Subdomain(s.name ?? '')) out.push(invalid([...p, 'name'], s.name ?? '', m));
  if (!s.key) out.push(required([...p, 'key']));
  else for (const m of isConfigMapKey(s.key)) out.push(invalid([...p, 'key'], s.key, m));
}

function valueFrom(e: EnvVar, from: EnvVarSource, p: readonly PathPart[], out: string[]): void {
  let sources = 0;
  if (from.fieldRef) {
    sources++;
    validateFieldRef(from.fieldRef, ENV_FIELD_PATHS, [...p, 'fieldRef'], out);
  }
  if (from.resourceFieldRef) {
    sources++;
    validateResourceFieldRef(from.resourceFieldRef, [...p, 'resourceFieldRef'], false, out);
  }
  if (from.configMapKeyRef) {
    sources++;
    keySelector(from.configMapKeyRef, [...p, 'configMapKeyRef'], out);
  }
  if (from.secretKeyRef) {
    sources++;
    keySelector(from.secretKeyRef, [...p, 'secretKeyRef'], out);
  }
  // EnvFiles (beta, on in 1.36): a source of its own. Only its required fields are checked here:
  // bootlet refuses the field (unhonoured-fields.ts) once the pod is otherwise valid.
  if (from.fileKeyRef) {
    sources++;
    for (const k of ['volumeName', 'path', 'key'] as const)
      if (!from.fileKeyRef[k]) out.push(required([...p, 'fileKeyRef', k]));
  }
  if (sources === 0)
    out.push(
      invalid(p, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'),
    );
  else if (e.value) out.push(invalid(p, '', 'may not be specified when `value` is not empty'));
  else if (sources > 1) out.push(invalid(p, '', 'may not have more than one field specified at a time'));
}

export function validateEnv(env: readonly EnvVar[] | undefined, path: readonly PathPart[]): string[] {
  const out: string[] = [];
  (env ?? []).forEach((e, i) => {
    const p = [...path, i, 'name'];
    if (!e.name) out.push(required(p));
    else for (const m of isRelaxedEnvVarName(e.name)) out.push(invalid(p, e.name, m));
    if (e.valueFrom) valueFrom(e, e.valueFrom, [...path, i, 'valueFrom'], out);
  });
  return out;
}

function sourceName(name: string | undefined, p: readonly PathPart[], out: string[]): void {
  if (!name) out.push(required([...p, 'name']));
  else for (const m of isDNS1123SubdomainPrefix(name)) out.push(invalid([...p, 'name'], name, m));
}

export function validateEnvFrom(envFrom: readonly EnvFromSource[] | undefined, path: readonly PathPart[]): string[] {
  const out: string[] = [];
  (envFrom ?? []).forEach((e, i) => {
    if (e.prefix) for (const m of isRelaxedEnvVarName(e.prefix)) out.push(invalid([...path, i, 'prefix'], e.prefix, m));
    let sources = 0;
    if (e.configMapRef) {
      sources++;
      sourceName(e.configMapRef.name, [...path, i, 'configMapRef'], out);
    }
    if (e.secretRef) {
      sources++;
      sourceName(e.secretRef.name, [...path, i, 'secretRef'], out);
    }
    // The API server names the list here, not the entry.
    if (sources === 0) out.push(invalid(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1) out.push(invalid(path, '', 'may not have more than one field specified at a time'));
  });
  return out;
}

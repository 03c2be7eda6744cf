// A container's env and envFrom as the API server checks them (ValidateEnv, ValidateEnvFrom with
// the relaxed names of v1.34): a name is needed, and it and an envFrom prefix are printable ASCII
// without '='. A newline in a name would otherwise reach the runtime as a second variable.
import type { EnvFromSource, EnvVar } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { isRelaxedEnvVarName } from './api-formats';
import { invalid, required } from './field-errors';

export function validateEnv(env: readonly EnvVar[] | undefined, path: readonly PathPart[]): string[] {
  const out: string[] = [];
  (env ?? []).forEach((e, i) => {
    const p = [...path, i, 'name'];
    if (!e.name) out.push(required(p));
    else for (const m of isRelaxedEnvVarName(e.name)) out.push(invalid(p, e.name, m));
  });
  return out;
}

export function validateEnvFrom(envFrom: readonly EnvFromSource[] | undefined, path: readonly PathPart[]): string[] {
  const out: string[] = [];
  (envFrom ?? []).forEach((e, i) => {
    if (e.prefix) for (const m of isRelaxedEnvVarName(e.prefix)) out.push(invalid([...path, i, 'prefix'], e.prefix, m));
  });
  return out;
}

import { isCsr, validateCsr } from './certificates/csr-strategy.js';
import { isService, validateCore } from './core-objects/core-strategy.js';
import type { ResourceType } from './resources.js';
import { validateRuntimeClass } from './runtime-class.js';
import { invalid, type ApiError, type FieldCause } from './status.js';
import { arr, obj, str, type KObject } from './types.js';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

function required(field: string, extra = ''): FieldCause {
  return { type: 'FieldValueRequired', field, detail: extra ? `Required value: ${extra}` : 'Required value' };
}

function badValue(field: string, value: string, why: string): FieldCause {
  return { type: 'FieldValueInvalid', field, detail: `Invalid value: ${JSON.stringify(value)}: ${why}` };
}

function checkName(name: string, field: string, label: boolean | 'dns1035'): FieldCause[] {
  if (label === 'dns1035') {
    if (name.length > 63) return [badValue(field, name, 'must be no more than 63 characters')];
    return DNS1035_LABEL.test(name) ? [] : [badValue(field, name, DNS1035_MSG)];
  }
  if (label) {
    if (name.length > 63) return [badValue(field, name, 'must be no more than 63 characters')];
    return DNS1123_LABEL.test(name) ? [] : [badValue(field, name, LABEL_MSG)];
  }
  if (name.length > 253) return [badValue(field, name, 'must be no more than 253 characters')];
  return DNS1123_SUBDOMAIN.test(name) ? [] : [badValue(field, name, SUBDOMAIN_MSG)];
}

function validatePodSpec(spec: KObject['spec']): FieldCause[] {
  const s = obj(spec);
  const causes: FieldCause[] = [];
  const containers = arr(s.containers);
  if (containers.length === 0) causes.push(required('spec.containers'));
  const seen = new Set<string>();
  const check = (list: ReturnType<typeof arr>, path: string): void => {
    list.forEach((c, i) => {
      const co = obj(c);
      const name = str(co.name);
      if (!name) causes.push(required(`${path}[${i}].name`));
      else if (!DNS1123_LABEL.test(name)) causes.push(badValue(`${path}[${i}].name`, name, LABEL_MSG));
      else if (seen.has(name))
        causes.push({
          type: 'FieldValueDuplicate',
          field: `${path}[${i}].name`,
          detail: `Duplicate value: ${JSON.stringify(name)}`,
        });
      seen.add(name);
      if (!str(co.image)) causes.push(required(`${path}[${i}].image`));
    });
  };
  check(arr(s.initContainers), 'spec.initContainers');
  check(containers, 'spec.containers');
  const rp = str(s.restartPolicy);
  if (rp && !['Always', 'OnFailure', 'Never'].includes(rp))
    causes.push({
      type: 'FieldValueNotSupported',
      field: 'spec.restartPolicy',
      detail: `Unsupported value: ${JSON.stringify(rp)}: supported values: "Always", "OnFailure", "Never"`,
    });
  return causes;
}

/** The subset of ValidateObjectMeta and per-kind validation the fake enforces; throws 422 Invalid. */
export function validateObject(rt: ResourceType, o: KObject, found: FieldCause[] = []): void {
  const name = str(o.metadata.name);
  const causes: FieldCause[] = [];
  if (!name) causes.push(required('metadata.name', 'name or generateName is required'));
  // "We don't care what you call your certificate requests": the kubelet's node-csr-<base64url> has capitals.
  else if (!isCsr(rt))
    causes.push(...checkName(name, 'metadata.name', isService(rt) ? 'dns1035' : rt.resource === 'namespaces'));
  if (rt.resource === 'pods' && rt.group === '') causes.push(...validatePodSpec(o.spec));
  causes.push(...validateCore(rt, o), ...validateRuntimeClass(rt, o), ...found);
  if (causes.length > 0) throw invalid(rt, name, causes);
  if (isCsr(rt)) validateCsr(rt, o);
}

/** Fields ValidateObjectMetaUpdate refuses to change. */
export function validateMetaUpdate(rt: ResourceType, next: KObject, prev: KObject): ApiError | undefined {
  const name = str(prev.metadata.name);
  const causes: FieldCause[] = [];
  for (const f of ['uid', 'creationTimestamp'] as const) {
    const a = str(next.metadata[f]);
    const b = str(prev.metadata[f]);
    if (a && a !== b) causes.push(badValue(`metadata.${f}`, a, 'field is immutable'));
  }
  return causes.length ? invalid(rt, name, causes) : undefined;
}

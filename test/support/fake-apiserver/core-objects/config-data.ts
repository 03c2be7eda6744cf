// ConfigMaps and Secrets as the registry takes them: Secret stringData folded into data (the v1
// conversion does it, so stringData is never stored), base64 checked as JSON decoding checks []byte,
// the type defaulted, and the validation of ValidateConfigMap/ValidateSecret that a client meets.
import type { ResourceType } from '../resources.js';
import { badRequest, type FieldCause } from '../status.js';
import { obj, str, type JsonObject, type KObject } from '../types.js';

/** core.MaxSecretSize, which ConfigMaps share. */
export const MAX_DATA_BYTES = 1024 * 1024;

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

export function isConfigMap(rt: ResourceType): boolean {
  return rt.group === '' && rt.resource === 'configmaps';
}
export function isSecret(rt: ResourceType): boolean {
  return rt.group === '' && rt.resource === 'secrets';
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decoding and defaulting of a Secret body: what happens before the registry sees it, on every write. */
export function decodeSecret(o: KObject): void {
  const data: JsonObject = { ...obj(o.data) };
  for (const v of Object.values(data)) {
    if (typeof v !== 'string' || !BASE64.test(v)) {
      const at = typeof v === 'string' ? firstBadBase64Byte(v) : 0;
      throw badRequest(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${at}`);
    }
  }
  for (const [k, v] of Object.entries(obj(o.stringData))) data[k] = Buffer.from(str(v), 'utf8').toString('base64');
  delete o.stringData;
  if (o.data !== undefined || Object.keys(data).length > 0) o.data = data;
  o.type = str(o.type) || 'Opaque';
}

function firstBadBase64Byte(v: string): number {
  const i = v.search(/[^A-Za-z0-9+/=]/);
  return i >= 0 ? i : Math.max(0, v.length - (v.length % 4));
}

function keyCauses(field: string, key: string): FieldCause[] {
  const bad = (why: string): FieldCause => ({
    type: 'FieldValueInvalid',
    field: `${field}[${key}]`,
    detail: `Invalid value: ${JSON.stringify(key)}: ${why}`,
  });
  const out: FieldCause[] = [];
  if (key.length > 253) out.push(bad('must be no more than 253 characters'));
  if (!CONFIG_KEY.test(key)) out.push(bad(CONFIG_KEY_MSG));
  if (key === '.') out.push(bad("must not be '.'"));
  else if (key === '..') out.push(bad("must not be '..'"));
  else if (key.startsWith('..')) out.push(bad("must not start with '..'"));
  return out;
}

function tooLong(field: string): FieldCause {
  return { type: 'FieldValueTooLong', field, detail: `Too long: must have at most ${MAX_DATA_BYTES} bytes` };
}

export function validateConfigMap(o: KObject): FieldCause[] {
  const causes: FieldCause[] = [];
  const data = obj(o.data);
  const binary = obj(o.binaryData);
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    causes.push(...keyCauses('data', k));
    size += k.length + Buffer.byteLength(str(v), 'utf8');
  }
  for (const [k, v] of Object.entries(binary)) {
    causes.push(...keyCauses('binaryData', k));
    if (k in data)
      causes.push({
        type: 'FieldValueInvalid',
        field: `binaryData[${k}]`,
        detail: `Invalid value: ${JSON.stringify(k)}: duplicate of key present in data`,
      });
    size += k.length + Buffer.from(str(v), 'base64').length;
  }
  // The registry names the whole object, which prints as "[]".
  if (size > MAX_DATA_BYTES) causes.push(tooLong('[]'));
  return causes;
}

/** Keys each typed Secret must carry (ValidateSecret). */
const REQUIRED_KEYS: Record<string, string> = {
  'kubernetes.io/dockercfg': '.dockercfg',
  'kubernetes.io/dockerconfigjson': '.dockerconfigjson',
  'kubernetes.io/ssh-auth': 'ssh-privatekey',
  'kubernetes.io/tls': 'tls.crt',
};

export function validateSecret(o: KObject): FieldCause[] {
  const causes: FieldCause[] = [];
  const data = obj(o.data);
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    causes.push(...keyCauses('data', k));
    size += Buffer.from(str(v), 'base64').length;
  }
  if (size > MAX_DATA_BYTES) causes.push(tooLong('data'));
  const type = str(o.type);
  const need = REQUIRED_KEYS[type];
  if (need && !(need in data))
    causes.push({ type: 'FieldValueRequired', field: `data[${need}]`, detail: 'Required value' });
  if (type === 'kubernetes.io/tls' && !('tls.key' in data))
    causes.push({ type: 'FieldValueRequired', field: 'data[tls.key]', detail: 'Required value' });
  if (type === 'kubernetes.io/dockerconfigjson' && need in data) {
    try {
      JSON.parse(Buffer.from(str(data[need]), 'base64').toString('utf8'));
    } catch (e) {
      causes.push({
        type: 'FieldValueInvalid',
        field: 'data[.dockerconfigjson]',
        detail: `Invalid value: "<secret contents redacted>": ${(e as Error).message}`,
      });
    }
  }
  if (
    type === 'kubernetes.io/service-account-token' &&
    !str(obj(o.metadata.annotations)['kubernetes.io/service-account.name'])
  )
    causes.push({
      type: 'FieldValueRequired',
      field: 'metadata.annotations[kubernetes.io/service-account.name]',
      detail: 'Required value',
    });
  return causes;
}

/** What an update of either kind may not change: a Secret's type, and the data of an immutable object. */
export function validateConfigDataUpdate(rt: ResourceType, next: KObject, prev: KObject): FieldCause[] {
  const causes: FieldCause[] = [];
  if (isSecret(rt) && str(next.type) !== str(prev.type))
    causes.push({
      type: 'FieldValueInvalid',
      field: 'type',
      detail: `Invalid value: ${JSON.stringify(str(next.type))}: field is immutable`,
    });
  if (prev.immutable === true) {
    if (next.immutable !== true)
      causes.push({
        type: 'FieldValueForbidden',
        field: 'immutable',
        detail: 'Forbidden: field is immutable when `immutable` is set',
      });
    for (const f of isSecret(rt) ? ['data'] : ['data', 'binaryData'])
      if (JSON.stringify(obj(next[f])) !== JSON.stringify(obj(prev[f])))
        causes.push({
          type: 'FieldValueForbidden',
          field: f,
          detail: 'Forbidden: field is immutable when `immutable` is set',
        });
  }
  return causes;
}

// The registry strategy of certificates.k8s.io/v1 CertificateSigningRequests: who asked is filled in
// by the server, the main resource never changes spec or status, `approval` only changes conditions,
// `status` may not touch spec nor Approved/Denied; and the validation that goes with it.
import type { UserInfo } from '../authn.js';
import type { ResourceType } from '../resources.js';
import { invalid, type ApiError, type FieldCause } from '../status.js';
import { arr, deepCopy, isObject, obj, str, type Json, type JsonObject, type KObject } from '../types.js';
import { parseRequest } from './csr-request.js';

export const CSR_STORAGE_KEY = 'certificatesigningrequests.certificates.k8s.io';

export function isCsr(rt: ResourceType): boolean {
  return rt.storageKey === CSR_STORAGE_KEY;
}

const KNOWN_USAGES = new Set([
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
]);

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** PrepareForCreate: the requesting user is recorded, status starts empty. */
export function prepareCsrForCreate(o: KObject, user: UserInfo): void {
  const spec = obj(o.spec);
  spec.username = user.name;
  spec.groups = user.groups;
  delete spec.uid;
  delete spec.extra;
  o.spec = spec;
  o.status = {};
}

function conditions(o: KObject): JsonObject[] {
  return arr(obj(o.status).conditions).filter(isObject);
}

/** Sets lastUpdateTime where missing and lastTransitionTime where a condition is new or changed status. */
function populateConditionTimestamps(next: KObject, prev: KObject | undefined): void {
  const before = new Map(prev ? conditions(prev).map((c) => [str(c.type), c] as const) : []);
  for (const c of conditions(next)) {
    c.lastUpdateTime ??= now();
    const old = before.get(str(c.type));
    if (!c.lastTransitionTime)
      c.lastTransitionTime =
        old && str(old.status) === str(c.status) && old.lastTransitionTime ? old.lastTransitionTime : now();
  }
}

/** Per subresource, what an update may change (the rest is carried over from `prev`). */
export function prepareCsrForUpdate(next: KObject, prev: KObject, subresource: string): void {
  next.spec = deepCopy(prev.spec);
  if (subresource === '') {
    if (prev.status === undefined) delete next.status;
    else next.status = deepCopy(prev.status);
    return;
  }
  const status = obj(next.status);
  next.status = status;
  if (subresource === 'approval') {
    const certificate = obj(prev.status).certificate;
    if (certificate === undefined) delete status.certificate;
    else status.certificate = certificate;
  } else if (subresource === 'status') {
    // preserveConditionInstances for Approved and Denied
    const keep = conditions(prev).filter((c) => ['Approved', 'Denied'].includes(str(c.type)));
    status.conditions = [
      ...conditions(next).filter((c) => !['Approved', 'Denied'].includes(str(c.type))),
      ...keep,
    ] as Json[];
  }
  populateConditionTimestamps(next, prev);
}

function required(field: string): FieldCause {
  return { type: 'FieldValueRequired', field, detail: 'Required value' };
}

/** validateCertificateSigningRequest, for what a node and kubectl send. */
export function validateCsr(rt: ResourceType, o: KObject): void {
  const spec = obj(o.spec);
  const causes: FieldCause[] = [];
  try {
    parseRequest(str(spec.request));
  } catch (e) {
    causes.push({
      type: 'FieldValueInvalid',
      field: 'spec.request',
      detail: `Invalid value: "<request>": ${(e as Error).message}`,
    });
  }
  const signer = str(spec.signerName);
  if (!signer) causes.push(required('spec.signerName'));
  else if (!/^[a-z0-9.-]+\/[a-zA-Z0-9.-]+$/.test(signer))
    causes.push({
      type: 'FieldValueInvalid',
      field: 'spec.signerName',
      detail: `Invalid value: ${JSON.stringify(signer)}: must be a fully qualified domain and path of the form 'example.com/signer-name'`,
    });
  const usages = arr(spec.usages).map((u) => str(u));
  if (usages.length === 0) causes.push(required('spec.usages'));
  usages.forEach((u, i) => {
    if (!KNOWN_USAGES.has(u))
      causes.push({
        type: 'FieldValueNotSupported',
        field: `spec.usages[${i}]`,
        detail: `Unsupported value: ${JSON.stringify(u)}`,
      });
  });
  const exp = spec.expirationSeconds;
  if (typeof exp === 'number' && exp < 600)
    causes.push({
      type: 'FieldValueInvalid',
      field: 'spec.expirationSeconds',
      detail: `Invalid value: ${exp}: may not specify a duration less than 600 seconds (10 minutes)`,
    });
  if (causes.length > 0) throw invalid(rt, str(o.metadata.name), causes);
}

/** The transitions an approval or status update may not make. */
export function validateCsrUpdate(
  rt: ResourceType,
  next: KObject,
  prev: KObject,
  subresource: string,
): ApiError | undefined {
  const causes: FieldCause[] = [];
  const types = conditions(next).map((c) => str(c.type));
  conditions(next).forEach((c, i) => {
    if (['Approved', 'Denied', 'Failed'].includes(str(c.type)) && str(c.status) !== 'True')
      causes.push({
        type: 'FieldValueNotSupported',
        field: `status.conditions[${i}].status`,
        detail: `Unsupported value: ${JSON.stringify(str(c.status))}: supported values: "True"`,
      });
  });
  if (types.includes('Approved') && types.includes('Denied'))
    causes.push({
      type: 'FieldValueInvalid',
      field: 'status.conditions',
      detail: 'Invalid value: "Approved": Approved and Denied conditions are mutually exclusive',
    });
  if (subresource === 'approval')
    for (const t of ['Approved', 'Denied'])
      if (conditions(prev).some((c) => str(c.type) === t) && !types.includes(t))
        causes.push({
          type: 'FieldValueForbidden',
          field: 'status.conditions',
          detail: `Forbidden: updates may not remove a condition of type "${t}"`,
        });
  const oldCert = str(obj(prev.status).certificate);
  const newCert = str(obj(next.status).certificate);
  if (subresource === 'status' && oldCert && newCert !== oldCert)
    causes.push({
      type: 'FieldValueForbidden',
      field: 'status.certificate',
      detail: 'Forbidden: updates may not modify existing certificate content',
    });
  return causes.length > 0 ? invalid(rt, str(prev.metadata.name), causes) : undefined;
}

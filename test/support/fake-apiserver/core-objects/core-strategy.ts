// The per-kind steps of the registry for ConfigMaps, Secrets, Services and ServiceAccounts, called
// from the common create/update path: decoding and defaulting first, then the kind's validation.
import type { ResourceType } from '../resources.js';
import type { FieldCause } from '../status.js';
import type { ObjectStore } from '../store.js';
import type { KObject } from '../types.js';
import {
  decodeSecret,
  isConfigMap,
  isSecret,
  validateConfigDataUpdate,
  validateConfigMap,
  validateSecret,
} from './config-data.js';
import { prepareServiceForCreate, prepareServiceForUpdate, validateServiceSpec } from './service.js';

export function isService(rt: ResourceType): boolean {
  return rt.group === '' && rt.resource === 'services';
}

/** After the common create preparation; returns causes the allocators found (422 with the rest). */
export function prepareCoreForCreate(rt: ResourceType, o: KObject, store: ObjectStore): FieldCause[] {
  if (isSecret(rt)) decodeSecret(o);
  if (isService(rt)) return prepareServiceForCreate(o, store);
  return [];
}

/** After the common update preparation (a patch's result included). */
export function prepareCoreForUpdate(rt: ResourceType, next: KObject, prev: KObject): FieldCause[] {
  if (isSecret(rt)) decodeSecret(next);
  if (isService(rt)) return prepareServiceForUpdate(next, prev);
  if (isConfigMap(rt) || isSecret(rt)) return validateConfigDataUpdate(rt, next, prev);
  return [];
}

export function validateCore(rt: ResourceType, o: KObject): FieldCause[] {
  if (isConfigMap(rt)) return validateConfigMap(o);
  if (isSecret(rt)) return validateSecret(o);
  if (isService(rt)) return validateServiceSpec(o);
  return [];
}

// The rows of `kubectl get configmaps|secrets|serviceaccounts`, as the server-side printers make them.
import { arr, meta, obj, str, type Json, type KObject } from '../types.js';
import { AGE_COLUMN, NAME_COLUMN, col, type Column } from './columns.js';
import { since } from './human-duration.js';

const age = (o: KObject): string => since(str(o.metadata.creationTimestamp));

export const CONFIGMAP_COLUMNS: Column[] = [
  NAME_COLUMN,
  col('Data', 'The number of keys, in data and binaryData.', 0, 'integer'),
  AGE_COLUMN,
];
export function configMapCells(o: KObject): Json[] {
  return [meta(o).name, Object.keys(obj(o.data)).length + Object.keys(obj(o.binaryData)).length, age(o)];
}

export const SECRET_COLUMNS: Column[] = [
  NAME_COLUMN,
  col('Type', 'The type of the secret.'),
  col('Data', 'The number of keys.', 0, 'integer'),
  AGE_COLUMN,
];
export function secretCells(o: KObject): Json[] {
  return [meta(o).name, str(o.type), Object.keys(obj(o.data)).length, age(o)];
}

export const SERVICE_ACCOUNT_COLUMNS: Column[] = [
  NAME_COLUMN,
  col('Secrets', 'The number of secrets listed.', 0, 'integer'),
  AGE_COLUMN,
];
export function serviceAccountCells(o: KObject): Json[] {
  return [meta(o).name, arr(o.secrets).length, age(o)];
}

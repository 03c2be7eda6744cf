import { arr, isObject, meta, num, obj, str, type Json, type KObject } from '../types.js';
import { AGE_COLUMN, NAME_COLUMN, col, type Column } from './columns.js';
import { humanDuration, since } from './human-duration.js';

export const CSR_COLUMNS: Column[] = [
  NAME_COLUMN,
  AGE_COLUMN,
  col('SignerName', 'Name of the signer that is requested to sign the certificate.'),
  col('Requestor', 'Name of the user that created the request.'),
  col('RequestedDuration', 'The requested duration of the certificate.'),
  col(
    'Condition',
    'The condition of the certificate signing request: Pending, Approved, Denied, plus Failed and Issued.',
  ),
];

/** extractCSRStatus: Denied over Approved over Pending, then ",Failed" and ",Issued". */
function condition(o: KObject): string {
  const types = new Set(
    arr(obj(o.status).conditions)
      .filter(isObject)
      .map((c) => str(c.type)),
  );
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (str(obj(o.status).certificate)) s += ',Issued';
  return s;
}

export function csrCells(o: KObject): Json[] {
  const spec = obj(o.spec);
  const exp = num(spec.expirationSeconds);
  return [
    meta(o).name,
    since(str(o.metadata.creationTimestamp)),
    str(spec.signerName),
    str(spec.username),
    exp === undefined ? '<none>' : humanDuration(exp * 1000),
    condition(o),
  ];
}

import type { ResourceType } from '../resources.js';
import { meta, obj, str, type Json, type JsonObject, type KObject } from '../types.js';
import { AGE_COLUMN, NAME_COLUMN, col, columnJson, type Column } from './columns.js';
import { since } from './human-duration.js';
import {
  CONFIGMAP_COLUMNS,
  configMapCells,
  SECRET_COLUMNS,
  secretCells,
  SERVICE_ACCOUNT_COLUMNS,
  serviceAccountCells,
} from './config-rows.js';
import { CSR_COLUMNS, csrCells } from './csr-row.js';
import { EVENT_COLUMNS, eventCells } from './event-row.js';
import { NODE_COLUMNS, nodeCells } from './node-row.js';
import { POD_COLUMNS, podCells } from './pod-row.js';
import { SERVICE_COLUMNS, serviceCells } from './service-row.js';
import { RUNTIME_CLASS_COLUMNS, runtimeClassCells } from '../runtime-class.js';

interface Printer {
  columns: Column[];
  cells(o: KObject): Json[];
}

const GENERIC: Printer = {
  columns: [NAME_COLUMN, AGE_COLUMN],
  cells: (o) => [meta(o).name, since(str(o.metadata.creationTimestamp))],
};

const PRINTERS: Record<string, Printer> = {
  pods: { columns: POD_COLUMNS, cells: podCells },
  nodes: { columns: NODE_COLUMNS, cells: nodeCells },
  events: { columns: EVENT_COLUMNS, cells: eventCells },
  configmaps: { columns: CONFIGMAP_COLUMNS, cells: configMapCells },
  secrets: { columns: SECRET_COLUMNS, cells: secretCells },
  services: { columns: SERVICE_COLUMNS, cells: serviceCells },
  serviceaccounts: { columns: SERVICE_ACCOUNT_COLUMNS, cells: serviceAccountCells },
  namespaces: {
    columns: [NAME_COLUMN, col('Status', 'The namespace phase.'), AGE_COLUMN],
    cells: (o) => [meta(o).name, str(obj(o.status).phase), since(str(o.metadata.creationTimestamp))],
  },
  'certificatesigningrequests.certificates.k8s.io': { columns: CSR_COLUMNS, cells: csrCells },
  'runtimeclasses.node.k8s.io': { columns: RUNTIME_CLASS_COLUMNS, cells: runtimeClassCells },
  'leases.coordination.k8s.io': {
    columns: [NAME_COLUMN, col('Holder', 'The current holder of the lease.'), AGE_COLUMN],
    cells: (o) => [meta(o).name, str(obj(o.spec).holderIdentity), since(str(o.metadata.creationTimestamp))],
  },
};

export type IncludeObject = 'None' | 'Metadata' | 'Object';

function rowObject(o: KObject, include: IncludeObject): Json | undefined {
  if (include === 'None') return undefined;
  if (include === 'Object') return o as unknown as JsonObject;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
}

/** A meta.k8s.io/v1 Table of the objects, as the server answers `Accept: ...;as=Table`. */
export function toTable(
  rt: ResourceType,
  objects: KObject[],
  resourceVersion: string,
  include: IncludeObject,
  noHeaders = false,
): JsonObject {
  const printer = PRINTERS[rt.storageKey] ?? GENERIC;
  const rows: Json[] = objects.map((o) => {
    const row: JsonObject = { cells: printer.cells(o) };
    const ro = rowObject(o, include);
    if (ro !== undefined) row.object = ro;
    return row;
  });
  const table: JsonObject = {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: resourceVersion ? { resourceVersion } : {},
    columnDefinitions: noHeaders ? null : printer.columns.map(columnJson),
    rows,
  };
  return table;
}

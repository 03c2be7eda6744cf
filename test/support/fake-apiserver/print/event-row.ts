import { meta, num, obj, str, type Json, type KObject } from '../types.js';
import { col, type Column } from './columns.js';
import { since } from './human-duration.js';

export const EVENT_COLUMNS: Column[] = [
  col('Last Seen', 'Time since the event was last seen.'),
  col('Type', 'Normal or Warning.'),
  col('Reason', 'Short machine-readable cause.'),
  col('Object', 'The object the event is about, kind/name.'),
  col('Subobject', 'The field path within the object.', 1),
  col('Source', 'The component (and host) that reported it.', 1),
  col('Message', 'Human-readable description.'),
  col('First Seen', 'Time since the event was first seen.', 1),
  col('Count', 'How many times it happened.', 1, 'integer'),
  col('Name', 'The event object name.', 1, 'string', 'name'),
];

/** A core/v1 Event row as `kubectl get events` shows it. */
export function eventCells(ev: KObject): Json[] {
  const involved = obj(ev.involvedObject);
  const source = obj(ev.source);
  const series = obj(ev.series);
  const first = str(ev.firstTimestamp) ? since(str(ev.firstTimestamp)) : since(str(ev.eventTime));
  let last = str(ev.lastTimestamp) ? since(str(ev.lastTimestamp)) : first;
  let count = num(ev.count) ?? 0;
  if (str(series.lastObservedTime)) {
    last = since(str(series.lastObservedTime));
    count = num(series.count) ?? count;
  } else if (count === 0) count = 1;
  const kind = str(involved.kind).toLowerCase();
  const target = str(involved.name) ? `${kind}/${str(involved.name)}` : kind;
  const component = str(source.component) || str(ev.reportingComponent);
  const host = str(source.host) || str(ev.reportingInstance);
  return [
    last,
    str(ev.type),
    str(ev.reason),
    target,
    str(involved.fieldPath),
    [component, host].filter(Boolean).join(', '),
    str(ev.message).trim(),
    first,
    count,
    meta(ev).name,
  ];
}

import type { JsonObject } from '../types.js';

export interface Column {
  name: string;
  type: 'string' | 'integer' | 'date';
  format: string;
  description: string;
  priority: number;
}

export function col(
  name: string,
  description: string,
  priority = 0,
  type: Column['type'] = 'string',
  format = '',
): Column {
  return { name, type, format, description, priority };
}

export function columnJson(c: Column): JsonObject {
  return { name: c.name, type: c.type, format: c.format, description: c.description, priority: c.priority };
}

export const NAME_COLUMN = col('Name', 'The object name, unique within its namespace.', 0, 'string', 'name');

export const AGE_COLUMN = col('Age', 'Time since the server created the object.');

import type { JsonObject } from './types.js';
import type { ResourceType } from './resources.js';

/** A metav1.Status failure, thrown by handlers and written as the response body. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: JsonObject,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toStatus(): JsonObject {
    const s: JsonObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
    };
    // StatusReasonUnknown is the empty string, which the real server omits.
    if (this.reason) s.reason = this.reason;
    if (this.details) s.details = this.details;
    s.code = this.code;
    return s;
  }
}

/** "pods", or "leases.coordination.k8s.io" for a named group, as GroupResource.String() prints it. */
export function qualified(rt: ResourceType): string {
  return rt.group ? `${rt.resource}.${rt.group}` : rt.resource;
}

function details(rt: ResourceType, name: string, extra: JsonObject = {}): JsonObject {
  const d: JsonObject = {};
  if (name) d.name = name;
  if (rt.group) d.group = rt.group;
  d.kind = rt.resource;
  return { ...d, ...extra };
}

export function notFound(rt: ResourceType, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualified(rt)} "${name}" not found`, details(rt, name));
}

export function alreadyExists(rt: ResourceType, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualified(rt)} "${name}" already exists`, details(rt, name));
}

export function conflict(rt: ResourceType, name: string, why: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(rt)} "${name}": ${why}`,
    details(rt, name),
  );
}

export const MODIFIED_CONFLICT =
  'the object has been modified; please apply your changes to the latest version and try again';

export function forbidden(rt: ResourceType | undefined, name: string, why: string): ApiError {
  if (!rt) return new ApiError(403, 'Forbidden', `forbidden: ${why}`, {});
  const message = name ? `${qualified(rt)} "${name}" is forbidden: ${why}` : `${qualified(rt)} is forbidden: ${why}`;
  return new ApiError(403, 'Forbidden', message, details(rt, name));
}

export interface FieldCause {
  type:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueDuplicate'
    | 'FieldValueForbidden'
    | 'FieldValueNotSupported'
    | 'FieldValueTooLong'
    | 'FieldValueNotFound';
  field: string;
  /** The text after "field: ", e.g. `Required value` or `Invalid value: "x": why`. */
  detail: string;
}

export function invalid(rt: ResourceType, name: string, causes: FieldCause[]): ApiError {
  const parts = causes.map((c) => `${c.field}: ${c.detail}`);
  const joined = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${rt.kind} "${name}" is invalid: ${joined}`, {
    name,
    ...(rt.group ? { group: rt.group } : {}),
    kind: rt.kind,
    causes: causes.map((c) => ({ reason: c.type, message: c.detail, field: c.field })),
  });
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource');
}

export function expired(rv: string, current: string): ApiError {
  return new ApiError(410, 'Expired', `too old resource version: ${rv} (${current})`);
}

export function unsupportedPatch(): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json',
  );
}

/** The failures failNext() injects, shaped as the server's own. */
export function injected(code: 500 | 503 | 429, retryAfterSeconds?: number): ApiError {
  const headers: Record<string, string> =
    retryAfterSeconds !== undefined ? { 'Retry-After': String(retryAfterSeconds) } : {};
  const d: JsonObject = retryAfterSeconds !== undefined ? { retryAfterSeconds } : {};
  switch (code) {
    case 429:
      return new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', d, headers);
    case 503:
      return new ApiError(
        503,
        'ServiceUnavailable',
        'The server is currently unable to handle the request',
        d,
        headers,
      );
    default:
      return new ApiError(500, 'InternalError', 'Internal error occurred: injected failure', d, headers);
  }
}

export function successStatus(rt: ResourceType, name: string, uid: string): JsonObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: details(rt, name, { uid }),
  };
}

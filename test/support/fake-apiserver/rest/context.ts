import { decodeProtobuf, PROTOBUF } from '../protobuf.js';
import { badRequest } from '../status.js';
import type { UserInfo } from '../authn.js';
import type { Res } from '../http.js';
import type { ResourceRequest } from '../request-info.js';
import type { ObjectStore } from '../store.js';
import type { Chaos } from '../chaos.js';
import type { Json } from '../types.js';
import type { TokenIssuer } from '../tokens/token-request.js';

/** One authenticated, authorized resource request on its way through the REST layer. */
export interface RestContext {
  store: ObjectStore;
  user: UserInfo;
  req: ResourceRequest;
  /** The request body (already read); '' when there was none. */
  rawBody: string;
  /** The same body as bytes (a protobuf body is not text). */
  rawBytes: Buffer;
  contentType: string;
  accept: string;
  res: Res;
  /** Faults asked of watch streams (optional: only the server's request handler sets it). */
  chaos?: Pick<Chaos, 'watchFault' | 'hugeLineBytes' | 'hugeLineBytesSent'>;
  /** serviceaccounts/<name>/token (optional: only the server's request handler sets it). */
  tokenIssuer?: Pick<TokenIssuer, 'create'>;
  /** Run the ServiceAccount admission plugin on pod creates (off unless the server was asked). */
  serviceAccountAdmission?: boolean;
}

export interface Reply {
  status: number;
  body: Json;
}

export function parseBody(ctx: RestContext): Json {
  if (ctx.contentType.split(';')[0].trim() === PROTOBUF)
    return ctx.rawBytes.length ? decodeProtobuf(ctx.rawBytes) : null;
  if (!ctx.rawBody.trim()) return null;
  try {
    return JSON.parse(ctx.rawBody) as Json;
  } catch (e) {
    throw badRequest(`error decoding request body: ${(e as Error).message}`);
  }
}

// The kubelet's auth filter after authentication: each subresource the path maps to is asked in
// turn; the first "allow" lets the request through. A review that cannot be made answers 500
// "Authorization error", as the kubelet does (never an allow); a denial answers 403.
import { requestAttributes } from './request-attributes.js';
import type { Authorizer } from './subject-access-review.js';
import type { UserInfo } from './user.js';
import { errorMessage } from '../../util/error-message.js';

export type AuthzVerdict =
  { allowed: true } | { allowed: false; statusCode: 403 | 500; message: string; cause?: string };

export async function authorizeRequest(
  authorizer: Authorizer,
  user: UserInfo,
  method: string,
  path: string,
): Promise<AuthzVerdict> {
  const attrs = requestAttributes(method, path);
  for (const subresource of attrs.subresources) {
    try {
      if (await authorizer.authorize(user, { verb: attrs.verb, subresource })) return { allowed: true };
    } catch (e) {
      return {
        allowed: false,
        statusCode: 500,
        message: `Authorization error (user=${user.name}, verb=${attrs.verb}, resource=nodes, subresource=${subresource})`,
        cause: errorMessage(e),
      };
    }
  }
  return {
    allowed: false,
    statusCode: 403,
    message: `Forbidden (user=${user.name}, verb=${attrs.verb}, resource=nodes, subresource(s)=[${attrs.subresources.join(' ')}])\n`,
  };
}

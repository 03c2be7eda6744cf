// POST serviceaccounts/<name>/token, as the TokenREST registry answers it: the service account read
// first, audiences and expirationSeconds defaulted (the server's audiences, 3600), the validation's
// 10-minute floor, the bound object looked up (Pod, Secret or Node, its UID checked), the kubelet's
// 3607-second request extended to a year with a warnafter (as --service-account-extend-token-expiration
// does), and a signed JWT in status. Every token issued is recorded for tests.
import { randomUUID } from 'node:crypto';
import { API_AUDIENCES, type TokenTable } from '../authn.js';
import { requireNamespace } from '../rest/create.js';
import { parseBody, type Reply, type RestContext } from '../rest/context.js';
import { ApiError, badRequest, conflict, notFound } from '../status.js';
import type { ObjectStore } from '../store.js';
import { byKey } from '../resources.js';
import { arr, isObject, meta, num, obj, str, type JsonObject, type KObject } from '../types.js';
import { tokenUser } from './token-user.js';
import { ServiceAccountKey, type ServiceAccountClaims } from './service-account-jwt.js';

/** kubeadm's --service-account-issuer, which is also the default --api-audiences. */
export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const WARN_ONLY_SECONDS = 3607;
const EXTENDED_SECONDS = 365 * 24 * 3600;
const MIN_SECONDS = 600;

/** One token the fake issued. */
export interface IssuedToken {
  namespace: string;
  serviceAccount: string;
  /** The bound pod ('' when the token is not bound to one). */
  podName: string;
  podUid: string;
  audiences: string[];
  /** As requested (after defaulting); the JWT's exp may be later (the 3607 s extension). */
  expirationSeconds: number;
  issuedAt: Date;
  /** status.expirationTimestamp. */
  expiresAt: Date;
  /** Who asked (the authenticated user). */
  requestedBy: string;
  token: string;
}

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000);
const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

function tokenRequestInvalid(field: string, value: number, why: string): ApiError {
  const detail = `Invalid value: ${value}: ${why}`;
  return new ApiError(422, 'Invalid', `TokenRequest.authentication.k8s.io "" is invalid: ${field}: ${detail}`, {
    group: 'authentication.k8s.io',
    kind: 'TokenRequest',
    causes: [{ reason: 'FieldValueInvalid', message: detail, field }],
  });
}

/** Lifetimes: the validation's floor (600 s in the real server) and --service-account-max-token-expiration (0: none). */
export interface TokenSettings {
  minExpirationSeconds: number;
  maxExpirationSeconds: number;
}

export class TokenIssuer {
  readonly key = new ServiceAccountKey();
  readonly issued: IssuedToken[] = [];
  issuer = DEFAULT_ISSUER;
  audiences: string[] = [...API_AUDIENCES];
  settings: TokenSettings = { minExpirationSeconds: MIN_SECONDS, maxExpirationSeconds: 0 };

  constructor(
    private readonly store: ObjectStore,
    private readonly tokens: TokenTable,
  ) {}

  /** Tokens issued bound to the pod with this UID. */
  forPod(podUid: string): IssuedToken[] {
    return this.issued.filter((t) => t.podUid === podUid);
  }

  create(ctx: RestContext): Reply {
    const { namespace, name } = ctx.req;
    const body = parseBody(ctx);
    if (!isObject(body)) throw badRequest("Object 'Kind' is missing in the request body");
    if (body.kind !== undefined && body.kind !== 'TokenRequest')
      throw badRequest('the object provided is unrecognized (must be of type TokenRequest)');
    requireNamespace(ctx);
    const sa = this.store.get('serviceaccounts', namespace, name);
    if (!sa) throw notFound(byKey('serviceaccounts'), name);
    const spec = obj(body.spec);
    const audiences = arr(spec.audiences)
      .map((a) => str(a))
      .filter(Boolean);
    const aud = audiences.length ? audiences : [...this.audiences];
    const requested = num(spec.expirationSeconds) ?? 3600;
    if (requested < this.settings.minExpirationSeconds)
      throw tokenRequestInvalid('spec.expirationSeconds', requested, 'may not specify a duration less than 10 minutes');
    if (requested > 2 ** 32)
      throw tokenRequestInvalid(
        'spec.expirationSeconds',
        requested,
        'may not specify a duration larger than 2^32 seconds',
      );
    // The cap comes before the 3607 s extension, so a capped kubelet request is not extended.
    const max = this.settings.maxExpirationSeconds;
    const expirationSeconds = max > 0 && requested > max ? max : requested;
    const bound = this.boundObject(namespace, name, isObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined);

    const now = new Date();
    const kubeAudiences = aud.every((a) => this.audiences.includes(a));
    const extended = bound.pod !== undefined && expirationSeconds === WARN_ONLY_SECONDS && kubeAudiences;
    const claims: ServiceAccountClaims = {
      aud,
      exp: seconds(now) + (extended ? EXTENDED_SECONDS : expirationSeconds),
      iat: seconds(now),
      iss: this.issuer,
      jti: randomUUID(),
      'kubernetes.io': { namespace, serviceaccount: { name, uid: meta(sa).uid } },
      nbf: seconds(now),
      sub: `system:serviceaccount:${namespace}:${name}`,
    };
    const k8s = claims['kubernetes.io'];
    if (bound.pod) k8s.pod = { name: meta(bound.pod).name, uid: meta(bound.pod).uid };
    if (bound.secret) k8s.secret = { name: meta(bound.secret).name, uid: meta(bound.secret).uid };
    if (bound.node)
      k8s.node = meta(bound.node).uid
        ? { name: meta(bound.node).name, uid: meta(bound.node).uid }
        : { name: meta(bound.node).name };
    if (extended) k8s.warnafter = seconds(now) + expirationSeconds;
    const token = this.key.sign(claims);
    const expiresAt = new Date(now.getTime() + expirationSeconds * 1000);
    this.tokens.set(token, tokenUser(this.store, claims, bound.pod !== undefined));
    this.issued.push({
      namespace,
      serviceAccount: name,
      podName: bound.pod ? meta(bound.pod).name : '',
      podUid: bound.pod ? meta(bound.pod).uid : '',
      audiences: aud,
      expirationSeconds,
      issuedAt: now,
      expiresAt,
      requestedBy: ctx.user.name,
      token,
    });
    const outSpec: JsonObject = { audiences: aud, expirationSeconds };
    if (isObject(spec.boundObjectRef)) outSpec.boundObjectRef = spec.boundObjectRef;
    return {
      status: 201,
      body: {
        kind: 'TokenRequest',
        apiVersion: 'authentication.k8s.io/v1',
        metadata: { name, namespace, creationTimestamp: rfc3339(now) },
        spec: outSpec,
        status: { token, expirationTimestamp: rfc3339(expiresAt) },
      },
    };
  }

  private boundObject(
    namespace: string,
    saName: string,
    ref: JsonObject | undefined,
  ): { pod?: KObject; secret?: KObject; node?: KObject } {
    if (!ref) return {};
    const apiVersion = str(ref.apiVersion);
    const kind = str(ref.kind);
    const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
    const refName = str(ref.name);
    const checkUid = (o: KObject): void => {
      if (str(ref.uid) && str(ref.uid) !== meta(o).uid)
        throw conflict(
          { ...byKey('pods'), resource: kind, group },
          refName,
          `the UID in the bound object reference (${str(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
        );
    };
    if (group === '' && kind === 'Pod') {
      const pod = this.store.get('pods', namespace, refName);
      if (!pod) throw notFound(byKey('pods'), refName);
      if (str(obj(pod.spec).serviceAccountName) !== saName)
        throw badRequest(
          `cannot bind token for serviceaccount "${saName}" to pod running with different serviceaccount name.`,
        );
      checkUid(pod);
      const nodeName = str(obj(pod.spec).nodeName);
      const node = nodeName ? (this.store.get('nodes', '', nodeName) ?? { metadata: { name: nodeName } }) : undefined;
      return { pod, node };
    }
    if (group === '' && kind === 'Secret') {
      const secret = this.store.get('secrets', namespace, refName);
      if (!secret) throw notFound(byKey('secrets'), refName);
      checkUid(secret);
      return { secret };
    }
    if (group === '' && kind === 'Node') {
      const node = this.store.get('nodes', '', refName);
      if (!node) throw notFound(byKey('nodes'), refName);
      checkUid(node);
      return { node };
    }
    throw badRequest(
      `cannot bind token to object of type ${group ? `${group}/` : '/'}${apiVersion.split('/').pop() ?? ''}, Kind=${kind}`,
    );
  }
}

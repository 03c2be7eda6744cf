// Request bodies in the Kubernetes protobuf encoding, which kubectl's typed clients send (kubectl
// 1.32 PUTs `certificate approve|deny` that way): the `k8s\0` magic, a runtime.Unknown envelope
// naming the kind, and the object. Decoded into the JSON form the rest of the fake works on, for
// the kinds a test needs; answers stay JSON, which those clients also accept.
import protobuf from 'protobufjs';
import { badRequest, unsupportedPatch } from './status.js';
import { isObject, type Json, type JsonObject } from './types.js';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

// Field numbers from k8s.io/apimachinery and k8s.io/api generated.proto.
const SCHEMA = `
syntax = "proto2";
package k8s;
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message OwnerReference { optional string apiVersion = 5; optional string kind = 1; optional string name = 3; optional string uid = 4; optional bool controller = 6; optional bool blockOwnerDeletion = 7; }
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string selfLink = 4;
  optional string uid = 5; optional string resourceVersion = 6; optional int64 generation = 7; optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9; optional int64 deletionGracePeriodSeconds = 10; map<string, string> labels = 11;
  map<string, string> annotations = 12; repeated OwnerReference ownerReferences = 13; repeated string finalizers = 14;
}
message ExtraValue { repeated string items = 1; }
message CertificateSigningRequestSpec {
  optional bytes request = 1; optional string signerName = 7; optional int32 expirationSeconds = 8; repeated string usages = 5;
  optional string username = 2; optional string uid = 3; repeated string groups = 4; map<string, ExtraValue> extra = 6;
}
message CertificateSigningRequestCondition {
  optional string type = 1; optional string status = 6; optional string reason = 2; optional string message = 3;
  optional Time lastUpdateTime = 4; optional Time lastTransitionTime = 5;
}
message CertificateSigningRequestStatus { repeated CertificateSigningRequestCondition conditions = 1; optional bytes certificate = 2; }
message CertificateSigningRequest { optional ObjectMeta metadata = 1; optional CertificateSigningRequestSpec spec = 2; optional CertificateSigningRequestStatus status = 3; }
message BoundObjectReference { optional string kind = 1; optional string apiVersion = 2; optional string name = 3; optional string uid = 4; }
message TokenRequestSpec { repeated string audiences = 1; optional int64 expirationSeconds = 4; optional BoundObjectReference boundObjectRef = 3; }
message ObjectReference { optional string kind = 1; optional string namespace = 2; optional string name = 3; optional string uid = 4; optional string apiVersion = 5; optional string resourceVersion = 6; optional string fieldPath = 7; }
message LocalObjectReference { optional string name = 1; }
message ConfigMap { optional ObjectMeta metadata = 1; map<string, string> data = 2; map<string, bytes> binaryData = 3; optional bool immutable = 4; }
message Secret { optional ObjectMeta metadata = 1; map<string, bytes> data = 2; optional string type = 3; map<string, string> stringData = 4; optional bool immutable = 5; }
message ServiceAccount { optional ObjectMeta metadata = 1; repeated ObjectReference secrets = 2; repeated LocalObjectReference imagePullSecrets = 3; optional bool automountServiceAccountToken = 4; }
message IntOrString { optional int64 type = 1; optional int32 intVal = 2; optional string strVal = 3; }
message ServicePort { optional string name = 1; optional string protocol = 2; optional int32 port = 3; optional IntOrString targetPort = 4; optional int32 nodePort = 5; optional string appProtocol = 6; }
message ServiceSpec {
  repeated ServicePort ports = 1; map<string, string> selector = 2; optional string clusterIP = 3; optional string type = 4; repeated string externalIPs = 5;
  optional string sessionAffinity = 7; optional string loadBalancerIP = 8; repeated string loadBalancerSourceRanges = 9; optional string externalName = 10;
  optional string externalTrafficPolicy = 11; optional int32 healthCheckNodePort = 12; optional bool publishNotReadyAddresses = 13; repeated string clusterIPs = 18;
  optional string ipFamilyPolicy = 17; repeated string ipFamilies = 19; optional bool allocateLoadBalancerNodePorts = 20; optional string loadBalancerClass = 21; optional string internalTrafficPolicy = 22;
}
message Service { optional ObjectMeta metadata = 1; optional ServiceSpec spec = 2; }
message NamespaceSpec { repeated string finalizers = 1; }
message Namespace { optional ObjectMeta metadata = 1; optional NamespaceSpec spec = 2; }
message TokenRequest { optional ObjectMeta metadata = 1; optional TokenRequestSpec spec = 2; }
`;

const root = protobuf.parse(SCHEMA, { keepCase: true }).root;
const KINDS: Record<string, string> = {
  'certificates.k8s.io/v1 CertificateSigningRequest': 'k8s.CertificateSigningRequest',
  // kubectl create token, and client-go's CreateToken.
  'authentication.k8s.io/v1 TokenRequest': 'k8s.TokenRequest',
  // kubectl create namespace|configmap|secret|service|serviceaccount.
  'v1 Namespace': 'k8s.Namespace',
  'v1 ConfigMap': 'k8s.ConfigMap',
  'v1 Secret': 'k8s.Secret',
  'v1 Service': 'k8s.Service',
  'v1 ServiceAccount': 'k8s.ServiceAccount',
};

/** metav1.Time as JSON: RFC 3339 to the second. */
function time(v: Json | undefined): Json | undefined {
  if (!isObject(v)) return v;
  return new Date(Number(v.seconds ?? 0) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The few places where the JSON form differs from the message: times, and ExtraValue as a plain list. */
function toJsonForm(o: JsonObject): JsonObject {
  const meta = o.metadata;
  if (isObject(meta))
    for (const k of ['creationTimestamp', 'deletionTimestamp'])
      if (meta[k] !== undefined) meta[k] = time(meta[k]) ?? null;
  const spec = o.spec;
  if (isObject(spec) && isObject(spec.extra))
    for (const [k, v] of Object.entries(spec.extra)) spec.extra[k] = isObject(v) ? (v.items ?? []) : v;
  // IntOrString is a number or a string in JSON.
  if (isObject(spec) && Array.isArray(spec.ports))
    for (const p of spec.ports)
      if (isObject(p) && isObject(p.targetPort))
        p.targetPort = p.targetPort.type === 1 ? (p.targetPort.strVal ?? '') : (p.targetPort.intVal ?? 0);
  const status = o.status;
  if (isObject(status) && Array.isArray(status.conditions))
    for (const c of status.conditions)
      if (isObject(c))
        for (const k of ['lastUpdateTime', 'lastTransitionTime']) if (c[k] !== undefined) c[k] = time(c[k]) ?? null;
  return o;
}

/** Decodes a protobuf request body into the object's JSON form (apiVersion and kind included). */
export function decodeProtobuf(body: Buffer): JsonObject {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw badRequest('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  const unknown = root
    .lookupType('k8s.Unknown')
    .toObject(root.lookupType('k8s.Unknown').decode(body.subarray(4)), { bytes: Buffer }) as {
    typeMeta?: { apiVersion?: string; kind?: string };
    raw?: Buffer;
  };
  const apiVersion = unknown.typeMeta?.apiVersion ?? '';
  const kind = unknown.typeMeta?.kind ?? '';
  const typeName = KINDS[`${apiVersion} ${kind}`];
  if (!typeName) throw unsupportedPatch();
  const type = root.lookupType(typeName);
  const obj = type.toObject(type.decode(unknown.raw ?? Buffer.alloc(0)), {
    longs: Number,
    bytes: String,
    defaults: false,
  }) as JsonObject;
  return { apiVersion, kind, ...toJsonForm(obj) };
}

// The name formats the API server enforces, as predicates with a human explanation: the first of
// the API server's messages for the value (validate/api-formats.ts has them all).
import { isDNS1123Label, isDNS1123Subdomain } from './validate/api-formats';

/** Why `v` is not an RFC 1123 label (namespaces, container and volume names), or undefined. */
export const dns1123LabelProblem = (v: string): string | undefined => isDNS1123Label(v)[0];

/** Why `v` is not an RFC 1123 subdomain (pod names), or undefined. */
export const dns1123SubdomainProblem = (v: string): string | undefined => isDNS1123Subdomain(v)[0];

// The name formats the API server enforces, as predicates with a human explanation.

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `v` is not an RFC 1123 label (namespaces, container and volume names), or undefined. */
export function dns1123LabelProblem(v: string): string | undefined {
  if (v.length > 63) return 'must be no more than 63 characters';
  if (!LABEL.test(v)) {
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Why `v` is not an RFC 1123 subdomain (pod names), or undefined. */
export function dns1123SubdomainProblem(v: string): string | undefined {
  if (v.length > 253) return 'must be no more than 253 characters';
  if (!SUBDOMAIN.test(v)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Why `v` is not an IANA service name (container port names), or undefined. */
export function ianaSvcNameProblem(v: string): string | undefined {
  if (v.length > 15) return 'must be no more than 15 characters';
  if (!/^[-a-z0-9]+$/.test(v)) return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)";
  if (v.includes('--')) return 'must not contain consecutive hyphens';
  if (!/[a-z]/.test(v)) return 'must contain at least one letter (a-z)';
  if (v.startsWith('-') || v.endsWith('-')) return 'must not begin or end with a hyphen';
  return undefined;
}

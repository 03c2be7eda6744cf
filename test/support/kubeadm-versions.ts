// The kubeadm releases whose files are in test/fixtures/kubeadm/<version>/ (its README says where each
// came from): every test of kubeadm's files takes its list from here.
export const KUBEADM_VERSIONS = ['1.28', '1.30', '1.32', '1.34', '1.35', '1.36', '1.37'] as const;
export type KubeadmVersion = (typeof KUBEADM_VERSIONS)[number];

// Which fields of the Pod's types are Go pointers (`*bool`, `*int64`, `*SecurityContext`, ...), by
// type name, as declared in k8s.io/api core/v1 and apimachinery meta/v1 (read at v1.34; every
// volume source of the inline VolumeSource is a pointer too).
//
// Why it matters: decoding into Go types, an optional non-pointer field cannot tell "absent" from
// its zero value (`hostPID: false`, `resources: {}`, `status: {}` are all "unset"), while a pointer
// can (`privileged: false` is set; `emptyDir: {}` selects a volume type). bootlet's decoder keeps
// that distinction exactly, so spelling out a zero value never changes a pod's identity, and a
// meaningful false or empty object is never lost.

const VOLUME_SOURCE = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi',
  'glusterfs', 'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc',
  'azureFile', 'configMap', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected',
  'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral', 'image',
];

const CONTAINER = ['restartPolicy', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'securityContext'];

export const GO_POINTER_FIELDS: Readonly<Record<string, readonly string[]>> = {
  ObjectMeta: ['deletionTimestamp', 'deletionGracePeriodSeconds'],
  OwnerReference: ['controller', 'blockOwnerDeletion'],
  ManagedFieldsEntry: ['time', 'fieldsV1'],
  PodSpec: [
    'terminationGracePeriodSeconds', 'activeDeadlineSeconds', 'automountServiceAccountToken', 'shareProcessNamespace',
    'securityContext', 'affinity', 'priority', 'dnsConfig', 'runtimeClassName', 'enableServiceLinks', 'preemptionPolicy',
    'setHostnameAsFQDN', 'os', 'hostUsers', 'resources', 'hostnameOverride',
  ],
  Container: CONTAINER,
  EphemeralContainer: CONTAINER,
  EnvFromSource: ['configMapRef', 'secretRef'],
  ConfigMapEnvSource: ['optional'],
  SecretEnvSource: ['optional'],
  EnvVar: ['valueFrom'],
  EnvVarSource: ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef'],
  ConfigMapKeySelector: ['optional'],
  SecretKeySelector: ['optional'],
  VolumeMount: ['recursiveReadOnly', 'mountPropagation'],
  Probe: ['terminationGracePeriodSeconds', 'exec', 'httpGet', 'tcpSocket', 'grpc'],
  GRPCAction: ['service'],
  Lifecycle: ['postStart', 'preStop', 'stopSignal'],
  LifecycleHandler: ['exec', 'httpGet', 'tcpSocket', 'sleep'],
  SecurityContext: [
    'capabilities', 'privileged', 'seLinuxOptions', 'windowsOptions', 'runAsUser', 'runAsGroup', 'runAsNonRoot',
    'readOnlyRootFilesystem', 'allowPrivilegeEscalation', 'procMount', 'seccompProfile', 'appArmorProfile',
  ],
  WindowsSecurityContextOptions: ['gmsaCredentialSpecName', 'gmsaCredentialSpec', 'runAsUserName', 'hostProcess'],
  SeccompProfile: ['localhostProfile'],
  AppArmorProfile: ['localhostProfile'],
  PodSecurityContext: [
    'seLinuxOptions', 'windowsOptions', 'runAsUser', 'runAsGroup', 'runAsNonRoot', 'supplementalGroupsPolicy', 'fsGroup',
    'fsGroupChangePolicy', 'seccompProfile', 'appArmorProfile', 'seLinuxChangePolicy',
  ],
  Affinity: ['nodeAffinity', 'podAffinity', 'podAntiAffinity'],
  NodeAffinity: ['requiredDuringSchedulingIgnoredDuringExecution'],
  PodAffinityTerm: ['labelSelector', 'namespaceSelector'],
  Toleration: ['tolerationSeconds'],
  PodDNSConfigOption: ['value'],
  TopologySpreadConstraint: ['labelSelector', 'minDomains', 'nodeAffinityPolicy', 'nodeTaintsPolicy'],
  PodResourceClaim: ['resourceClaimName', 'resourceClaimTemplateName', 'source'],
  ClaimSource: ['resourceClaimName', 'resourceClaimTemplateName'],
  Volume: VOLUME_SOURCE,
  HostPathVolumeSource: ['type'],
  EmptyDirVolumeSource: ['sizeLimit'],
  SecretVolumeSource: ['defaultMode', 'optional'],
  KeyToPath: ['mode'],
  ISCSIVolumeSource: ['secretRef', 'initiatorName'],
  RBDVolumeSource: ['secretRef'],
  FlexVolumeSource: ['secretRef'],
  CinderVolumeSource: ['secretRef'],
  CephFSVolumeSource: ['secretRef'],
  DownwardAPIVolumeSource: ['defaultMode'],
  DownwardAPIVolumeFile: ['fieldRef', 'resourceFieldRef', 'mode'],
  FCVolumeSource: ['lun'],
  ConfigMapVolumeSource: ['defaultMode', 'optional'],
  AzureDiskVolumeSource: ['cachingMode', 'fsType', 'readOnly', 'kind'],
  ProjectedVolumeSource: ['defaultMode'],
  VolumeProjection: ['secret', 'downwardAPI', 'configMap', 'serviceAccountToken', 'clusterTrustBundle', 'podCertificate'],
  SecretProjection: ['optional'],
  ConfigMapProjection: ['optional'],
  ServiceAccountTokenProjection: ['expirationSeconds'],
  ClusterTrustBundleProjection: ['name', 'signerName', 'labelSelector', 'optional'],
  ScaleIOVolumeSource: ['secretRef'],
  StorageOSVolumeSource: ['secretRef'],
  CSIVolumeSource: ['readOnly', 'fsType', 'nodePublishSecretRef'],
  EphemeralVolumeSource: ['volumeClaimTemplate'],
  PersistentVolumeClaimSpec: ['selector', 'storageClassName', 'volumeMode', 'dataSource', 'dataSourceRef', 'volumeAttributesClassName'],
  TypedLocalObjectReference: ['apiGroup'],
  TypedObjectReference: ['apiGroup', 'namespace'],
};

variable "cluster_name" {
  type    = string
  default = "gpu-platform"
}

# The GPU pool and its node class are applied by Terraform, not synced from YAML.
resource "kubectl_manifest" "gpu_node_class" {
  yaml_body = <<-YAML
    apiVersion: karpenter.k8s.aws/v1
    kind: EC2NodeClass
    metadata:
      name: gpu
    spec:
      role: "KarpenterNodeRole-${var.cluster_name}"
      amiSelectorTerms:
        - alias: al2023@v20250505
      subnetSelectorTerms:
        - tags:
            karpenter.sh/discovery: ${var.cluster_name}
      securityGroupSelectorTerms:
        - tags:
            karpenter.sh/discovery: ${var.cluster_name}
  YAML
}

resource "kubectl_manifest" "gpu_pool" {
  yaml_body = <<-YAML
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: gpu
    spec:
      template:
        metadata:
          labels:
            workload: training
        spec:
          nodeClassRef:
            group: karpenter.k8s.aws
            kind: EC2NodeClass
            name: gpu
          requirements:
            - key: karpenter.k8s.aws/instance-family
              operator: In
              values: ["p5"]
          taints:
            - key: workload
              value: "training"
              effect: NoSchedule
      limits:
        nvidia.com/gpu: 64
      disruption:
        consolidationPolicy: WhenEmpty
        consolidateAfter: 10m
  YAML

  depends_on = [kubectl_manifest.gpu_node_class]
}

# Rendered by Terraform's template directives: not YAML until then, so not read.
resource "kubectl_manifest" "team_queues" {
  for_each  = toset(["a", "b"])
  yaml_body = <<-YAML
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: team-${each.key}
      namespace: team-${each.key}
    spec:
      clusterQueue: gpu
    %{~ if each.key == "a" }
    status: {}
    %{~ endif }
  YAML
}

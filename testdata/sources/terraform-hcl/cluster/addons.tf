# The karpenter-resources chart makes a NodePool and an EC2NodeClass from these values.
module "eks_data_addons" {
  source = "aws-ia/eks-data-addons/aws"

  enable_karpenter_resources = true
  karpenter_resources_helm_config = {
    g6-gpu = {
      values = [
        <<-EOT
      name: g6-gpu
      clusterName: ${module.eks.cluster_name}
      ec2NodeClass:
        amiFamily: Bottlerocket
      nodePool:
        labels:
          - gpuType: l4
        taints:
          - key: nvidia.com/gpu
            value: "Exists"
            effect: "NoSchedule"
        requirements:
          - key: "karpenter.k8s.aws/instance-family"
            operator: In
            values: ["g6"]
        limits:
          cpu: 1000
      EOT
      ]
    }
  }
}

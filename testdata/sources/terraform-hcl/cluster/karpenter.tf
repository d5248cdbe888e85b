# One Karpenter NodePool per entry of var.gpu_pools.
resource "kubectl_manifest" "gpu_pool" {
  for_each = var.gpu_pools
  yaml_body = yamlencode({
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata   = { name = each.key }
    spec = {
      template = {
        metadata = { labels = { gpu = each.key } }
        spec = {
          nodeClassRef = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "g6-gpu" }
          requirements = [
            { key = "karpenter.k8s.aws/instance-family", operator = "In", values = [each.value.family] },
          ]
          taints = [{ key = "gpu-model", value = each.key, effect = "NoSchedule" }]
        }
      }
      disruption = { consolidationPolicy = "WhenEmpty", consolidateAfter = "10m" }
      limits     = { "nvidia.com/gpu" = each.value.gpus }
    }
  })
}

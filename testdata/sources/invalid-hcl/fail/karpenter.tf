# The NodePool heredoc is never closed: `terraform plan` stops here and nothing is applied.
resource "kubectl_manifest" "gpu_pool" {
  yaml_body = <<-YAML
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: gpu
  YAM
}

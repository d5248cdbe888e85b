locals {
  flavor = "l4"
}

resource "kubernetes_manifest" "flavor" {
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "ResourceFlavor"
    metadata   = { name = local.flavor }
    spec       = { nodeLabels = { gpuType = "l4" } }
  }
}

resource "kubernetes_manifest" "queue" {
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "ClusterQueue"
    metadata   = { name = "gpu" }
    spec = {
      namespaceSelector = {}
      resourceGroups = [{
        coveredResources = ["nvidia.com/gpu"]
        flavors = [{
          name      = "l4-spot"
          resources = [{ name = "nvidia.com/gpu", nominalQuota = 8 }]
        }]
      }]
    }
  }
}

# One LocalQueue per team, in the team's namespace.
resource "kubectl_manifest" "team_queue" {
  for_each = var.teams
  yaml_body = yamlencode({
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "LocalQueue"
    metadata   = { name = "gpu", namespace = each.key }
    spec       = { clusterQueue = "gpu" }
  })
}

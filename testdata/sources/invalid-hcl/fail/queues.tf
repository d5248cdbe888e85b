resource "kubernetes_manifest" "queue" {
  manifest = {
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "ClusterQueue"
    metadata   = { name = "gpu" }
    spec       = { namespaceSelector = {} ]
  }
}

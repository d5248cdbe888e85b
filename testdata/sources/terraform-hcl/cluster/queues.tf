# Queues rendered from template files by Terraform.
resource "kubectl_manifest" "research" {
  yaml_body = templatefile("${path.module}/templates/clusterqueue.yaml.tftpl", {
    name  = "research"
    quota = 4
  })
}

resource "kubectl_manifest" "teams" {
  yaml_body = templatefile("${path.module}/templates/localqueues.tftpl", {
    teams = var.teams
  })
}

# A cookiecutter template of a module: not HCL until it is rendered.
resource "kubectl_manifest" "pool" {
  yaml_body = {{ cookiecutter.pool_yaml }}
}

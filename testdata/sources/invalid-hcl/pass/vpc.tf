# Not a file gpuops reads (it defines no cluster objects): never parsed, never reported.
module "vpc" {
  source = "terraform-aws-modules/vpc/aws"
  name   = [
}

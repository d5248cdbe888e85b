# GPU nodes that exist without Karpenter: pods pinned to them must tolerate their taints (on EKS
# the nvidia.com/gpu one is tolerated for every pod that requests a GPU).
module "eks" {
  source       = "terraform-aws-modules/eks/aws"
  cluster_name = var.cluster_name

  eks_managed_node_groups = {
    inference = {
      instance_types = var.gpu_instance_types
      max_size       = 4
      labels         = { workload = "inference" }
      taints = {
        gpu = {
          key    = "nvidia.com/gpu"
          value  = "true"
          effect = "NO_SCHEDULE"
        }
        dedicated = {
          key    = "dedicated"
          value  = "inference"
          effect = "NO_SCHEDULE"
        }
      }
    }
  }
}

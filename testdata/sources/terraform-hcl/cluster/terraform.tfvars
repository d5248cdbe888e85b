cluster_name       = "ml-prod"
gpu_instance_types = ["g5.12xlarge"]

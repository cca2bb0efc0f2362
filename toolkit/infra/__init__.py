"""The only readers of disk, git and the environment: git, store, local state, config, resources, repository paths."""

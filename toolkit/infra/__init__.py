"""The only readers of disk, git and the environment.

git, store, local state, config, shipped resources, repository-relative paths.
"""

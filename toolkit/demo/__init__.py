"""`workgroup demo`: the runner and its narrated steps."""

"""Pure building blocks, no I/O.

Errors, canonical JSON, time, JavaScript value semantics, findings output.
"""

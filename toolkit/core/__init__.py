"""Pure building blocks: errors, canonical JSON, time, JavaScript value semantics, findings output. No I/O."""

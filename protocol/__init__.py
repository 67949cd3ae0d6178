"""samedeal's wire protocol: message models, codec and JSON Schema — no I/O."""

"""Players: identities, and the finished races kept for them."""

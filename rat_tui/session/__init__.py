"""The per-session engine: one agent process driving one SessionStore, and its collaborators. No Textual."""

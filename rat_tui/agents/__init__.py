"""The agents rat can start: AgentSpec (what a session launches) and the catalog of known ACP agents."""

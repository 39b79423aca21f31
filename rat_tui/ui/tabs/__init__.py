"""A session tab: its view, tab bar, prompt flow, and the queues of dialogs an agent raises."""

"""The warm server: a per-user process with the agent stack imported that forks a worker
for each one-shot `invincat chat PROMPT` and `invincat --stdio` (docs/warm-server.md)."""

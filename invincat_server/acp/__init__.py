"""`invincat --acp`: the Agent Client Protocol front end (Zed, JetBrains, codecompanion.nvim,
avante.nvim, ...). Uses the runtime only through `Session`; the runtime never imports it."""

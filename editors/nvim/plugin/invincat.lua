-- Invincat: only the :Invincat command lives here; everything loads on first use.
if vim.g.loaded_invincat then
  return
end
vim.g.loaded_invincat = true

vim.api.nvim_create_user_command("Invincat", function(args)
  require("invincat").command(args)
end, {
  nargs = "*",
  range = true, -- `:'<,'>Invincat chat …` sends the lines as the selection
  desc = "Invincat: chat, compose, cancel, plan, memory, threads, approve, reject, new",
  complete = function(arg_lead, line)
    if line:match("^%s*%S+%s+%S+%s") then
      return {} -- only the subcommand is completed; the rest is a prompt
    end
    return vim.tbl_filter(function(name)
      return name:sub(1, #arg_lead) == arg_lead
    end, require("invincat").subcommands())
  end,
})

-- t_svc_rspamd: a rule of our own, run for every message rspamd scans
-- (rspamd loads $LOCAL_CONFDIR/rspamd.local.lua).  The test checks the
-- lines of the callback, weigh and fib.
-- Interpreted, this chunk and every function in it: the test is about
-- rspamd's C frames (realigned ones among them) and the Lua chain under
-- them.  JIT-compiled, fib's samples at a trace's edges still lose their
-- host part (up to 15% of them in a loaded run, issue 25); rspamd's own
-- Lua, whose traces run beside, counts in the rooted share.
jit.off(true, true)
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
-- Not `return fib(...)`: a tail call would replace weigh's frame by
-- fib's, which the callback's call site still names weigh.
local function weigh(task)
  local n = 0
  for _, p in ipairs(task:get_text_parts() or {}) do
    n = n + #(p:get_content() or '')
  end
  local w = fib(21 + n % 3)
  return w
end
rspamd_config:register_symbol({
  name = 'LUW_WEIGH',
  score = 0.0,
  callback = function(task)
    if weigh(task) > 0 then task:insert_result('LUW_WEIGH', 1.0) end
  end,
})

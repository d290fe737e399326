-- t_svc_nvim: Neovim (Debian's, on Debian's libluajit) headless, running
-- nvim_work.tick from a libuv timer of vim.loop: luv calls it from C
-- (lua_pcall) in Neovim's event loop, every millisecond, JIT off.
jit.off()
package.path = 'tests/kernel/svc/?.lua;' .. package.path
local work = require('nvim_work')
local timer = vim.loop.new_timer()
timer:start(1, 1, work.tick)
io.stderr:write('ready\n')

-- t_svc_sysbench's workload: sysbench runs this script in one LuaJIT
-- state per thread and calls event() in a loop.  Each thread loads its
-- work from a chunk named after the thread (@sbwork<tid>.lua), so a
-- sample whose Lua frames mix two threads' chunks is told apart.
-- SVC_JIT=on keeps the JIT on (t_svc_jit); otherwise it is off.
if os.getenv("SVC_JIT") ~= "on" then
	jit.off()
end

local src = [[
local M = {}

local function leaf(n)
	local s = 0
	for i = 1, n do
		s = (s + i * 7) % 1000003
	end
	return s
end

local function mid(n)
	return leaf(n) + 1
end

function M.run(n)
	return mid(n) + mid(n / 2)
end

return M
]]

local work

function thread_init()
	work = assert(load(src, "@sbwork" .. sysbench.tid .. ".lua"))()
end

function event()
	work.run(4000)
end

-- t_svc_nvim's module: tick is what the timer calls (named by the module
-- field that holds it once this chunk has finished), mid and leaf by
-- their definitions in this chunk... or their call sites.
local nvim_work = {}

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

function nvim_work.tick()
	local total = 0
	for i = 1, 20 do
		total = total + mid(20000 + i)
	end
	nvim_work.total = total
end

return nvim_work
